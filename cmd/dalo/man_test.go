package main

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// Every command has a manual page made of its help, and dalo.1 names
// them all.
func TestManPages(t *testing.T) {
	pages := manPages()
	if len(pages) != len(commands)+1 {
		t.Errorf("%d pages for %d commands, want one each and dalo.1", len(pages), len(commands))
	}
	for _, c := range commands {
		page, ok := pages[manName(c)+".1"]
		if !ok {
			t.Errorf("no page for %q", c.name)
			continue
		}
		if !strings.Contains(pages["dalo.1"], ".BR "+roff(manName(c))+" (1)\n") {
			t.Errorf("dalo.1 does not name %s", manName(c))
		}
		c.flagSet(&env{}).VisitAll(func(f *pflag.Flag) {
			if !strings.Contains(page, `\fB\-\-`+roff(f.Name)+`\fR`) {
				t.Errorf("%s.1 does not document --%s", manName(c), f.Name)
			}
		})
	}
}

// The pages are man(7) that groff reads without a warning, where groff is
// installed.
func TestManPagesRender(t *testing.T) {
	groff, err := exec.LookPath("groff")
	if err != nil {
		t.Skip("no groff")
	}
	for name, page := range manPages() {
		cmd := exec.Command(groff, "-man", "-Tutf8", "-ww", "-z")
		cmd.Stdin = strings.NewReader(page)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil || stderr.Len() > 0 {
			t.Errorf("%s: groff: %v\n%s", name, err, stderr.String())
		}
	}
}

func TestRoff(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"--dry-run", `\-\-dry\-run`},
		{`a\b`, `a\eb`},
		{".hidden", `\&.hidden`},
		{"'quoted'", `\&'quoted'`},
		{"plain text", "plain text"},
	} {
		if got := roff(tt.in); got != tt.want {
			t.Errorf("roff(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
