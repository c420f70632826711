package store

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"dalo/providers"
)

// TestPowersIn: a key is found however YAML lets it be written at the top
// level (quoted, CRLF lines), with its block value; a body construct is
// found on every line of the body and never in the front matter; a file
// without front matter is all body.
func TestPowersIn(t *testing.T) {
	powers := []providers.MemberPower{
		{Kind: "skill", Key: "allowed-tools"},
		{Kind: "skill", Key: "hooks"},
		{Kind: "skill", Body: "!`([^`]+)`"},
	}
	for _, tc := range []struct{ name, file, want string }{
		{"plain", "---\nname: a\nallowed-tools: Bash(*)\n---\nrun !`ls` and !`pwd`\n", "allowed-tools 3 Bash(*); inline command 5 ls; inline command 5 pwd"},
		{"quoted key, CRLF", "---\r\n\"allowed-tools\": Bash\r\n---\r\nx\r\n", "allowed-tools 2 Bash"},
		{"block value", "---\nhooks:\n  Stop:\n    - command: x\nname: a\n---\n", "hooks 2 Stop:\n    - command: x"},
		{"construct in front matter is not the body", "---\ndescription: !`ls`\n---\n", ""},
		{"nested key is not a key", "---\nmetadata:\n  allowed-tools: Bash\n---\n", ""},
		{"no front matter", "!`id`\n", "inline command 1 id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, u := range powersIn(powers, "SKILL.md", []byte(tc.file)) {
				got = append(got, fmt.Sprintf("%s %d %s", u.What(), u.Line, u.Text))
			}
			if g := strings.Join(got, "; "); g != tc.want {
				t.Errorf("got %q\nwant %q", g, tc.want)
			}
		})
	}
}

// TestTablePowersCompile: every body construct of every table is a
// regular expression with a group to show.
func TestTablePowersCompile(t *testing.T) {
	ts, err := providers.Load()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tb := range ts.All() {
		for _, p := range tb.MemberPowers {
			if (p.Key == "") == (p.Body == "") {
				t.Errorf("%s: a power names a key or a body construct, exactly one: %+v", tb.Key(), p)
			}
			if p.Body == "" {
				continue
			}
			n++
			re, err := regexp.Compile(p.Body)
			if err != nil || re.NumSubexp() < 1 {
				t.Errorf("%s: body %q: %v, %d groups; want one to show", tb.Key(), p.Body, err, re.NumSubexp())
			}
		}
	}
	if n == 0 {
		t.Error("no table lists a body construct")
	}
}
