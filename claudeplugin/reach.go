package claudeplugin

import (
	"bytes"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"dalo/internal/lazyregexp"
)

// Each imported hook's tool is given no more than dalo can read that it
// needs: the files its command names and, from their text, the files
// they name in turn (a Python module they import, a script they source);
// the capabilities and environment variables that text shows it uses, on
// top of what claude-hook.sh itself needs. A change to one hook's script
// then re-asks for that hook alone. What the text cannot tell (a path a
// script computes, a file that is no text) is a note for the author, who
// widens the tool by hand: dalo reads text, it does not run the program.

// AdapterCapabilities and AdapterEnv are the adapter's own needs, which
// every imported tool claims: it reads the command file and runs it under
// bash (filesystem_read, subprocess), finds bash, awk and mktemp on PATH
// and keeps the command's stderr in a file mktemp makes in TMPDIR and
// unlinks at once; that private scratch file is no write to the user's
// files, so it claims no filesystem_write.
var (
	AdapterCapabilities = []string{"filesystem_read", "subprocess"}
	AdapterEnv          = []string{"PATH", "TMPDIR"}
)

// allCapabilities is the claim of a tool dalo cannot read: everything,
// for the reviewer to narrow.
var allCapabilities = []string{"filesystem_read", "filesystem_write", "subprocess", "network"}

// setByAdapter are the variables claude-hook.sh sets for the command: no
// tool passes them through.
var setByAdapter = []string{"CLAUDE_PLUGIN_ROOT", "CLAUDE_PROJECT_DIR", "PYTHONDONTWRITEBYTECODE"}

// A Claim is one capability or environment variable of an imported tool
// and where dalo read that the tool needs it: "claude-hook.sh" for the
// adapter's own needs, else a plugin file and line.
type Claim struct {
	Name string `json:"name"`
	From string `json:"from"`
}

// reach is what one hook's tool is given.
type reach struct {
	files []string          // plugin files, in the order found
	caps  map[string]string // capability → where read
	env   map[string]string // variable → where read
	notes []string          // what dalo cannot tell
}

func (r *reach) claim(m map[string]string, name, from string) {
	if _, ok := m[name]; !ok {
		m[name] = from
	}
}

// claims returns m as claims sorted by name.
func claims(m map[string]string) []Claim {
	out := make([]Claim, 0, len(m))
	for n, f := range m {
		out = append(out, Claim{n, f})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// A language is how dalo reads a file's text: its comments, and what in
// it names files, variables and capabilities.
type language int

const (
	langOther language = iota
	langShell
	langPython
	langJS
)

// languageOf tells a file's language by its extension or its #! line.
func languageOf(name string, text []byte) language {
	switch path.Ext(name) {
	case ".sh", ".bash":
		return langShell
	case ".py":
		return langPython
	case ".js", ".mjs", ".cjs", ".ts":
		return langJS
	}
	switch in := interpreter(text); {
	case strings.HasPrefix(in, "python"):
		return langPython
	case in == "node" || in == "deno" || in == "bun":
		return langJS
	case in == "sh" || in == "bash" || in == "dash" || in == "zsh" || in == "ksh":
		return langShell
	}
	return langOther
}

// interpreter is the name of the program text's #! line runs it with
// ("python3" of "#!/usr/bin/env -S python3 -u"), or "" without one.
func interpreter(text []byte) string {
	first, _, _ := bytes.Cut(text, []byte("\n"))
	line, ok := strings.CutPrefix(string(first), "#!")
	if !ok {
		return ""
	}
	words := strings.Fields(line)
	if len(words) == 0 {
		return ""
	}
	prog := path.Base(words[0])
	if prog == "env" {
		prog = ""
		for _, w := range words[1:] {
			if !strings.HasPrefix(w, "-") && !strings.Contains(w, "=") {
				prog = path.Base(w)
				break
			}
		}
	}
	return prog
}

// dataExts are the extensions of files that hold data: text a script
// reads, which runs nothing. Any other file dalo cannot read as one of its
// languages is a program it cannot read.
var dataExts = []string{".json", ".jsonl", ".md", ".txt", ".yaml", ".yml", ".toml", ".csv", ".tsv", ".ini", ".cfg", ".conf", ".xml", ".html", ".css", ".svg"}

// data reports whether name, of language lang, is data: not one of dalo's
// languages, no #! line, and an extension of dataExts.
func data(name string, lang language, text []byte) bool {
	return lang == langOther && interpreter(text) == "" && slices.Contains(dataExts, path.Ext(name))
}

// A pattern is something in a line of text that shows a need: a
// capability or a variable (the name, or the pattern's first group).
type pattern struct {
	re   *lazyregexp.Regexp
	name string // "" for the first group
}

var (
	// pathToken is a word that may name a file: it holds a dot or a slash.
	pathToken = lazyregexp.New(`[A-Za-z0-9_@+~-]*[./][A-Za-z0-9_./@+~-]*[A-Za-z0-9_@+~-]`)
	pyImport  = lazyregexp.New(`^\s*(?:from\s+(\.*[\w.]*)\s+import\s+([\w\s,()*]+)|import\s+([\w.]+(?:\s*,\s*[\w.]+)*))`)
	jsImport  = lazyregexp.New(`(?:require\s*\(\s*|from\s+|import\s*\(\s*|import\s+)['"](\.{1,2}/[^'"]+)['"]`)
	// computed are the ways a script finds files by a path it computes
	// from where it is, which dalo cannot follow.
	computed = map[language]*lazyregexp.Regexp{
		langShell:  lazyregexp.New(`CLAUDE_PLUGIN_ROOT|BASH_SOURCE|\$0\b|\$\{0`),
		langPython: lazyregexp.New(`CLAUDE_PLUGIN_ROOT|__file__|sys\.argv\[0\]|importlib`),
		langJS:     lazyregexp.New(`CLAUDE_PLUGIN_ROOT|__dirname|__filename|import\.meta`),
	}
	// needs are what shows a capability or a variable, per language.
	needs = map[language][]pattern{
		langShell: {
			{lazyregexp.New(`(?:^|[\s;|&(])(curl|wget|nc|ncat|ssh|scp|rsync|telnet|ftp|sftp)\s`), "network"},
			{lazyregexp.New(`\bgit\s+(?:clone|fetch|pull|push|ls-remote)\b|\b(?:pip3?|npm|npx|yarn|pnpm|uv|brew|apt-get)\s+(?:install|add|i)\b`), "network"},
			{lazyregexp.New(`(?:^|[\s;|&(])(rm|mv|cp|mkdir|rmdir|touch|tee|ln|chmod|chown|truncate|dd|install|mktemp)\s`), "filesystem_write"},
			{lazyregexp.New(`\bsed\s+(?:-[a-zA-Z]*\s+)*-i`), "filesystem_write"},
			{lazyregexp.New(`(?:^|[^0-9&<>=-])>>?\s*(?:"[^"&]|'[^'&]|[^\s&>"'/]|/(?:[^d]|d[^e]|de[^v]))`), "filesystem_write"},
			{lazyregexp.New(`(?:^|[\s:(])~(?:/|\s|$)|[^=!]=~/`), "HOME"},
			{lazyregexp.New(`\$\{?([A-Za-z_][A-Za-z0-9_]*)`), ""},
		},
		langPython: {
			{lazyregexp.New(`\b(?:urllib|requests|http\.client|httpx|aiohttp|socket|ftplib|smtplib|websockets?)\b`), "network"},
			{lazyregexp.New(`\b(?:pip|npm|git)\b['"]?\s*,?\s*['"]?(?:install|clone|fetch|pull|push)\b`), "network"},
			{lazyregexp.New(`\bopen\(.*['"][rbt]*[wax+][rbt+]*['"]|\.write_(?:text|bytes)\(|\bos\.(?:remove|unlink|rename|replace|makedirs|mkdir|rmdir|chmod)\b|\bshutil\.|\.(?:mkdir|unlink|touch|rmdir|rename)\(|\btempfile\.`), "filesystem_write"},
			{lazyregexp.New(`expanduser|Path\.home\(\)`), "HOME"},
			{lazyregexp.New(`environ(?:\.get\(|\[)\s*['"]([A-Za-z_][A-Za-z0-9_]*)['"]|getenv\(\s*['"]([A-Za-z_][A-Za-z0-9_]*)['"]`), ""},
		},
		langJS: {
			{lazyregexp.New(`\bfetch\(|['"](?:node:)?(?:https?|net|tls|dgram)['"]|\baxios\b|\bWebSocket\b`), "network"},
			{lazyregexp.New(`\b(?:write|append|mkdir|rm|rmdir|unlink|rename|copyFile|cp|mkdtemp)(?:File)?(?:Sync)?\(`), "filesystem_write"},
			{lazyregexp.New(`\bhomedir\(\)`), "HOME"},
			{lazyregexp.New(`process\.env\.([A-Za-z_][A-Za-z0-9_]*)|process\.env\[\s*['"]([A-Za-z_][A-Za-z0-9_]*)['"]`), ""},
		},
	}
	// shellAssign is a shell variable the script sets itself.
	shellAssign = lazyregexp.New(`(?:^|[\s;(])(?:export\s+|local\s+|readonly\s+|declare\s+(?:-\w+\s+)*)?([A-Za-z_][A-Za-z0-9_]*)=|\bread\s+(?:-\w+\s+)*([A-Za-z_][A-Za-z0-9_ ]*)|\bfor\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\b`)
	// envName is a variable of the environment, as scripts name them.
	envName = lazyregexp.New(`^[A-Z_][A-Z0-9_]*$`)
)

// shellOwn are the shell's own variables: none comes from the environment.
var shellOwn = []string{"BASH", "BASHPID", "BASH_COMMAND", "BASH_LINENO", "BASH_REMATCH", "BASH_SOURCE", "BASH_SUBSHELL", "BASH_VERSION", "BASH_VERSINFO", "EPOCHREALTIME", "EPOCHSECONDS", "EUID", "FUNCNAME", "GROUPS", "HOSTNAME", "HOSTTYPE", "IFS", "LINENO", "MACHTYPE", "OLDPWD", "OPTARG", "OPTIND", "OSTYPE", "PIPESTATUS", "PPID", "PWD", "RANDOM", "REPLY", "SECONDS", "SHELLOPTS", "SRANDOM", "UID"}

// hereStart is the start of a shell here-document, with its terminator.
var hereStart = lazyregexp.New(`<<-?\s*['"]?([A-Za-z_][A-Za-z0-9_]*)['"]?`)

// blankQuoted returns a line of shell with what it quotes blanked: what
// single quotes hold, and with double, what double quotes hold too.
func blankQuoted(line string, double bool) string {
	b := []byte(line)
	var in byte
	for i := 0; i < len(b); i++ {
		switch ch := b[i]; {
		case in == 0 && ch == '\\':
			i++
		case in == 0 && (ch == '\'' || ch == '"'):
			in = ch
		case in == ch:
			in = 0
		case in == '"' && ch == '\\':
			if double {
				b[i] = 'x'
			}
			if i+1 < len(b) && double {
				b[i+1] = 'x'
			}
			i++
		case in == '\'' || (in == '"' && double):
			b[i] = 'x'
		}
	}
	return string(b)
}

// cutComment cuts a comment at the end of a line of shell or Python:
// a # outside quotes (in shell, starting a word).
func cutComment(lang language, line string) string {
	if lang != langShell && lang != langPython {
		return line
	}
	var in byte
	for i := 0; i < len(line); i++ {
		switch ch := line[i]; {
		case ch == '\\':
			i++
		case in == 0 && (ch == '\'' || ch == '"'):
			in = ch
		case in == ch:
			in = 0
		case in == 0 && ch == '#' && (lang == langPython || i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
			return line[:i]
		}
	}
	return line
}

// comment reports whether line is a whole-line comment in lang.
func comment(lang language, line string) bool {
	t := strings.TrimSpace(line)
	switch lang {
	case langShell, langPython:
		return strings.HasPrefix(t, "#")
	case langJS:
		return strings.HasPrefix(t, "//") || strings.HasPrefix(t, "*") || strings.HasPrefix(t, "/*")
	}
	return false
}

// text reports whether b is text dalo can read: UTF-8 without NUL.
func text(b []byte) bool {
	return utf8.Valid(b) && !bytes.ContainsRune(b, 0)
}

// reach finds what the tool of h needs: the files its command names, the
// files they name in turn, and what their text shows they use. usable
// says which plugin files a script may name (not the plugin's own
// configuration).
func (c *converter) reach(h *hookOut, usable func(string) bool) *reach {
	r := &reach{caps: map[string]string{}, env: map[string]string{}}
	for _, cp := range AdapterCapabilities {
		r.caps[cp] = AdapterFile
	}
	for _, v := range AdapterEnv {
		r.env[v] = AdapterFile
	}
	// The command itself is shell text, in the hook's configuration.
	c.scan(r, h.From, langShell, strings.Join(append([]string{h.Command}, h.args...), "\n"), "", usable, nil)
	queue := slices.Clone(h.refs)
	seen := map[string]bool{}
	var opaque, unread, computes []string
	for len(queue) > 0 {
		f := queue[0]
		queue = queue[1:]
		if seen[f] {
			continue
		}
		seen[f] = true
		r.files = append(r.files, f)
		b, err := c.p.read(f, c.opt.Rules.Limits.FileBytes)
		if err != nil || !text(b) {
			opaque = append(opaque, f)
			continue
		}
		lang := languageOf(f, b)
		if data(f, lang, b) {
			continue // it names nothing that runs
		}
		if lang == langOther {
			unread = append(unread, f)
			continue
		}
		where := c.scan(r, f, lang, string(b), path.Dir(f), usable, func(g string) { queue = append(queue, g) })
		if where != "" {
			computes = append(computes, where)
		}
	}
	if len(opaque) > 0 {
		for _, cp := range allCapabilities {
			r.claim(r.caps, cp, opaque[0])
		}
		r.notes = append(r.notes, fmt.Sprintf("%s is no text dalo can read, so its tool claims every capability and no variable it may read: narrow the capabilities, and add to env what it reads, by hand", strings.Join(opaque, ", ")))
	}
	if len(unread) > 0 {
		for _, cp := range allCapabilities {
			r.claim(r.caps, cp, unread[0])
		}
		r.notes = append(r.notes, fmt.Sprintf("%s is in a language dalo does not read, so its tool claims every capability and no variable it may read: narrow the capabilities, and add to env what it reads, by hand", strings.Join(unread, ", ")))
	}
	for _, w := range computes {
		r.notes = append(r.notes, fmt.Sprintf("%s finds files by a path it computes: its tool has the files dalo read it naming; if it reads another file of the plugin, add it to the tool's files by hand", w))
	}
	return r
}

// scan reads the text of one file (or the command, from a hook
// configuration) for what it needs: the files it names (passed to more),
// capabilities and variables. It returns where the text first computes a
// path from where it is ("hooks/x.py:13 (__file__)"), or "".
func (c *converter) scan(r *reach, from string, lang language, text, dir string, usable func(string) bool, more func(string)) string {
	own := map[string]bool{}
	if lang == langShell {
		for _, m := range shellAssign.FindAllStringSubmatch(text, -1) {
			for _, g := range m[1:] {
				for _, n := range strings.Fields(g) {
					own[n] = true
				}
			}
		}
	}
	name := func(f string) bool {
		if f == "" || f == "." || !usable(f) {
			return false
		}
		if more != nil {
			more(f)
		}
		return true
	}
	var computedAt string
	var heredoc, docstring string // the terminator of the one open
	for i, line := range strings.Split(text, "\n") {
		switch {
		case heredoc != "":
			// A here-document is data the script prints.
			if strings.TrimLeft(line, "\t") == heredoc {
				heredoc = ""
			}
			continue
		case docstring != "":
			if strings.Count(line, docstring)%2 == 1 {
				docstring = ""
			}
			continue
		case comment(lang, line) && !(i == 0 && strings.HasPrefix(line, "#!")):
			continue
		}
		line = cutComment(lang, line)
		code, expands := line, line
		switch lang {
		case langShell:
			if m := hereStart.FindStringSubmatch(line); m != nil {
				heredoc = m[1]
			}
			// What is quoted is no command, and nothing in single
			// quotes expands.
			code, expands = blankQuoted(line, true), blankQuoted(line, false)
		case langPython:
			// A docstring documents; it runs nothing.
			for _, q := range []string{`"""`, "'''"} {
				if t := strings.TrimSpace(line); strings.HasPrefix(t, q) {
					if strings.Count(t, q)%2 == 1 {
						docstring = q
					}
					code = ""
				}
			}
			if code == "" {
				continue
			}
		}
		at := fmt.Sprintf("%s:%d", from, i+1)
		if more == nil {
			at = from
		}
		probe := line // where a computed path is looked for
		if more != nil && lang == langShell {
			// ${CLAUDE_PLUGIN_ROOT} is the plugin's root, which dalo can
			// follow; a line whose every use of it names a plugin file or
			// directory computes nothing.
			if c.rootFiles(line, name) {
				probe = rootRef.ReplaceAllString(line, "")
			}
		}
		if more != nil {
			c.namedFiles(line, lang, dir, name)
			if re := computed[lang]; re != nil && computedAt == "" {
				if m := re.FindString(probe); m != "" {
					computedAt = fmt.Sprintf("%s:%d (%s)", from, i+1, m)
				}
			}
		}
		for _, p := range needs[lang] {
			in := code
			if p.name == "" {
				in = expands
			}
			for _, m := range p.re.FindAllStringSubmatch(in, -1) {
				if p.name != "" {
					if envName.MatchString(p.name) {
						r.claim(r.env, p.name, at)
					} else {
						r.claim(r.caps, p.name, at)
					}
					continue
				}
				for _, v := range m[1:] {
					c.variable(r, v, lang, own, at, more != nil)
				}
			}
		}
	}
	return computedAt
}

// namedFiles passes to name each plugin file one line of a program
// names: by a path, or by an import of the program's language.
func (c *converter) namedFiles(line string, lang language, dir string, name func(string) bool) {
	for _, t := range pathToken.FindAllString(line, -1) {
		t = strings.TrimPrefix(t, "./")
		for _, f := range []string{path.Clean(t), path.Join(dir, t)} {
			if c.has(f) && name(f) {
				break
			}
		}
	}
	switch lang {
	case langPython:
		c.pythonImports(line, dir, name)
	case langJS:
		for _, m := range jsImport.FindAllStringSubmatch(line, -1) {
			base := path.Join(dir, m[1])
			for _, f := range []string{base, base + ".js", base + ".mjs", base + ".cjs", base + ".json", base + "/index.js"} {
				if c.has(f) && name(f) {
					break
				}
			}
		}
	}
}

// rootFiles passes to name each plugin file s names under
// ${CLAUDE_PLUGIN_ROOT}, every file of a directory it names; all says
// whether each use of it named one.
func (c *converter) rootFiles(s string, name func(string) bool) (all bool) {
	all = true
	for _, rel := range rootRefs(s) {
		switch {
		case c.has(rel):
			name(rel)
		case c.p.dirs[rel]:
			for _, f := range c.p.under(rel) {
				name(f)
			}
		default:
			all = false
		}
	}
	return all
}

// variable records that text at at reads the variable v. A CLAUDE_
// variable a file reads is a note (hook notes those of the command).
func (c *converter) variable(r *reach, v string, lang language, own map[string]bool, at string, file bool) {
	switch {
	case v == "" || !envName.MatchString(v) || own[v] || slices.Contains(setByAdapter, v):
	case lang == langShell && slices.Contains(shellOwn, v):
	case strings.HasPrefix(v, "CLAUDE_"):
		if !file {
			return
		}
		n := fmt.Sprintf("%s reads %s, which dalo does not set", at, v)
		if !slices.Contains(r.notes, n) {
			r.notes = append(r.notes, n)
		}
	default:
		r.claim(r.env, v, at)
	}
}

// pythonImports names the plugin's modules that an import on line
// loads, as Python finds them from a script in dir: beside the script
// (its directory is first on sys.path) or from the plugin's root (where
// plugins put CLAUDE_PLUGIN_ROOT on sys.path).
func (c *converter) pythonImports(line, dir string, name func(string) bool) {
	m := pyImport.FindStringSubmatch(line)
	if m == nil {
		return
	}
	var mods []string
	if m[3] != "" {
		for _, s := range strings.Split(m[3], ",") {
			mods = append(mods, strings.TrimSpace(s))
		}
	} else {
		mod := m[1]
		for _, s := range strings.FieldsFunc(m[2], func(r rune) bool { return r == ',' || r == '(' || r == ')' || r == ' ' || r == '\t' }) {
			if s != "*" && s != "as" {
				// from P import M may load the submodule P.M.
				mods = append(mods, strings.TrimSuffix(mod, ".")+"."+s)
			}
		}
		mods = append(mods, mod)
	}
	bases := []string{dir, ""}
	for _, mod := range mods {
		rel := strings.TrimLeft(mod, ".")
		if rel == "" {
			continue
		}
		parts := strings.Split(rel, ".")
		for _, base := range bases {
			found := false
			for i := range parts {
				p := path.Join(base, path.Join(parts[:i+1]...))
				for _, f := range []string{p + "/__init__.py", p + ".py"} {
					if c.has(f) && name(f) {
						found = true
					}
				}
			}
			if found {
				break
			}
		}
	}
}
