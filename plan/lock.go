package plan

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"dalo/internal/regular"
)

// Flock applies the advisory lock how (syscall.LOCK_SH, LOCK_EX or
// LOCK_UN, with LOCK_NB or without) to f, and again when a signal
// interrupts it: Go's runtime signals its threads (to preempt goroutines),
// and a flock waiting for a holder then fails with EINTR. Every advisory
// lock dalo takes, in the store and here, goes through it.
func Flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

// DispatchLock is the file under the store that keeps staged trees in
// place while dispatches run. Every dispatch holds a shared flock on it for
// its whole run; a writer, holding the store lock, takes it exclusively
// (without waiting) only while it deletes staged trees no install record
// names, and skips that collection when a dispatch holds it. A dispatch
// that read the previous plan, and whose later handlers re-check their
// staged files seconds after it started, thus never finds them deleted
// under it.
const DispatchLock = "dispatch.lock"

// HoldDispatch takes the shared lock of DispatchLock under home and returns
// what releases it. A dispatch calls it before it reads the dispatch index
// and releases at the end of its run: a writer that switched the plan and
// then collects staged trees either sees the lock held and keeps them, or
// runs before this dispatch reads the index, which then names only trees
// that stay.
//
// It never creates a store file and never fails: a missing file (a store
// no writer has touched since dalo had this lock), a symlink, a FIFO or any
// other error gives a release that does nothing, and dispatch goes on as it
// did without the lock. The open neither follows a symlink nor blocks; the
// flock waits, but writers hold it exclusively only while they delete.
func HoldDispatch(home string) (release func()) {
	f, _, err := regular.Open(filepath.Join(home, DispatchLock))
	if err != nil {
		return func() {}
	}
	err = Flock(f, syscall.LOCK_SH)
	if err != nil {
		f.Close()
		return func() {}
	}
	// Closing the file releases the lock (and any duplicate of the
	// descriptor is close-on-exec: os opens every file O_CLOEXEC, so a
	// handler dispatch starts does not inherit the lock).
	return func() { f.Close() }
}

// ExcludeDispatch takes the lock of DispatchLock under home exclusively,
// without waiting: busy says a dispatch holds it, and then nothing is
// held. The caller, a writer holding the store lock, has made sure the
// file exists. release closes the file, which releases the lock.
func ExcludeDispatch(home string) (release func(), busy bool, err error) {
	name := filepath.Join(home, DispatchLock)
	f, _, err := regular.Open(name)
	if err != nil {
		return nil, false, fmt.Errorf("locking out dispatch: %w", err)
	}
	err = Flock(f, syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		f.Close()
		return nil, true, nil
	}
	if err != nil {
		f.Close()
		return nil, false, fmt.Errorf("locking out dispatch: %s: %w", name, err)
	}
	return func() { f.Close() }, false, nil
}
