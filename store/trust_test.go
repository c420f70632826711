package store

import (
	"strings"
	"testing"
)

// setTrust writes the trust of each key byte-exactly beside what the user
// wrote, and dropTrust takes it back: the file comes back byte for byte.
// A file that cannot take the edit is refused.
func TestSetTrust(t *testing.T) {
	const key = "/h/.codex/hooks.json:pre_tool_use:0:0"
	for _, tc := range []struct {
		name, doc, want, err string
	}{
		{name: "empty", doc: "",
			want: "[hooks.state.\"/h/.codex/hooks.json:pre_tool_use:0:0\"]\ntrusted_hash = \"sha256:new\"\n"},
		{name: "user's settings", doc: "# mine\nmodel = \"gpt-5\"\n\n[tui]\ntheme = \"dark\"\n",
			want: "# mine\nmodel = \"gpt-5\"\n\n[tui]\ntheme = \"dark\"\n\n[hooks.state.\"/h/.codex/hooks.json:pre_tool_use:0:0\"]\ntrusted_hash = \"sha256:new\"\n"},
		{name: "no final newline", doc: "model = \"gpt-5\"",
			want: "model = \"gpt-5\"\n\n[hooks.state.\"/h/.codex/hooks.json:pre_tool_use:0:0\"]\ntrusted_hash = \"sha256:new\"\n"},
		{name: "a stale hash, replaced in place", doc: "[hooks.state.\"/h/.codex/hooks.json:pre_tool_use:0:0\"]\ntrusted_hash = \"sha256:old\" # the review's\n[tui]\n",
			want: "[hooks.state.\"/h/.codex/hooks.json:pre_tool_use:0:0\"]\ntrusted_hash = \"sha256:new\" # the review's\n[tui]\n"},
		{name: "the table, no hash", doc: "[hooks.state.\"/h/.codex/hooks.json:pre_tool_use:0:0\"]\n# kept\n",
			want: "[hooks.state.\"/h/.codex/hooks.json:pre_tool_use:0:0\"]\ntrusted_hash = \"sha256:new\"\n# kept\n"},
		{name: "a dotted key", doc: "[hooks]\nstate.\"/h/.codex/hooks.json:pre_tool_use:0:0\".trusted_hash = 'sha256:old'\n",
			want: "[hooks]\nstate.\"/h/.codex/hooks.json:pre_tool_use:0:0\".trusted_hash = \"sha256:new\"\n"},
		{name: "an inline table", doc: "hooks = { state = {} }\n", err: "cannot add its trust to this file"},
		{name: "not TOML", doc: "[hooks\n", err: "1:7: not valid TOML"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, added, err := setTrust("config.toml", []byte(tc.doc), "hooks.state", "trusted_hash", map[string]string{key: "sha256:new"})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("setTrust: %v, want an error with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("setTrust:\n%s\nwant:\n%s", got, tc.want)
			}
			back, err := dropTrust("config.toml", got, "hooks.state", "trusted_hash", []TrustRecord{{Key: key, Hash: "sha256:new", Added: added[key]}})
			if err != nil {
				t.Fatal(err)
			}
			if added[key] != "" && string(back) != tc.doc {
				t.Errorf("dropTrust of an appended table:\n%q\nwant the user's file back:\n%q", back, tc.doc)
			}
			if s, _ := readTrust("config.toml", back, "hooks.state", "trusted_hash"); s[key] != "" {
				t.Errorf("dropTrust left the trust: %q", back)
			}
		})
	}
}

// A hash the user changed since dalo wrote it is theirs: kept.
func TestDropTrustKeepsTheUsers(t *testing.T) {
	const key = "/h/hooks.json:stop:0:0"
	doc := "[hooks.state.\"/h/hooks.json:stop:0:0\"]\ntrusted_hash = \"sha256:theirs\"\n"
	back, err := dropTrust("config.toml", []byte(doc), "hooks.state", "trusted_hash", []TrustRecord{{Key: key, Hash: "sha256:dalos", Added: "\n" + doc}})
	if err != nil || string(back) != doc {
		t.Errorf("dropTrust = %q, %v; want the file as it is", back, err)
	}
}
