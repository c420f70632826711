package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestPackageInitsAllocateLittle holds what each of dalo's packages does
// before main to little: every command pays it, a --version as much as a
// validation. Regexps compiled at init, a table literal built there and a
// usage line asking the provider tables cost every run of dalo some 3 ms
// and 1.4 MB. GODEBUG=inittrace=1 prints each package's init with its
// allocations, which, unlike its time, do not move with the machine's
// load; the test runs dalo itself, built, not the test binary, whose
// packages hold tests' data too.
func TestPackageInitsAllocateLittle(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "dalo")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("dalo --version: %v\n%s", err, stderr.Bytes())
	}
	const most = 64 << 10
	line := regexp.MustCompile(`^init (\S+) @\S+ ms, \S+ ms clock, (\d+) bytes, \d+ allocs$`)
	seen := 0
	for _, l := range strings.Split(stderr.String(), "\n") {
		m := line.FindStringSubmatch(l)
		if m == nil || m[1] != "main" && !strings.HasPrefix(m[1], "dalo/") {
			continue
		}
		seen++
		if n, _ := strconv.Atoi(m[2]); n > most {
			t.Errorf("init %s allocates %d bytes, want at most %d: make it on first use", m[1], n, most)
		}
	}
	if seen < 10 {
		t.Fatalf("init lines of %d of dalo's packages, want 10 or more, in:\n%s", seen, stderr.Bytes())
	}
}
