package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"dalo/plan"
)

// writeFile replaces name with data atomically (plan.WriteFile), its
// temporary file locked while it is written (lockTemp). perm applies to a
// new file; an existing file keeps its mode.
func writeFile(name string, data []byte, perm os.FileMode) error {
	if fi, err := os.Stat(name); err == nil {
		perm = fi.Mode().Perm()
	}
	if err := plan.WriteFile(name, tempPrefix(filepath.Base(name)), data, perm, lockTemp); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}

// syncDir makes the renames and removals in a directory durable. The
// writes that use it through this variable are those whose syncing a test
// checks by replacing it: a missing sync loses data only when the machine
// stops, which no test sees.
var syncDir = plan.SyncDir

// A Lock is an advisory lock on a file, held by one writer at a time.
// Readers do not take it: every file they read is replaced atomically.
type Lock struct {
	f *os.File
}

// lockFile takes the exclusive advisory lock on name, creating it if
// needed, and waits for a holder to release it.
func lockFile(name string) (*Lock, error) {
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		return nil, fmt.Errorf("locking %s: %w", name, err)
	}
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w", name, err)
	}
	err = plan.Flock(f, syscall.LOCK_EX)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", name, err)
	}
	return &Lock{f: f}, nil
}

// Unlock releases the lock.
func (l *Lock) Unlock() error {
	if l.f == nil {
		return nil
	}
	defer l.f.Close()
	return plan.Flock(l.f, syscall.LOCK_UN)
}

// ReadLockWait is how long a reader that reports on the whole store
// (doctor, plugin status) waits for a writer to finish.
const ReadLockWait = 10 * time.Second

// A BusyError says a writer held the store's lock for as long as a reader
// would wait.
type BusyError struct {
	Lock   string
	Waited time.Duration
}

// Error says that nothing was checked and that running again is the fix:
// a reader never waits without bound behind a writer.
func (e *BusyError) Error() string {
	return fmt.Sprintf("another dalo command has held the store's lock %s for %v; nothing was checked: run this again once it ends", e.Lock, e.Waited)
}

// ReadLock takes the store's lock shared, so that a reader sees no
// writer's half-done change (a record written, its plan not yet), waiting
// at most wait for a writer to finish: then a *BusyError. Readers do not
// exclude each other. A store no writer ever locked has nothing half done:
// the lock is then a no-op, and nothing is created.
func (s *Store) ReadLock(wait time.Duration) (*Lock, error) {
	name := s.path("lock")
	f, err := os.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return &Lock{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w", name, err)
	}
	deadline := time.Now().Add(wait)
	for {
		err = plan.Flock(f, syscall.LOCK_SH|syscall.LOCK_NB)
		if err == nil {
			return &Lock{f: f}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", name, err)
		}
		if !time.Now().Before(deadline) {
			f.Close()
			return nil, &BusyError{Lock: name, Waited: wait}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// WriteFile replaces name with data atomically, as the store writes its
// own files: for files the CLI writes outside the store ('dalo man').
func WriteFile(name string, data []byte, perm os.FileMode) error {
	return writeFile(name, data, perm)
}
