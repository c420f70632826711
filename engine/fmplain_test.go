package engine

import (
	"bytes"
	"dalo/bench/sourcegen"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"cuelang.org/go/cue/ast"

	"dalo/plan"
)

// agreesWithCUE checks that when plainFrontMatter reads src, CUE's YAML
// decoder reads it too, to the same mapping (fmMapping of its syntax
// tree) with every key on the same line, at column 1. It reports whether
// plainFrontMatter read it.
func agreesWithCUE(t *testing.T, src string) bool {
	t.Helper()
	fm, lines, ok := plainFrontMatter(src, nil)
	// Decoded onto a buffer that holds bytes already, as
	// plainFindings's may, the values must be the same.
	dec := []byte("held")
	onto, _, ontoOK := plainFrontMatter(src, &dec)
	dropIndexes(fm)
	dropIndexes(onto)
	if ontoOK != ok || ok && !reflect.DeepEqual(onto, fm) {
		t.Errorf("%q: decoded onto a buffer, read %t %#v; on its own, %t %#v", src, ontoOK, onto, ok, fm)
	}
	if string(dec[:4]) != "held" {
		t.Errorf("%q: decoding onto a buffer changed what it held: %q", src, dec[:4])
	}
	if !ok {
		return false
	}
	file, err := extractYAML("SKILL.md", []byte(src))
	if err != nil {
		t.Errorf("%q: read as plain, but CUE's decoder fails: %v", src, err)
		return true
	}
	want, err := fmMapping(file.Decls)
	if err != nil {
		t.Errorf("%q: read as plain, but fmMapping declines CUE's tree: %v", src, err)
		return true
	}
	if !reflect.DeepEqual(fm, want) {
		t.Errorf("%q:\nplain %#v\nCUE   %#v", src, fm, want)
	}
	if len(lines) != len(fm.fields) {
		t.Errorf("%q: %d lines for %d keys", src, len(lines), len(fm.fields))
		return true
	}
	line := map[string]int{}
	for i, f := range fm.fields {
		line[f.key] = lines[i]
	}
	for _, d := range file.Decls {
		f := d.(*ast.Field)
		name, _, _ := ast.LabelName(f.Label)
		if p := f.Label.Pos(); line[name] != p.Line() || p.Column() != 1 {
			t.Errorf("%q: key %s on line %d, CUE says %d:%d", src, name, line[name], p.Line(), p.Column())
		}
	}
	return true
}

// dropIndexes forgets the key indexes and line tables of s and of the
// mappings in it: both are kept for reuse when a mapping goes back to its
// pool (an index made again when wanted, a line table for the next front
// matter's keys), so that one made from the pool may hold an empty index
// or table where one made afresh holds none; an empty mapping's fields
// likewise.
func dropIndexes(s *fmStruct) {
	if s == nil {
		return
	}
	s.index, s.lines = nil, nil
	if len(s.fields) == 0 {
		s.fields = nil // {} made from the pool, or afresh
	}
	for i := range s.fields {
		dropIndexes(s.fields[i].val.m)
	}
}

// plainRead are front matters plainFrontMatter must read, as CUE's
// decoder does: what bench/sourcegen writes, each kind of block scalar,
// quoted strings, a metadata mapping, lists, comments, CR LF and text
// outside ASCII.
var plainRead = []string{
	// A plain scalar's lines after its first may start with any
	// character but #, as PyYAML's safe_dump wraps a value at a blank.
	"v: a\n  - b\n",
	"v: a\n  'b'\n",
	"v: a\n  \"b\n  c\n",
	"v: a\n  true\n",
	"v: a\n  1.0\n",
	"v: a\n  -\n",
	"v: a\n  `b` *c &d !e |f >g %h @i [j {k ]l }m ,n ?o\n",
	"description: This skill should be used when the user asks to \"create a migration\",\n  \"write a migration\", or needs guidance on `migration.yaml` syntax\n  and `--dry-run` checks - not for one-off scripts.\n",
	"m:\n  a: b\n    - d\n",
	"tools:\n- a\n  - b\n",
	"tools:\n  - Read\n   - Grep\n",
	"hooks:\n  PreToolUse:\n  - matcher: Bash\n    hooks:\n    - type: command\n      command: jq -r .tool_input.command | grep -qE \"rm -rf|git push --force|DROP\n        TABLE\" && echo \"Blocked\" >&2 && exit 2 ||\n        exit 0\n",
	// A block scalar's lines of spaces, no more than its indentation, are
	// empty ones, as a template's indent writes them.
	"description: |\n  a\n  \n  b\n  \n",
	"description: >-\n  a\n \n  b\n",
	"m:\n  a: |\n    x\n    \n    y\n  b: c\n",
	// Lines of spaces alone where an empty line may be, as templates
	// leave them after a value and between paragraphs.
	"name: a\ndescription: b\n  \nlicense: MIT\n",
	"  \nname: a\n   \n",
	"description: |\n  a\n  \n\n  b\n  \nname: x\n",
	"description: |\n  a\n\n  \nname: x\n",
	"metadata:\n  a: b\n  \n  c: d\n  \nname: x\n",
	"tools:\n  - a\n  \n  - b\n  \n",
	"description: a\n  b\n  \nname: x\n",
	"description: 'a\n  b'\n  \nname: x\n",
	"m: [a, b]\n \nname: x\n",
	// Slashes in keys, as Kubernetes-style namespaced keys hold them.
	"metadata:\n  acme.com/owner: x\n  app.kubernetes.io/part-of: y\n",
	"acme.com/owner: x\n",
	"a/: x\n",
	// Flow collections over lines, as PyYAML's default flow style and
	// SnakeYAML's wrap them at 80 columns.
	"v: [a,\n  b]\n",
	"tools: [Read, Grep, Glob, Bash, Edit, Write, WebFetch, WebSearch, TodoWrite, Task,\n    NotebookEdit]\nname: x\n",
	"metadata: {owner: team-2,\n  tier: gold}\n",
	"tools: [a\n  , b]\n",
	"tools: [a\n  b]\n",
	"tools: ['a\n  b', c]\n",
	"tools: [\"a\n  b\", c]\n",
	"m:\n  tools: [a,\n    b]\n  x: y\n",
	"m:\n  env: {A: b,\n    C: d}\n",
	"tools: [a, [b,\n  c]]\n",
	"m: {a: 'x: y',\n  b: \"z\"}\n",
	"allowed-tools: [Bash(git diff:*), Read,\n  Grep]\n",
	// What Prettier writes of a long flow collection or quoted scalar: on
	// the line below its key, an item a line, a comma after the last.
	"a:\n  [\n    b,\n  ]\n",
	"a:\n  [b]\n",
	"a:\n  {\n    b: c,\n  }\n",
	"a:\n  'b'\n",
	"a:\n  \"b\"\n",
	"a:\n  'b\n  c'\n",
	"v:\n  \"a\"\n",
	"m:\n  a:\n    [\n      b,\n    ]\n  c: d\n",
	"m:\n  a:\n    'x'\n",
	"m:\n  a:\n    \"x\n    y\"\n",
	"tools: [Read,]\n",
	"tools: [\"a\",]\n",
	"metadata: {a: b,}\n",
	"m: {\"a\": b,}\n",
	// Flow maps' keys as block maps' are, and plain scalars in flow
	// collections as js-yaml's flowLevel writes them.
	"m: {\"a b\": c}\n",
	"a: {b.c: d}\n",
	"a: {b/c: d}\n",
	"a: {b: c\"d}\n",
	"a: [c \"d\"]\n",
	"tools: [it's]\n",
	"tools: [say \"x\"]\n",
	"a: {b: $c}\n",
	"a: {b: (c)}\n",
	"a:\n- {b: c,\n  d: e}\n",
	"a: {b: ./c}\n",
	"a: [~/x, /y]\n",
	"a:\n  \"b\": c\n",
	// Block scalars that keep their last line breaks (|+), as emitters
	// write a text that ends in an empty line.
	"a: |+\n  x\n",
	"a: |+\n  x\n\n",
	"a: |+\n  x\n\n\nb: y\n",
	"a: |+\n  x\n  \n \nb: y\n",
	"a: >+\n  x\n  y\n\nb: y\n",
	"a: |+\n  x\n\n# c\n\nb: y\n",
	"a: |+\n  x\n\n  y\n\n",
	// A nested block scalar's lines of spaces no longer than its
	// indentation, and quoted values over lines in a flow map.
	"m:\n  a: |\n    x\n    \n",
	"m:\n  a: |\n    x\n  \nn: y\n",
	"m: {a: 'x\n  y', b: c}\n",
	"m: {a: \"x\\\"\n  y\", b: c}\n",
	// Numbers with an exponent, as Go, PyYAML and SnakeYAML write 0.00001.
	"a: 1e-05\nb: 1.0e-05\nc: 1.0E-5\nd: 1e5\ne: 1E+5\nf: -1e-5\ng: 0e0\nh: 1.e5\ni: 9e99\n",
	"m:\n  a: 1e-05\n",
	"v: -1e3\n",
	"name: 1e3\n",
	"m: {a: 1e-05}\n",
	"t: [1e5, 2E-3]\n",
	// The document's end after the last key, as js-yaml, Psych and ruamel
	// write it after a kept block scalar.
	"a: b\n...\n",
	"a: b\n...\n# c\n\n",
	"a: |+\n  x\n\n...\n",
	// Quoted keys of any characters, as no plain key can hold them.
	"metadata:\n  \"acme.com/owner\": team\n  'app.kubernetes.io/part-of': y\n",
	"\"display name\": x\n\"na me\": y\n",
	"\"_x\": 1\n\"#y\": 2\n\"a: b\": 3\n\"a #b\": 4\n\"<<\": 5\n",
	"\"true\": 1\n\"1\": 2\n\"caf\u00e9\": 3\n' a': 4\n'a\"b': 5\n\"a'b\": 6\n",
	// Quoted scalars over lines in a nested block, as PyYAML wraps one.
	"m:\n  a: \"b\n    d\"\n",
	"metadata:\n  short-description: 'Fix CI: pull failing logs, summarize them and\n    propose a fix plan'\n",
	"m:\n  - a: \"x\\\n      y\"\n",
	"proactive: yes\nv: No\nw: y\non: x\nn: OFF\nlist:\n  - yes\n  - n\nflow: [yes, Off]\nm: {y: n}\nname: Off\n",
	"tools: []\n",
	"metadata: {}\n",
	"hooks:\n  PreToolUse:\n    - matcher: Bash\n      # c\n      hooks: []\n",
	// MCP servers as their READMEs list them, and empty lists.
	"name: x\ndisallowedTools: []\nmcpServers:\n  github:\n    command: npx\n    args:\n      - -y\n      - \"@modelcontextprotocol/server-github\"\n      - --read-only\n    env: {}\n  b:\n    args: [ ]\n    env: { }\n",
	"args:\n  - -y\n  - --a-b\n  - -x:y\n",
	"description: 3 ways to review a change\nv: 50% off\nw: 1 2\nx: 0x1F foo\nu: 1.5 x\nz: 07 x\nname: -a\n",
	"description: 3 ways\n  to go\n",
	// Claude Code's subagents configured as its docs show: a timestamp,
	// servers apart, comments in a block, a block scalar in a block.
	"name: x\ncreated: 2025-01-15T10:00:00Z\nmcpServers:\n    github:\n        command: npx\n        args: [\"-y\", \"@modelcontextprotocol/server-github\"]\n\n    sentry:\n        command: npx\n",
	"name: x\nhooks:\n  PreToolUse:\n    # block writes outside the repo\n    - matcher: Bash\n      hooks:\n        - type: command\n          command: ./scripts/guard.sh\n",
	"name: x\nhooks:\n  Stop:\n    - hooks:\n        - type: command\n          command: |\n            ./scripts/summarize.sh --since \"$SESSION_START\"\n",
	"created: 2025-01-15 10:00:00\nupdated: 2025-01-15t10:00:00.5+02:00\nd: 2025-01-15x\ne: 2001-12-14 21:59:43.10 -5\n",
	"metadata:\n  a: b\n\n  c: d\n",
	"metadata:\n  a: b\n# c\n  c: d\n\n# e\n\nname: x\n",
	"hooks:\n  PreToolUse:\n    - matcher: Bash\n\n    - matcher: Read\n",
	"hooks:\n\n  a: x\n",
	"hooks:\n  a:\n    b: |\n      x\n",
	"hooks:\n  a:\n    b: |-\n      x\n\n      # y\n        z\n    c: >\n      p\n      q\n\n      r\n    d: >- # e\n      s\n  f: g\n",
	"hooks:\n  - |\n    x\n  - >-\n     y\n  - a: |\n     b\n",
	"hooks:\n  a: |\n    x\n\n\n  b: z\n",
	"name: x\nhooks:\n  Stop:\n    - hooks:\n        - type: command\n          command: ./scripts/stop.sh --all\n          timeout: 30\n",
	"command: ../bin/run\nhome: ~/bin/x\nv: ./\nw: ./a #c\n",
	"name: x\t\r\ndescription: a\tb \t #c\r\nv: c\t #d\n",
	"name: x  \r\ndescription: Step\t0\tuse when the\tuser asks.  \t\r\nlicense: MIT\t\r\ntools: Read,\tGrep\r\nv: 1.0\t\r\n# a\tcomment\r\n",
	"tools:\n  - 1\n",
	"tools:\n  - a: b\n",
	"tools:\n  - Read\n  -\n",
	"tools:\n- a: b\n",
	"metadata:\n  a:\n    b: c\n",
	"name: x\nhooks:\n  PreToolUse:\n    - matcher: \"Bash\"\n      hooks:\n        - type: command\n          command: \"./check.sh\"\n          timeout: 30\n  Stop:\n    - hooks:\n        - type: prompt\n          prompt: 'Check it''s done'\nmodel: sonnet\n",
	"name: x\nmcpServers:\n  github:\n    command: npx\n    args: [\"-y\", \"@modelcontextprotocol/server-github\"]\n    env:\n      TOKEN: ${GITHUB_TOKEN}\n  local:\n    url: http://localhost:8080 # c\n    enabled: true\n    extra:\n",
	"x:\n  a:\n  - b\n  - c: d\n    e:\n      - f\n  g: {h: i}\n  j: 1.5\n",
	"x:\n  -  a: b\n     c: d\n  -\n    e: f\n  - null\n  -\n",
	"name: x\ndescription: d\n",
	"name: own-0001-skill-0\ndescription: Guidance 0 of package 1, for reviews of its area.\nallowed-tools: Bash(./check.sh:*)\n",
	"name: x\ndescription: >-\n  Use when reviewing. It checks one more thing. \nlicense: Apache-2.0\n",
	"name: x\ndescription: >\n  folded\n  text\n",
	"name: x\ndescription: |\n  literal\n  text:  with: colons # and hashes\n",
	"name: x\ndescription: |-\n    deep\n    text\n",
	"name: x\nmetadata:\n  key-0: \"value 0 of x\"\n  key-1: 'single'\n  k: plain words\n",
	"name: x\ndescription: \"\"\ncompatibility: ''\n",
	"name:    spaced   \ndescription: say \"hi\" and it's {fine} [ok], really\n",
	"Name: x\nDESCRIPTION: d\nnan: inf\n",
	"name: yes please\ndescription: null pointer\n",
	"name: x\r\ndescription: d\r\n",
	"name: x\r\ndescription: >-\r\n  folded\r\n  text\r\nmetadata:\r\n  k: 'v'\r\n",
	"name: x\ndescription: mixed\r\nlicense: MIT\n",
	"name: caf\u00e9\n",
	"name: \u00e9t\u00e9\n",
	"name: x\ndescription: \"Relecture \u00e0 la fran\u00e7aise \u2014 \u691c\u67fb\"\nmetadata:\n  note: \u00fcber \U0001F600\n",
	"name: x\ndescription: |\n  \u00e9t\u00e9\n  \u00a0nbsp\n",
	"name: x\nallowed-tools:\n  - Bash(./check.sh:*)\n  - Read\n  - 'Grep'\n",
	"name: x\ntools:\n    - Read\ndescription: d\n",
	"name: x\ntools: [Read, Grep, Glob]\n",
	"name: [a]\n",
	"name: x\nallowed-tools: [Bash(./check.sh:*), Read, Grep]\n",
	"name: x\ntools: [\"Read\", \"Grep\"]\n",
	"name: x\nallowed-tools: [\"Bash(test -f .claude/x.md:*)\", 'Read, and more', \"[a]\" , plain]\n",
	"name: x\nargument-hint: <required-arg> [optional-arg]\nversion: 1.0.0\n",
	"name: 1.2.0\n",
	"name: x\n  continued\n",
	"name: x\ndescription: Use when the user   \n     asks for (it) \n  or <this>\nlicense: MIT\n",
	"name: x\r\ndescription: two\r\n  lines\r\n",
	"name: x\npath: /usr/bin\nexpr: (a b)\nvar: $HOME\nv: 10.20.30.40\n",
	"name: x\nallowed-tools: [Bash(git diff:*) , mcp__s__t, a/b.c*, x:y, caf\u00e9 au lait]\n",
	"name: x\ntools: [ Read,Grep , mcp-1.2_x ]\nmodel: sonnet\n",
	"# a skill\nname: x\n# its summary\ndescription: d\n#\n",
	"name: x\ndescription: |\n  text\n# after the text\nlicense: MIT\n",
	"name: x\r\n# CR LF\r\ntools:\r\n  - Read\r\n",
	"name: \"esc\\tape\"\n",
	"name: x\ndescription: \"Use this agent when the code changed. Examples:\\n\\n<example>\\nContext: A change.\\nuser: \\\"Check it\\\"\\nassistant: \\\"I'll use the agent.\\\"\\n</example>\"\ntools: Read, Grep\n",
	"name: x\ndescription: \"\\\\ \\\" \\' \\0 \\a \\b \\t \\n \\v \\f \\r \\e \\  \\N \\_ \\L \\P\"\n",
	"name: x\ndescription: \"caf\\u00e9 \\x41\\x7f\\xe9 \\U0001F600 \\uFEFF \\u0000\"\n",
	"name: x\ndescription: \"#not a comment\" \nmetadata:\n  k: \"v\\tw\"\n",
	"name: x\ntools: [\"a\\\"b\", \"c\\u00e9\"]\n",
	"name: x\ndescription: >-\n  wrapped at a\n   space, and on\n  and on\nlicense: MIT\n",
	"name: x\ndescription: >\n  a\n   b\n    c\n  d\n   e\n",
	"name: x\ndescription: |-\n  a\n    b  \n  c\n",
	"name: x\ndescription: >-\n   indented first\n   then alike\n",
	"name: 1\n",
	"name: ~\n",
	"version: 1.0\n",
	"metadata:\n  a: 1\n",
	"description: >\n  a\n\n  b\n",
	"description: >\n  a\n\n  b\n   c\n",
	"description: |\n  a\n\n",
	"name: x\n\ndescription: |\n  First paragraph.\n\n  Second, after one empty line.\n\n\n  Third.\n\nlicense: MIT\n\n",
	"name: x\ndescription: >-\n  a\n  b\n\n  c\n\n\n  d\n   indented\n\n  e\n\n   f\n  g\ntools: Read\n",
	"name: x\r\n\r\ndescription: >\r\n  a\r\n\r\n  b\r\n",
	"name: 'it''s'\n",
	"name: x\ndescription: 'It''s what yaml.dump writes: ''quoted'' words, and '''' two'\nmetadata:\n  k: 'a''b'\n  l: ''''\n",
	"tools:\n- Read\n",
	"allowed-tools:\n- Read\n- 'Grep'\ndescription: 'Use when: the user asks for a review of the code and wants a thorough\n  check of every file, it''s said.'\nlicense: MIT\nname: x\n",
	"name: x\ndescription: 'a\n\n  b\n\n\n    c  \n  d'\n",
	"name: x # comment\n",
	"name: x\nmodel: sonnet  # or opus\ncolor: 'blue' # the badge\nnote: \"a # b\" #c\nmetadata:\n  k: v # w\n  count: 1 # one\ntools:\n  - Read # reads\nflag: true # yes\n",
	"version: 2001-12-14\n",
	"v: \"a\n  b\"\n",
	"name: \"a\\\n  b\"\n",
	"name: {a: b}\n",
	"name: x\ndescription: \"V\\xE9rifie la revue \\u2014 \\u30EC\\u30D3\\u30E5\\u30FC: use when\\\n  \\ reviewing area 1 of package 1; checks naming, layout and the tests the team\\\n  \\ cares about. Trigger on review, audit, lint.\"\nlicense: MIT\n",
	"name: x\ndescription: \"one\n\n  two  \n  three\\\\\n  four\"\n",
	"\"name\": x\n'description': \"d\"\n\"allowed-tools\": [Read, Grep]  # read only\nmetadata: {author: \"team\", version: '1.0', count: 3, flag: true, none: null, plain: words here} # c\nupdated: 2025-01-02\n",
	"'name': x\n",
	"tools: [a] # c\n",
	"name: x\ndisable-model-invocation: true\nuser-invocable: false  \nlicense:\nmodel: ~\nnote: null\n",
	"name: x\nmetadata:\n  version: 1.0\n  count: 3\n  zero: 0\n  ratio: 0.25\n  flag: false\n  none: null\n  empty:\n",
	// Qwen Code's and Gemini CLI's subagents: negative numbers.
	"name: x\nmax_turns: -1\ntemperature: -0.5\nrunConfig:\n  max_turns: -1\n  t: -0\nm: {a: -1, b: -2.5}\n",
	// Comments after a key whose value is on the lines below it, and
	// after a block scalar's header.
	"metadata:  # owned by the platform team\n  a: b\ntools:  # x\n  - Read\n  - Grep\ndescription: >-  # folded\n  folded\n  text\nlicense: |  # kept\n  MIT\n",
	"a: # nothing yet\nb:\n  c: # nothing\n  d: e\nhooks: # h\n  PreToolUse:  # p\n    - matcher: Bash  # m\n      hooks:  # inner\n        - type: command\n          command: x\n",
	// A plain scalar that starts on the line after its key, as
	// Prettier wraps a long description.
	"name: x\ndescription:\n  Use this skill when the user asks for a review of a change,\n  and not otherwise.\nlicense: MIT\n",
	"description:\n    one\n  two\n",
	// Values that start with a digit and are no number YAML has.
	"version: 1.4.0-beta.2\ntimeout: 30s\nwindow: 1h30m\nshare: 100%\nnet: 10.0.0.1/8\nat: 9am\n",
	// A list of mappings at its key's indentation, as PyYAML writes it.
	"handoffs:\n- agent: x\n  label: y\n- agent: z\n  label: w\n  prompt: p\nname: a\n",
	// Read since the twentieth session.
	"v: 0x1g\n",
	"name: # c\n",
	"tools:\n  -Read\n",
	"version: 1.0.0-rc1\n",
	// JSON pasted into a front matter: quoted keys, flow collections in
	// each other.
	"name: x\nmcpServers: {\"github\": {\"command\": \"npx\", \"args\": [\"-y\", \"@modelcontextprotocol/server-github\"], \"env\": {\"GITHUB_TOKEN\": \"${GITHUB_TOKEN}\"}}}\nmetadata: {\"author\":\"dev\",\"n\":-1,\"ok\":true,\"none\":null,\"tags\":[]}\n",
	"metadata: {github: {command: npx, args: [y, x]}, b: {}, c: [a, [b, c], {d: e}]}\n",
	"m: {'a': 'b', \"c\" : d}\nhooks:\n  Stop:\n    - {type: command, \"command\": {x: y}}\n",
	"tools: [[a]]\n",
	"tools: ['it''s']\n",
	"metadata: {a: {b: c}}\n",
	"metadata: {a: [b]}\n",
	"metadata: {\"a\": b}\n",
	"name: x\ndisable-model-invocation: True\nuser-invocable: FALSE\nmodel: Null\nschedule: 09:30\nat: 1:2:3\nmetadata:\n  com.acme.owner: x\n  a..b: y\nargs: [-y, --read-only, -1]\n",
	"name: True\n",
	"tools: [-a]\n",
	"v: [-y]\n",
	// A plain scalar that goes on over lines in a nested block.
	"metadata:\n  summary: a long text\n    that goes on\n      and on\n  b: c\nhooks:\n  - matcher: Bash\n    note: checks the\n      command\n",
	"tools:\n  - Read\n    more\n",
	"hooks:\n  a:\n    b: x\n      y\n",
}

// plainDeclined are front matters it must leave to CUE's decoder:
// anything YAML may read as another type or otherwise than it looks.
var plainDeclined = []string{
	"m:\n  a: b # c\n    d\n",
	"m:\n  a: b\n\n    d\n",
	"m:\n  a: b\n    # c\n    d\n",
	"m:\n  a: b\n    c: d\n",
	"v: tRUE\n",
	"v: [- y]\n",
	"v: [-]\n",
	".a: x\n",
	"m: {a: {b: c}\n",
	"m: {a: b}}\n",
	"m: {\"a\" b}\n",
	"m: {\"a\": }\n",
	"m: {\"a\": 1, \"a\": 2}\n",
	"m: [a, {b: c]\n",
	"m: {a: [b}\n",
	"m: {a:b}\n",
	"v: 1e3x\n",
	"v:\n  a\n  # c\n  b\n",
	"v:\n  a\n\n  b\n",
	"v:\n  a #c\n",
	"v: |x\n  a\n",
	"v: >-# x\n  a\n",
	"v: -01\n",
	"v: -1.\n",
	"v: .\n",
	"v: .x\n",
	"v: .NaN\n",
	"v: ~x\n",
	"v: ./a: b\n",
	"name:\tx\n",
	"name: \tx\n",
	"name\t: x\n",
	"\tname: x\n",
	"a: b\t#c\n",
	"a: b:\tc\n",
	"a: 'b\tc'\n",
	"a: [b,\tc]\n",
	"a: |\n  b\tc\n",
	"a:\n  b: c\td\n",
	"a: b\tc\n  d\n",
	"\t\nname: x\n",
	"",
	"name: x",
	"name: x\tdescription: d\n",
	"name: x\rdescription: d\n",
	"name: x\r\r\n",
	"name: x\u0085y\n",
	"name: x\u2028y\n",
	"name: x\u2029y\n",
	"name: x\ufeffy\n",
	"name: x\u0080y\n",
	"name: x\xffy\n",
	"name: x\xc3\n",
	"name: x\x7fy\n",
	"name: .inf\n",
	"name: 012\n",
	"name: 1.\n",
	"name: 1234567890123456789\n",
	"name: 0.5.\n",
	"name: x\nname: y\n",
	"true: x\n",
	"_x: 1\n",
	"name: x #\n  y\n",
	"name: 'x'# c\n",
	"# comment\n",
	"# comment\n# more\n",
	"  # indented\nname: x\n",
	"name: x\n  # indented\n",
	"description: 'a\n  b' c\n",
	"description: 'a\n   \n  b'\n",
	"description: 'a\n  b\n",
	"tools:\n  - Read\n  k: v\n",
	"tools: [Read, , Grep]\n",
	"tools: [a: b]\n",
	"tools: [Read] x\n",
	"tools: [Read\n",
	"tools: [a: b]\n",
	"tools: [a:]\n",
	"tools: [a:, b]\n",
	"tools: [a #b]\n",
	"tools: [a?, b]\n",
	"tools: [a {b}]\n",
	"tools: [*a]\n",
	"tools: [&a b]\n",
	"tools: [!t b]\n",
	"tools: [\"a\" b]\n",
	"tools: [\"a\": b]\n",
	"tools: [\"a]\n",
	"version: 1..0\n",
	"version: 0x1f\n",
	"v: <<\n",
	"v: ~x\n",
	"v: .5\n",
	"v: %x\n",
	"v: @x\n",
	"v: `x\n",
	"v: =\n",
	"v: a\n  b: c\n",
	"v: a\n  b:\n",
	"v: a\n  b #c\n",
	"v: a\n  # c\n",
	"v: 'a'\n  b\n",
	"v: a\n  \n  b\n",
	"v: a\n\n  b\n",
	"name: a: b\n",
	"name: a:\n",
	"name: 'open''\n",
	"description: \"a\\x4\\\n  1\"\n", // an escape the break cuts
	"description: \"a\\u00e\\\n  9\"\n",
	"description: \"a\\U0001F60\\\n  0\"\n",
	"name: \"a\\ \n  b\"\n",
	"name: \"a\\\n\n  b\"\n",
	"name: \"a\" b\n  c\"\n",
	"metadata: {a:b}\n",
	"metadata: {a: b, a: c}\n",
	"tools: [a, '#b] # c']\n",
	"\"a\\\"b\": x\n",
	"'a':x\n",
	"updated: 2025-1-02\n",
	"name: 'a''b' c\n",
	"name: \"esc\\/ape\"\n", // YAML 1.1 has no \/
	"name: \"esc\\qape\"\n",
	"name: \"a\\\n",
	"name: \"a\\x4\"\n",
	"name: \"a\\x4g\"\n",
	"name: \"a\\u00e\"\n",
	"name: \"a\\u+0e9\"\n",
	"name: \"a\\ud800\"\n",
	"name: \"a\\U00110000\"\n",
	"name: \"a\\\"\n",
	"name: \"a\\\" b\n",
	"tools: [\"a\\/b\"]\n",
	"name: \"open\n",
	"name: \"a\" b\n",
	"name: &a x\n",
	"name: !!str x\n",
	"description: |2\n  explicit\n",
	"description: >\n  a\n     \n  b\n", // a line of spaces alone
	"description: |\n  a\n     \n  b\n",
	"description: |\n  \n  a\n",
	"m:\n  a: 'b\n\n    c'\n",
	"m:\n  a: 'b\n    c' d\n",
	"m:\n  a: 'b\n  c'\n",
	"m:\n  a: \"b\n    # c\"\n",
	"/a: x\n",
	// A nested block scalar's lines of spaces past the block, longer than
	// its indentation: spaces of its text (found in review).
	"m:\n  a: |\n    x\n     \n",
	"m:\n  a: |-\n    x\n     \n",
	"m:\n  a: >\n    x\n     \n",
	"m:\n  a: |\n    x\n     \n# c\nn: y\n",
	"m:\n  a:\n    b: |\n      x\n       \n",
	// A quoted key over lines in a flow collection: YAML holds a key on
	// one line (found in review).
	"m: {\"a\"\n  : b}\n",
	"m: {'a'\n  : b}\n",
	"m: {\"a\n  b\": c}\n",
	"m: {a: b, 'c\n  d': e}\n",
	"t: [{\"a\"\n  : b}]\n",
	"m:\n  k: {\"a\"\n   : b}\n",
	"d:\n  {\"a\"\n  : b}\n",
	"m: {a: 'it''s\n  y': c}\n",
	// After the document's end, a tab or a blank outside ASCII is no
	// blank to YAML (found in review).
	"a: b\n...\n\t\n",
	"a: b\n...\n\t# c\n",
	"a: b\n...\n\u00a0\n",
	"a: 1e\n", // no number, or one past a float64
	"a: 1e+\n",
	"a: 1e5.5\n",
	"a: 01e5\n",
	"a: 1e400\n",
	"a: 1e-400\n",
	"a: 1e+-5\n",
	"a: b\n...\nc: d\n", // a second document
	"a: b\n... \n",
	"...\n",
	"a: [,]\n",
	"a: [a,,]\n",
	"a: {,}\n",
	"a: {\"b\\\"c\": d}\n",
	"a:\n  'b'\n# c\n  d\n",
	"tools: [a,\n\n  b]\n", // a line break a scalar would keep
	"tools: [a, # c\n  b]\n",
	"tools: [a,\n  b] # c\n",
	"tools: [\"a\\\n  b\"]\n",
	"tools: [a,\n  b],\n",
	"tools: [a,\n  b] c\n",
	"tools: [a,\nb]\n",
	"h:\n  a: |+\n    x\n\n  b: c\n",
	"a: |+\n  x\n   \n",
	"description: a\n  \n  b\n", // an empty line in a plain scalar
	"A: >\n 0\n  \n",            // a line of a space of text after
	"h:\n  a: |\n    x\n      \n  b: c\n",
	"description: 'a\n  \n  b'\n",
	"\"a\\tb\": x\n", // an escape in a key
	"'a''b': x\n",
	"\"\": x\n",
	"name: x\ndescription: a\n\n  b\n",
	"metadata:\n  a: b\n   c: d\n",
	"metadata:\n  a: b\n  a: c\n",
	"v: -\n",
	"v: -.5\n",
	"v: --1\n",
	"v: -.inf\n",
	"v: - x\n",
	"v: 1\n  2\n",
	// Nested blocks read only where sure.
	"hooks:\n  a: |\n\n    x\n", // a block scalar's first line empty
	"hooks:\n  a: |+\n    x\n",
	"hooks:\n  a: |2\n     x\n",
	"hooks:\n  a: |\n    x\n     \n    y\n", // a line of spaces alone
	"hooks:\n  a: |\n",
	"hooks:\n  a: |\n  b: x\n",
	"hooks:\n  a: |\n    x\n   y\n",
	"hooks:\n  a: x\n\n    y\n",
	"hooks:\n  a: x\n    # c\n    y\n",
	"hooks:\n  a: \"x\n  # y\"\n",
	"hooks:\n  a: [x,\n  # c\n    y]\n",
	"updated: 2025-01-1\n",
	"hooks:\n  a:\n    - - x\n",
	"hooks:\n  a:\n    - b: x\n     c: y\n",
	"hooks:\n  a:\n    - b: x\n       c: y\n",
	"hooks:\n  a:\n     b: x\n    c: y\n",
	"hooks:\n  a:\n    b: x\n  - c\n",
	"hooks:\n  a:\n    b: x\n    b: y\n",
	"hooks:\n  a:\n    b: &x y\n",
	"hooks:\n  a:\n    b: *x\n",
	"hooks:\n  a:\n    - x\n    y: z\n",
	"- a\n",
	"? a\n: b\n",
	strings.Repeat("k", 1025) + ": v\n", // past a key's 1024 characters
	"\"" + strings.Repeat("k", 1030) + "\": v\n",
	"'" + strings.Repeat("k", 1030) + "': v\n",
	"m: {" + strings.Repeat("k", 1030) + ": v}\n",
	"metadata:\n  " + strings.Repeat("k", 1025) + ": v\n",
}

// TestPlainFrontMatter holds plainFrontMatter to CUE's YAML decoder on
// plainRead, plainDeclined and every front matter of the test data.
func TestPlainFrontMatter(t *testing.T) {
	for _, s := range plainRead {
		if !agreesWithCUE(t, s) {
			t.Errorf("%q: not read as plain, want it read", s)
		}
	}
	for _, s := range plainDeclined {
		if _, _, ok := plainFrontMatter(s, nil); ok {
			t.Errorf("%q: read as plain, want it left to CUE's decoder", s)
		}
	}
	v := &sourceCheck{rules: &Rules{Limits: plan.DraftLimits}}
	n, plain := 0, 0
	for name, data := range frontMatterCorpus(t) {
		var head diagList
		fm, _, ok := v.frontMatter(name, textOf(data), &head)
		if !ok {
			continue
		}
		n++
		if agreesWithCUE(t, fm) {
			plain++
		} else if published(name) {
			t.Errorf("%s: a published front matter not read as plain:\n%s", name, fm)
		}
	}
	t.Logf("%d of the test data's %d front matters read as plain", plain, n)
}

// published reports whether the test data file name is a skill or agent
// as published (the Claude Code plugins and the skills corpus), not one
// written to break a rule: every one of those is read the plain way,
// as lists of tools, quoted or not, and version numbers are.
func published(name string) bool {
	return strings.Contains(name, "claude-plugins/") || strings.Contains(name, "/corpus/")
}

// FuzzPlainFrontMatter holds plainFrontMatter to CUE's YAML decoder on
// anything it reads.
func FuzzPlainFrontMatter(f *testing.F) {
	for _, s := range []string{
		"name: x\ndescription: d\n",
		"name: x\ndescription: >-\n  a\n  b \n",
		"name: x\ndescription: >-\n  a\n   b\n  c\n",
		"\"name\": x\ndescription: \"caf\\xE9 \\u2014 a long\\\n  \\ line, and\n  more\"\nmetadata: {a: \"b\", c: 1.0} # d\ntools: [Read] # e\nupdated: 2025-01-02\n",
		"name: x # c\nmodel: 'a''b' # d\nmetadata:\n  k: \"v\\n\" # e\n",
		"allowed-tools:\n- Read\ndescription: 'Use when: it''s\n  wrapped\n\n  so.'\nname: x\n",
		"name: 'a''b'\nmetadata:\n  k: ''''''\n",
		"name: x\n\ndescription: >\n  a\n\n   b\n\n\n  c\nlicense: |-\n  d\n\n  e\n\n",
		"name: x\ndescription: >\n  a\n     \n  b\n",
		"name: x\ndescription: |\n  a: b\n  c\n",
		"name: x\nmetadata:\n  k: \"v\"\n  l: 'w'\n",
		"name: a b c\nallowed-tools: Bash(git diff:*) Read\n",
		"name: x\r\ndescription: >-\r\n  caf\u00e9\r\n  \u691c\u67fb\r\n",
		"name: \u00fcber\nmetadata:\n  k: \u2014 \U0001F600\n",
		"name: x\nallowed-tools: [Bash(git diff:*), Read]\n",
		"name: x\ndescription: one line\n  and <two> (2)\n",
		"name: x\ntools: [\"Read\", 'Grep, Glob']\nargument-hint: <arg> [more]\nversion: 1.0.0\n",
		"# c\nname: x\ntools:\n  - Read\n  - Grep\nagents: [a, b]\n",
		"name: x\ndescription: \"a\\n\\\"b\\\" \\u00e9\\x41\\U0001F600 \\N\\_\\L\\P \\0\\e\"\ntools: [\"c\\td\"]\n",
		"name: x\nhooks:\n  PreToolUse:\n    - matcher: \"Bash\"\n      hooks:\n        - type: command\n          command: \"./check.sh\"\n",
		"x:\n  a:\n  - b\n  - c: d\n    e:\n      - f\n  g: {h: i}\n",
		"x:\n  -  a: b\n     c: d\n  -\n    e: f\n  - null\n",
		"c: ./a.sh\nd:\n  - ../b ~/c\ne: ~/d # f\n",
		"a: []\nb: {}\nc:\n  d:\n    - -y\n    - --e\n    f: { }\nd: 3 ways\n",
		"created: 2025-01-15T10:00:00Z\nm:\n    a:\n        b: c\n\n    d:\n        e: f\n# g\n    h: i\n",
		"h:\n  p:\n    # c\n    - m: B\n      h:\n        - t: c\n          c: |\n            ./s.sh \"$X\"\n\n            # y\n          u: >-\n            v\n            w\n",
		"name: x\t\r\ndescription: a\tb \t c\t\r\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		agreesWithCUE(t, s)
	})
}

// TestGeneratedFrontMatterIsPlain checks that validating sources of every
// bench/sourcegen shape with skills and agents reads no front matter with
// CUE's YAML decoder.
func TestGeneratedFrontMatterIsPlain(t *testing.T) {
	for _, shape := range generatedShapes {
		dir := filepath.Join(t.TempDir(), shape.name)
		if err := shape.write(dir, 3); err != nil {
			t.Fatal(err)
		}
		before := yamlExtracted.Load()
		rep, err := Validate(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Valid {
			t.Fatalf("%s: generated source invalid: %v", shape.name, rep.Diagnostics)
		}
		if n := yamlExtracted.Load() - before; n != 0 {
			t.Errorf("%s: CUE's YAML decoder read %d front matters, want 0", shape.name, n)
		}
	}
}

// The front matter of every skill and agent of the generated crew and
// skills shapes is proved where it was read (plainFindings), in the
// reused buffer, its YAML never copied out; a front matter that breaks a
// rule is still reported from a copy, at its line.
func TestFrontMatterProvedInPlace(t *testing.T) {
	for _, shape := range []struct {
		name  string
		write func(string, int) error
		files int // skills and agents a package
	}{{"crew", sourcegen.WriteCrew, 13}, {"skills", sourcegen.WriteSkills, 7}} {
		dir := filepath.Join(t.TempDir(), shape.name)
		if err := shape.write(dir, 3); err != nil {
			t.Fatal(err)
		}
		before := frontMattersProved.Load()
		rep, err := Validate(dir, Options{})
		if err != nil || !rep.Valid {
			t.Fatalf("%s: %v %v", shape.name, err, rep.Diagnostics)
		}
		if n := frontMattersProved.Load() - before; n != int64(3*shape.files) {
			t.Errorf("%s: %d front matters proved in place, want %d", shape.name, n, 3*shape.files)
		}
	}
	dir := filepath.Join(t.TempDir(), "crew")
	if err := sourcegen.WriteCrew(dir, 1); err != nil {
		t.Fatal(err)
	}
	agent := filepath.Join(dir, "agents", "crew-0000-reviewer-1.md")
	data, err := os.ReadFile(agent)
	if err != nil {
		t.Fatal(err)
	}
	broken := strings.Replace(string(data), "name: crew-0000-reviewer-1\n", "name: Crew_Reviewer\n", 1)
	if err := os.WriteFile(agent, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := Validate(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, d := range rep.Diagnostics {
		// An optional member's findings are told in its omission's.
		if strings.Contains(d.Message, "agents/crew-0000-reviewer-1.md:2:1: E088 agent name Crew_Reviewer") {
			found = true
		}
	}
	if !found {
		t.Errorf("no diagnostic at line 2 of the agent whose name is Crew_Reviewer: %v", rep.Diagnostics)
	}
}

// TestFrontMatterFindingsReadOnce: a skill or agent whose front matter
// the program reads plain and finds something in is reported from that
// one run, not proved first and then read and run again; each finding
// keeps its line, and its text outlives the buffer the file was read in.
func TestFrontMatterFindingsReadOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "skills")
	if err := sourcegen.WriteSkills(dir, 2); err != nil {
		t.Fatal(err)
	}
	edit := func(rel, old, new string) {
		t.Helper()
		name := filepath.Join(dir, filepath.FromSlash(rel))
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), old) {
			t.Fatalf("%s holds no %q", rel, old)
		}
		if err := os.WriteFile(name, []byte(strings.Replace(string(data), old, new, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	edit("skills/sk-0000-s0/SKILL.md", "license: Apache-2.0\n", "license: Apache-2.0\ncontext: fork\nagent: Explore\n")
	edit("agents/sk-0001-reviewer.md", "name: sk-0001-reviewer\n", "name: Sk_0001_Reviewer\n")
	rep, n := validateCounted(t, dir, &frontMatterRuns)
	if n != 2*7 {
		t.Errorf("the front matter program ran %d times on 14 files, want 14", n)
	}
	var got []string
	for _, d := range rep.Diagnostics {
		got = append(got, d.String())
	}
	for _, want := range []string{
		"skills/sk-0000-s0/SKILL.md:6:1: warning W087 context: unknown front matter key context;",
		"skills/sk-0000-s0/SKILL.md:7:1: warning W087 agent: unknown front matter key agent;",
		"agents/sk-0001-reviewer.md:2:1: E088 agent name Sk_0001_Reviewer",
	} {
		if !strings.Contains(strings.Join(got, "\n"), want) {
			t.Errorf("no diagnostic %q in\n%s", want, strings.Join(got, "\n"))
		}
	}
}

// TestPlainFrontMatterAllocs holds the reading of a generated skill's
// front matter to five allocations (its mapping and lines, the metadata
// mapping, the folded description): the lines are walked in the string
// it is given, not split into a slice of their own or copied, and a
// mapping's keys and values are held in one slice, not a map. It made
// eleven, then six.
func TestPlainFrontMatterAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates: counted without it")
	}
	_, src := generatedSkill(t)
	if _, _, ok := plainFrontMatter(src, nil); !ok {
		t.Fatal("plainFrontMatter does not read a generated front matter")
	}
	if n := testing.AllocsPerRun(100, func() { plainFrontMatter(src, nil) }); n > 5 {
		t.Errorf("plainFrontMatter made %v allocations, want at most 5", n)
	}
}

// TestClosesFrontMatter holds closesFrontMatter to what frontMatterSpan
// asked before: bytes.TrimRight(line, "\r \t") == "---".
func TestClosesFrontMatter(t *testing.T) {
	for _, s := range []string{"", "-", "--", "---", "----", "--- ", "---\t\r", "---\r\r \t", "--- x", "---x", " ---", "---\n", "-- -", "---\v", "---\u00a0"} {
		want := string(bytes.TrimRight([]byte(s), "\r \t")) == "---"
		if got := closesFrontMatter([]byte(s)); got != want {
			t.Errorf("closesFrontMatter(%q) = %t, want %t", s, got, want)
		}
	}
}

// TestYAMLWord holds yamlWord, which turns most strings away by their
// length and first byte, to folding each to its words: every string of
// up to four bytes drawn from its words' letters in either case and a few
// others, and the longer words with each case of each letter.
func TestYAMLWord(t *testing.T) {
	words := []string{"true", "false", "null"}
	check := func(s string) {
		want := false
		for _, w := range words {
			want = want || strings.EqualFold(s, w)
		}
		if got := yamlWord(s); got != want {
			t.Fatalf("yamlWord(%q) = %t, want %t", s, got, want)
		}
	}
	const alphabet = "yYnNeEsSoOfFtTrRuUaAlLx0-"
	var walk func(s string)
	walk = func(s string) {
		check(s)
		if len(s) < 4 {
			for i := range len(alphabet) {
				walk(s + alphabet[i:i+1])
			}
		}
	}
	walk("")
	for _, w := range []string{"false", "falsey", "fals", "nulls", "trues"} {
		for mask := range 1 << len(w) {
			b := []byte(w)
			for i := range b {
				if mask&(1<<i) != 0 {
					b[i] -= 'a' - 'A'
				}
			}
			check(string(b))
		}
	}
}

// TestPlainFrontMatterReused: a generated skill's front matter read and
// released (releasePlain, as checkFrontMatter does once its program has
// run) allocates only its folded description, the one string it makes:
// its mappings and line table are those the front matter before it
// released. It allocated five each time: what a run of 1,000 skills-shape
// packages faulted in.
func TestPlainFrontMatterReused(t *testing.T) {
	if raceEnabled {
		t.Skip("under the race detector sync.Pool drops what it is given at random")
	}
	_, src := generatedSkill(t)
	if n := testing.AllocsPerRun(100, func() {
		fm, lines, ok := plainFrontMatter(src, nil)
		if !ok {
			t.Fatal("plainFrontMatter does not read a generated front matter")
		}
		releasePlain(fm, lines)
	}); n > 1 {
		t.Errorf("reading and releasing a front matter made %v allocations, want at most 1", n)
	}
}

// TestPlainFrontMatterReusesIndex: a mapping of more keys than are
// looked up one by one (a metadata map of 60) keeps the index of its keys
// when released, and the next reuses it: the index was made again for
// each front matter, and grown from 34 keys to its size, the most of the
// time a front matter of long metadata took.
func TestPlainFrontMatterReusesIndex(t *testing.T) {
	if raceEnabled {
		t.Skip("under the race detector sync.Pool drops what it is given at random")
	}
	var b strings.Builder
	b.WriteString("name: meta\ndescription: Use when the metadata is long.\nmetadata:\n")
	for k := range 60 {
		fmt.Fprintf(&b, "  key-%d: \"value %d\"\n", k, k)
	}
	src := b.String()
	if n := testing.AllocsPerRun(100, func() {
		fm, lines, ok := plainFrontMatter(src, nil)
		if !ok {
			t.Fatal("plainFrontMatter does not read a metadata map")
		}
		m, held := fm.get("metadata")
		if !held || m.m == nil || len(m.m.fields) != 60 {
			t.Fatalf("metadata %+v", m)
		}
		if v, held := m.m.get("key-59"); !held || v.s != "value 59" {
			t.Fatalf("metadata.key-59 = %+v, %t", v, held)
		}
		releasePlain(fm, lines)
	}); n > 0 {
		t.Errorf("reading and releasing a front matter of 60 metadata keys made %v allocations, want none", n)
	}
}

// TestHooksBlockReusesMappings: an agent's hooks: block (Claude Code's:
// events, each a list of matchers, each with a list of commands) is read
// into mappings taken from the pool and given back, those inside lists at
// once (the rules read no list's items): a mapping made for each item was
// a third of validating packages of six such agents.
func TestHooksBlockReusesMappings(t *testing.T) {
	if raceEnabled {
		t.Skip("under the race detector sync.Pool drops what it is given at random")
	}
	var b strings.Builder
	b.WriteString("name: a\ndescription: d\nhooks:\n")
	for _, event := range []string{"PreToolUse", "PostToolUse", "Stop", "SubagentStop"} {
		fmt.Fprintf(&b, "  %s:\n    - matcher: \"Edit|Write\"\n      hooks:\n        - type: command\n          command: ./scripts/%s.sh\n          timeout: 30\n", event, event)
	}
	src := b.String()
	if n := testing.AllocsPerRun(100, func() {
		fm, lines, ok := plainFrontMatter(src, nil)
		if !ok {
			t.Fatal("plainFrontMatter does not read the hooks block")
		}
		if h, held := fm.get("hooks"); !held || h.m == nil || len(h.m.fields) != 4 {
			t.Fatalf("hooks %+v", h)
		}
		releasePlain(fm, lines)
	}); n > 10 {
		// The block's lines, and room for more fields in a mapping
		// taken from the pool with less: 41 when each was made anew.
		t.Errorf("reading and releasing a hooks block of four events made %v allocations, want at most 10", n)
	}
}

// plainWordAgrees checks that a word plainWord takes is read by the
// longer way as the same string, neither null, a boolean nor a number.
func plainWordAgrees(t *testing.T, s string) bool {
	if !plainWord(s) {
		return false
	}
	if v, ok := oneLineScalar(withoutComment(s), nil); !ok || v != s || plainOpaque(s) {
		t.Errorf("plainWord(%q), but oneLineScalar reads %q, %t, and plainOpaque says %t", s, v, ok, plainOpaque(s))
	}
	return true
}

func TestPlainWord(t *testing.T) {
	for _, tc := range []struct {
		s    string
		word bool
	}{
		{"Read", true}, {"mcp__server_0__tool_12", true}, {"guide-0", true}, {"command", true},
		{"claude-sonnet-4.5", true}, {"x", true}, {"Nope", true},
		{"no", true}, {"No", true}, {"off", true}, {"y", true}, // strings to YAML 1.2 and CUE
		{"", false}, {"null", false}, {"TRUE", false}, {"False", false}, {"nulL", false},
		{"0.5", false}, {"1.0.0", false}, {"_x", false}, {"-x", false}, {".x", false}, {"a b", false},
		{"a:", false}, {"a:b", false}, {"a#b", false}, {"a ", false}, {"Bash(git:*)", false}, {"caf\u00e9", false},
		{"a\tb", false}, {"'a'", false}, {"a,b", false},
	} {
		if got := plainWordAgrees(t, tc.s); got != tc.word {
			t.Errorf("plainWord(%q) = %t, want %t", tc.s, got, tc.word)
		}
	}
}

// FuzzPlainWord holds plainWord to oneLineScalar on anything it takes.
func FuzzPlainWord(f *testing.F) {
	for _, s := range []string{"Read", "no", "a.b-c_d", "On", "nULL", "x1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { plainWordAgrees(t, s) })
}

// TestClaudeAgentFrontMatterAllocatesNothing holds reading a subagent of
// Claude Code's full style, and releasing it as checkFrontMatter does, to
// no allocation: the mapping plainMapping tried on its hooks: and
// mcpServers: blocks before plainNode read them went back to the pool,
// and so do plainNode's line tables; a pooled mapping too small for a
// front matter grows rather than being dropped. It made 18 allocations,
// 6.6 KB, an agent.
func TestClaudeAgentFrontMatterAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("under the race detector sync.Pool drops what it is given at random")
	}
	src := claudeAgentFrontMatter()
	read := func() {
		fm, lines, ok := plainFrontMatter(src, nil)
		if !ok {
			t.Fatal("plainFrontMatter does not read the agent")
		}
		for _, k := range []string{"hooks", "mcpServers"} {
			if v, held := fm.get(k); !held || v.m == nil || len(v.m.fields) == 0 {
				t.Fatalf("%s: %+v", k, v)
			}
		}
		releasePlain(fm, lines)
	}
	agreesWithCUE(t, src)
	read() // fills the pools
	if n := testing.AllocsPerRun(100, read); n != 0 {
		t.Errorf("reading and releasing the agent's front matter made %v allocations, want none", n)
	}
}

// TestEscapedValuesDecodedOntoABuffer proves that proving a subagent's
// front matter whose description is double-quoted with escapes, as Claude
// Code's are, decodes it onto a reused buffer: no allocation a file
// grows with the description.
func TestEscapedValuesDecodedOntoABuffer(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates: counted without it")
	}
	r, err := LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	desc := strings.Repeat(`Use when the tests fail.\n\n<example>\nuser: \"Check \u00e9 module\"\n</example>\n`, 16)
	yaml := "name: crew-reviewer\ndescription: \"" + desc + "\"\ntools: Read, Grep\n"
	if found, ok := r.plainFindings(r.agentFM, "crew-reviewer", yaml, frontMatterLine); !ok || found != nil {
		t.Fatal("front matter not proved")
	}
	if n := testing.AllocsPerRun(100, func() { r.plainFindings(r.agentFM, "crew-reviewer", yaml, frontMatterLine) }); n > 0 {
		t.Errorf("proving a front matter of an escaped description of %d bytes made %v allocations, want none", len(desc), n)
	}
}

// TestFindingsAllocateTwiceEach: a skill's front matter of forty keys the
// Agent Skills specification does not define makes forty W087 findings,
// and each costs two allocations: its message, written once at its size
// (it was grown a doubling at a time and then copied), and its field,
// copied off the file's text, which the report must not keep alive.
func TestFindingsAllocateTwiceEach(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates: counted without it")
	}
	r, err := LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString("name: notes\ndescription: Use when writing release notes.\n")
	const keys = 40
	for i := range keys {
		fmt.Fprintf(&b, "extra-key-%d: value-%d\n", i, i)
	}
	yaml := b.String()
	found, ok := r.plainFindings(r.skillFM, "notes", yaml, frontMatterLine)
	if !ok || len(found) != keys {
		t.Fatalf("plainFindings = %d findings, %v; want %d", len(found), ok, keys)
	}
	for i, f := range found {
		if want := fmt.Sprintf("extra-key-%d", i); f.code != "W087" || f.field != want || !strings.Contains(f.message, "unknown front matter key "+want+";") {
			t.Fatalf("finding %d = %+v; want W087 of %s", i, f, want)
		}
	}
	n := testing.AllocsPerRun(100, func() { r.plainFindings(r.skillFM, "notes", yaml, frontMatterLine) })
	if max := float64(2*keys + 2); n > max {
		t.Errorf("%d findings made %v allocations, want at most %v", keys, n, max)
	}
}
