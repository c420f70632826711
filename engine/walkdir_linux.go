package engine

import (
	"encoding/binary"
	"io"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"dalo/internal/rawsys"
)

// fdDir is a directory the walk holds open: its entries are listed with
// getdents, which gives their types, and a regular file is stated relative
// to it (fstatat), so that the kernel resolves one name, not the path from
// the root, and no *os.File is made for it. The walk of package and skill
// directories was a fifth of a cold validation of packages with files of
// their own, most of it in these system calls, which it makes raw
// (package rawsys).
type fdDir struct{ fd int }

// walkCalls counts the walk's system calls: a test holds a skill to the
// ones its checks need.
var walkCalls atomic.Int64

func openWalkDir(path string) (walkDir, error) {
	fd, err := openDir(unix.AT_FDCWD, path, 0)
	if err != nil {
		return nil, err
	}
	return fdDir{fd}, nil
}

// openRealDir opens the directory at path when its last component is a
// directory, not a symlink to one.
func openRealDir(path string) (walkDir, error) {
	fd, err := openDir(unix.AT_FDCWD, path, unix.O_NOFOLLOW)
	if err != nil {
		return nil, err
	}
	return fdDir{fd}, nil
}

// pathOpens counts the opens of the walk and of member files made by a
// path from the root, not by a name relative to a directory held open: a
// test holds the members in a layout directory to none.
var pathOpens atomic.Int64

func openDir(dirfd int, name string, flags int) (int, error) {
	if dirfd == unix.AT_FDCWD {
		pathOpens.Add(1)
	}
	for {
		walkCalls.Add(1)
		fd, err := rawsys.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|flags, 0)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// sub opens the directory entry name, never through a symlink: the
// listing said it is a directory.
func (d fdDir) sub(name string) (walkDir, error) {
	fd, err := openDir(d.fd, name, unix.O_NOFOLLOW)
	if err != nil {
		return nil, err
	}
	return fdDir{fd}, nil
}

func (d fdDir) close() {
	walkCalls.Add(1)
	rawsys.Close(d.fd)
}

// readHead reads the regular file name in d: of its first limit bytes
// (no more than the size fstat gives), those frontMatterHead says the
// front matter check needs, in a first read of headChunk bytes and, only
// when they hold no closing --- line, reads of what is left; what the
// check reads of them (frontMatterText) is copied out of a reused buffer,
// so that a long SKILL.md with short front matter costs an allocation of
// its front matter's YAML, not of the limit, and a file read whole still
// costs one read and no second one to find its end. When check, given
// the YAML in the buffer itself, can check it (Rules.plainFindings), not
// even that is copied: the text holds only what check found.
func (d fdDir) readHead(name string, limit int64, check func(yaml string) ([]fmFinding, bool)) (statInfo, fmText, error) {
	return readHeadAt(d.fd, name, limit, check)
}

// readFileHead is fdDir.readHead of the file at path.
func readFileHead(path string, limit int64) (statInfo, fmText, error) {
	return readHeadAt(unix.AT_FDCWD, path, limit, nil)
}

// headChunk is readHead's first read: more than the front matter of
// nearly every skill and agent, less than the front matter limit.
const headChunk = 4 << 10

// maxHeadBuffer bounds the buffer a long front matter grows and
// headBuffers keeps for the next: a buffer made for each one was memory
// the kernel faulted in, since dalo collects no garbage while it
// validates.
const maxHeadBuffer = 128 << 10

var headBuffers = sync.Pool{New: func() any {
	b := make([]byte, headChunk)
	return &b
}}

func readHeadAt(dirfd int, name string, limit int64, check func(yaml string) ([]fmFinding, bool)) (statInfo, fmText, error) {
	fd, st, err := openRegularAt(dirfd, name)
	if err != nil {
		return statInfo{}, fmText{}, err
	}
	defer closeFD(fd)
	want := int(min(st.size, limit))
	bp := headBuffers.Get().(*[]byte)
	defer headBuffers.Put(bp)
	buf := (*bp)[:min(want, headChunk)]
	n, err := readFull(fd, buf)
	if err != nil {
		return statInfo{}, fmText{}, err
	}
	k := frontMatterHead(buf[:n])
	if k < 0 && n == len(buf) && n < want {
		// The front matter goes on past the first read: read on to the
		// limit, as frontMatter must see all of it to say where it ends.
		more := (*bp)[:cap(*bp)]
		if len(more) < want {
			more = make([]byte, want)
			copy(more, buf)
			if want <= maxHeadBuffer {
				*bp = more // kept for the next long front matter
			}
		}
		more = more[:want]
		m, err := readFull(fd, more[n:])
		if err != nil {
			return statInfo{}, fmText{}, err
		}
		buf, n = more, n+m
		k = frontMatterHead(buf[:n])
	}
	head := buf[:n]
	if k >= 0 {
		head = head[:k]
	}
	if check != nil {
		// A view of the buffer, not a copy: check keeps nothing of it.
		if opened, from, to, _ := frontMatterSpan(head); opened && to > from {
			if found, ok := check(unsafe.String(&head[from], to-from)); ok {
				return st, fmText{opened: true, closed: true, checked: true, found: found}, nil
			}
		}
	}
	return st, frontMatterText(head), nil
}

// openRegular opens the regular file name in d, as openRegularAt does.
func (d fdDir) openRegular(name string) (fdFile, statInfo, error) {
	fd, st, err := openRegularAt(d.fd, name)
	return fdFile(fd), st, err
}

// openRegularAt opens name in dirfd for reading, without following a
// symlink or blocking, and returns it with its fstat when it is a regular
// file; anything else is an error, and the caller leaves the file to the
// way that says why.
func openRegularAt(dirfd int, name string) (int, statInfo, error) {
	if dirfd == unix.AT_FDCWD {
		pathOpens.Add(1)
	}
	var fd int
	var err error
	for {
		walkCalls.Add(1)
		fd, err = rawsys.Openat(dirfd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return -1, statInfo{}, err
	}
	var st syscall.Stat_t
	walkCalls.Add(1)
	if err := rawsys.Fstat(fd, &st); err != nil {
		closeFD(fd)
		return -1, statInfo{}, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		closeFD(fd)
		return -1, statInfo{}, unix.EINVAL
	}
	return fd, statInfo{name: name, size: st.Size, mode: fileMode(st.Mode), mtime: time.Unix(st.Mtim.Unix())}, nil
}

// An fdFile is a file fdDir.openRegular opened, read with raw system calls
// as an io.Reader.
type fdFile int

func (f fdFile) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	for {
		walkCalls.Add(1)
		n, err := rawsys.Read(int(f), b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		if n == 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

func (f fdFile) close() { closeFD(int(f)) }

// readFull reads fd into buf until buf is full or the file ends.
func readFull(fd int, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		walkCalls.Add(1)
		m, err := rawsys.Read(fd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, err
		}
		if m == 0 {
			break
		}
		n += m
	}
	return n, nil
}

func closeFD(fd int) {
	walkCalls.Add(1)
	rawsys.Close(fd)
}

var direntBuffers = sync.Pool{New: func() any {
	b := make([]byte, 8<<10)
	return &b
}}

// entries lists the directory, sorted by name, as os.ReadDir does. The
// names of each getdents read share one string, and the entries one
// slice sized for them: two allocations for a read, not one a name and
// those of a growing slice.
func (d fdDir) entries() ([]dirEntry, error) {
	bp := direntBuffers.Get().(*[]byte)
	defer direntBuffers.Put(bp)
	buf := *bp
	var ents []dirEntry
	for {
		walkCalls.Add(1)
		n, err := rawsys.Getdents(d.fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			break
		}
		count, size := 0, 0
		if err := eachDirent(buf[:n], func(name []byte, _ byte) error {
			count++
			size += len(name)
			return nil
		}); err != nil {
			return nil, err
		}
		ents = slices.Grow(ents, count)
		var names strings.Builder
		names.Grow(size)
		eachDirent(buf[:n], func(name []byte, _ byte) error {
			names.Write(name)
			return nil
		})
		all, at := names.String(), 0
		if err := eachDirent(buf[:n], func(name []byte, typ byte) error {
			e := dirEntry{name: all[at : at+len(name)]}
			at += len(name)
			switch typ {
			case unix.DT_REG:
			case unix.DT_DIR:
				e.typ = fs.ModeDir
			case unix.DT_LNK:
				e.typ = fs.ModeSymlink
			case unix.DT_FIFO:
				e.typ = fs.ModeNamedPipe
			case unix.DT_SOCK:
				e.typ = fs.ModeSocket
			case unix.DT_CHR:
				e.typ = fs.ModeDevice | fs.ModeCharDevice
			case unix.DT_BLK:
				e.typ = fs.ModeDevice
			default: // DT_UNKNOWN: the file system does not say
				fi, err := d.info(e.name)
				if err != nil {
					return err
				}
				e.typ = fi.Mode().Type()
			}
			ents = append(ents, e)
			return nil
		}); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(ents, func(a, b dirEntry) int { return strings.Compare(a.name, b.name) })
	return ents, nil
}

// eachDirent calls f with the name and type of each record of a getdents
// read, but for ".", ".." and deleted entries (inode 0).
func eachDirent(buf []byte, f func(name []byte, typ byte) error) error {
	// struct linux_dirent64: d_ino (8 bytes), d_off (8), d_reclen (2),
	// d_type (1), d_name, NUL-terminated.
	for off := 0; off+19 <= len(buf); {
		reclen := int(binary.NativeEndian.Uint16(buf[off+16:]))
		if reclen < 19 || off+reclen > len(buf) {
			return unix.EIO
		}
		rec := buf[off : off+reclen]
		off += reclen
		name := rec[19:]
		if i := slices.Index(name, 0); i >= 0 {
			name = name[:i]
		}
		if binary.NativeEndian.Uint64(rec) == 0 || string(name) == "." || string(name) == ".." {
			continue
		}
		if err := f(name, rec[18]); err != nil {
			return err
		}
	}
	return nil
}

// info states the entry name without following a symlink.
func (d fdDir) info(name string) (statInfo, error) {
	var st syscall.Stat_t
	for {
		walkCalls.Add(1)
		err := rawsys.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == nil {
			break
		}
		if err != unix.EINTR {
			return statInfo{}, err
		}
	}
	return statInfo{name: name, size: st.Size, mode: fileMode(st.Mode), mtime: time.Unix(st.Mtim.Unix())}, nil
}

// fileMode is os's fs.FileMode of a stat's st_mode.
func fileMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	}
	if m&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}
