// Package regular opens files that dalo reads only if they are regular
// files: a source's manifests and tool files, a user's configuration, the
// store's grants, plans and staged trees. The open follows no symlink in
// the last component and does not block, and the type is checked on the
// open file, so that a FIFO, device or symlink swapped in after any
// earlier check can neither make dalo wait forever nor read another file.
// Callers bound what they read by what they expect.
package regular

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// ErrSymlink is the error Open wraps when the last component of its path
// is a symlink.
var ErrSymlink = errors.New("is a symlink")

// A TypeError is a path Open found to be something other than a regular
// file.
type TypeError struct {
	Name string
	Mode fs.FileMode
}

// Error says what the path is instead: "x is a FIFO, not a regular file".
func (e *TypeError) Error() string {
	return e.Name + " is " + Describe(e.Mode) + ", not a regular file"
}

// Describe names the type of m for a user: "a directory", "a FIFO", ...
func Describe(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0, m&fs.ModeCharDevice != 0:
		return "a device"
	case m.IsRegular():
		return "a regular file"
	}
	return "an irregular file"
}

// Open opens name for reading if it is a regular file and returns it with
// what fstat said of it. A symlink is an error wrapping ErrSymlink (a
// *fs.PathError); anything else that is not a regular file a *TypeError;
// a missing file the open's own error, which matches fs.ErrNotExist.
func Open(name string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, nil, &fs.PathError{Op: "open", Path: name, Err: ErrSymlink}
	}
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &TypeError{Name: name, Mode: fi.Mode()}
	}
	return f, fi, nil
}

// ReadLimited reads the regular file name, with Open's checks and errors:
// all of it, or, when it holds more than limit bytes, its first limit
// bytes and tooBig. It uses the system calls directly, without an
// *os.File and the runtime's poller, and a buffer of the file's size: a
// command about one package reads every other manifest of its source for
// their ids, and validation with a cache every manifest for its key, and
// this halves the cost of each read. On Linux they are raw (sys_linux.go).
func ReadLimited(name string, limit int64) (data []byte, tooBig bool, err error) {
	var fd int
	for {
		fd, err = open(name, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC)
		if err != syscall.EINTR {
			break
		}
	}
	if err == syscall.ELOOP {
		return nil, false, &fs.PathError{Op: "open", Path: name, Err: ErrSymlink}
	}
	if err != nil {
		return nil, false, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	defer closeFD(fd)
	var st syscall.Stat_t
	if err := fstat(fd, &st); err != nil {
		return nil, false, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		mode := fs.ModeIrregular
		if fi, err := os.Lstat(name); err == nil {
			mode = fi.Mode()
		}
		return nil, false, &TypeError{Name: name, Mode: mode}
	}
	// One byte more than the file holds, or than the limit, tells its end
	// (or that it grew) from a full buffer.
	buf := make([]byte, min(st.Size, limit)+1)
	n := 0
	for n < len(buf) {
		m, err := read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, false, &fs.PathError{Op: "read", Path: name, Err: err}
		}
		if m == 0 {
			break
		}
		n += m
	}
	if int64(n) > limit {
		return buf[:limit], true, nil
	}
	return buf[:n], false, nil
}
