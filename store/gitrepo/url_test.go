package gitrepo

import (
	"strings"
	"testing"
)

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		in     string
		git    bool
		clean  string // String(); "" with err
		creds  bool
		err    string
		leaked string // never in the error
	}{
		{in: "src", git: false},
		{in: "./team-agents", git: false},
		{in: "/home/me/agents", git: false},
		{in: "dir/me@box:notes", git: false},
		{in: "https://example.com/team/agents.git", git: true, clean: "https://example.com/team/agents.git"},
		{in: "HTTPS://example.com/a.git", git: true, clean: "https://example.com/a.git"},
		{in: "https://127.0.0.1:8443/a.git", git: true, clean: "https://127.0.0.1:8443/a.git"},
		{in: "https://me:s3cret@example.com/a.git", git: true, clean: "https://example.com/a.git", creds: true},
		{in: "https://ghp_token123@example.com/a.git", git: true, clean: "https://example.com/a.git", creds: true},
		{in: "ssh://git@example.com/team/agents.git", git: true, clean: "ssh://git@example.com/team/agents.git"},
		{in: "ssh://example.com:2222/agents.git", git: true, clean: "ssh://example.com:2222/agents.git"},
		{in: "git@example.com:team/agents.git", git: true, clean: "git@example.com:team/agents.git"},
		{in: "file:///srv/git/agents.git", git: true, clean: "file:///srv/git/agents.git"},
		{in: "http://example.com/a.git", git: true, err: "transport not allowed: http (use https); dalo fetches git sources over https, ssh, file only"},
		{in: "git://example.com/a.git", git: true, err: "transport not allowed: git;"},
		{in: "ext::sh -c touch% /tmp/pwned", git: false},
		{in: "ext://sh", git: true, err: "transport not allowed: ext"},
		{in: "http://me:s3cret@example.com/a.git", git: true, err: "git URL http://<credentials>@example.com/a.git", leaked: "s3cret"},
		{in: "ssh://me:s3cret@example.com/a.git", git: true, err: "an ssh URL carries no password", leaked: "s3cret"},
		{in: "ssh://-oProxyCommand=x/a.git", git: true, err: "would be read as an ssh option"},
		{in: "-oProxyCommand=x@host:a.git", git: true, err: "would be read as an ssh option"},
		{in: "git@-host:a.git", git: true, err: "would be read as an ssh option"},
		{in: "https:///a.git", git: true, err: "no host"},
		{in: "https://example.com", git: true, err: "no repository path"},
		{in: "https://example.com/a.git?x=1", git: true, err: "no query or fragment"},
		{in: "https://example.com/a.git#main", git: true, err: "no query or fragment"},
		{in: "https://example.com/a b.git", git: true, err: "no spaces or control characters"},
		{in: "https://example.com/a\x1b[2J.git", git: true, err: "no spaces or control characters"},
		{in: "file://host/srv/a.git", git: true, err: "a file URL names no host"},
		{in: "file://relative", git: true, err: "a file URL names no host"},
		{in: "file:///", git: true, err: "want file:///absolute/path"},
	} {
		u, git, err := ParseURL(tc.in)
		if git != tc.git {
			t.Errorf("ParseURL(%q): git %v, want %v", tc.in, git, tc.git)
			continue
		}
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseURL(%q): error %v, want one with %q", tc.in, err, tc.err)
			}
			if err != nil && tc.leaked != "" && strings.Contains(err.Error(), tc.leaked) {
				t.Errorf("ParseURL(%q): the error shows the credentials: %v", tc.in, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseURL(%q): %v", tc.in, err)
			continue
		}
		if u.String() != tc.clean || u.HasCredentials() != tc.creds {
			t.Errorf("ParseURL(%q) = %q, credentials %v; want %q, %v", tc.in, u, u.HasCredentials(), tc.clean, tc.creds)
		}
	}
}

func TestCheckRef(t *testing.T) {
	for _, ok := range []string{"main", "HEAD", "v1.2.0", "release/2026", "refs/tags/v1", "feature_x-2"} {
		if err := CheckRef(ok); err != nil {
			t.Errorf("CheckRef(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "-upload-pack=x", "main:refs/heads/x", "+main", "a..b", "main^", "main~1", "HEAD@{1}", "x y", "x.lock", "/main", "main/", ".hidden", "a/.b", "*"} {
		if err := CheckRef(bad); err == nil {
			t.Errorf("CheckRef(%q) accepted it", bad)
		}
	}
}
