package plan

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within fails the test when f does not return in time: an open that
// blocks on a FIFO must fail the test, not hang it.
func within[T any](t *testing.T, f func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v
	case <-time.After(5 * time.Second):
		t.Fatal("blocked for 5s")
		panic("unreachable")
	}
}

// A dispatch holding the lock keeps a writer from collecting; released, the
// writer gets it at once.
func TestHoldDispatch(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, DispatchLock), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	release := HoldDispatch(home)
	second := HoldDispatch(home) // dispatches share it
	if _, busy, err := ExcludeDispatch(home); err != nil || !busy {
		t.Fatalf("ExcludeDispatch while dispatches hold the lock: busy %v, err %v; want busy", busy, err)
	}
	release()
	if _, busy, err := ExcludeDispatch(home); err != nil || !busy {
		t.Fatalf("ExcludeDispatch while one dispatch holds the lock: busy %v, err %v; want busy", busy, err)
	}
	second()
	unlock, busy, err := ExcludeDispatch(home)
	if err != nil || busy {
		t.Fatalf("ExcludeDispatch with no dispatch: busy %v, err %v", busy, err)
	}
	// While a writer deletes, a dispatch waits for it.
	got := make(chan bool)
	go func() {
		r := HoldDispatch(home)
		got <- true
		r()
	}()
	select {
	case <-got:
		t.Fatal("HoldDispatch did not wait for the writer's exclusive lock")
	case <-time.After(100 * time.Millisecond):
	}
	unlock()
	within(t, func() bool { return <-got })
}

// HoldDispatch never creates a store file, never follows a symlink and
// never blocks on a FIFO: each gives a release that does nothing.
func TestHoldDispatchOddFiles(t *testing.T) {
	tests := []struct {
		name string
		make func(t *testing.T, p string)
	}{
		{"missing", func(t *testing.T, p string) {}},
		{"fifo", func(t *testing.T, p string) {
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Skip("no FIFOs here:", err)
			}
		}},
		{"symlink", func(t *testing.T, p string) {
			target := filepath.Join(filepath.Dir(p), "elsewhere")
			os.WriteFile(target, nil, 0o644)
			if err := os.Symlink(target, p); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			p := filepath.Join(home, DispatchLock)
			tt.make(t, p)
			before, _ := os.Lstat(p)
			release := within(t, func() func() { return HoldDispatch(home) })
			release()
			after, err := os.Lstat(p)
			if before == nil && !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("HoldDispatch created %s: %v", p, err)
			}
			if before != nil && (err != nil || after.Mode() != before.Mode()) {
				t.Fatalf("HoldDispatch changed %s: %v", p, err)
			}
			if _, _, err := ExcludeDispatch(home); err == nil {
				t.Fatalf("ExcludeDispatch took a lock on a %s file", tt.name)
			}
		})
	}
}

// Dispatch reads the index with the open it uses for grants and staged
// files: an index file swapped for a FIFO or a symlink is an error at
// once, not a read that blocks or one of another file.
func TestLoadRefusesOddFiles(t *testing.T) {
	tests := []struct {
		name    string
		swap    func(t *testing.T, p string)
		wantErr string
	}{
		{"fifo", func(t *testing.T, p string) {
			os.Remove(p)
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Skip("no FIFOs here:", err)
			}
		}, "is a FIFO, not a regular file"},
		{"symlink to a whole copy", func(t *testing.T, p string) {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			copy := filepath.Join(t.TempDir(), "Stop.json")
			os.WriteFile(copy, data, 0o644)
			os.Remove(p)
			if err := os.Symlink(copy, p); err != nil {
				t.Fatal(err)
			}
		}, "is a symlink"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := WriteIndex(dir, testPlan("1"), nil); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, "claude.d", Pointer, "Stop.json")
			if _, err := Load(dir, "claude", "Stop", nil); err != nil {
				t.Fatal(err)
			}
			tt.swap(t, p)
			err := within(t, func() error {
				_, err := Load(dir, "claude", "Stop", nil)
				return err
			})
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), "Stop.json") {
				t.Fatalf("Load: %v; want an error naming Stop.json with %q", err, tt.wantErr)
			}
		})
	}
}
