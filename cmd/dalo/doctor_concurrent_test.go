package main

import (
	"strings"
	"sync"
	"testing"
)

// Doctor reads under the store's shared lock: while installs and removals
// of a package run one after another, every doctor sees a store between
// two commands, never one half way through (without the lock, doctor saw
// problems that were not there: an entry not yet written, a staged tree
// not yet collected).
func TestDoctorDuringWrites(t *testing.T) {
	const pkg = "company:review-kit"
	dir := t.TempDir()
	lifecycleFixture(t, dir)
	mustDalo(t, dir, "source", "add", "company", "src")
	mustDalo(t, dir, "plugin", "approve", pkg, "--provider", "claude", "--all", "--yes")
	const rounds = 8
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < rounds; i++ {
			if out, err := dalo(t, dir, "", "plugin", "install", pkg, "--provider", "claude"); err != nil {
				t.Errorf("install: %v\n%s", err, out)
				return
			}
			if out, err := dalo(t, dir, "", "plugin", "remove", pkg, "--provider", "claude"); err != nil {
				t.Errorf("remove: %v\n%s", err, out)
				return
			}
		}
	}()
	for i := 0; i < 3*rounds; i++ {
		out, err := dalo(t, dir, "", "doctor")
		if err != nil || strings.Contains(out, "problem") {
			t.Errorf("doctor during writes: %v\n%s", err, out)
			break
		}
	}
	wg.Wait()
}
