//go:build linux

// Command walkfloor does what floor does and, besides, the least that the
// draft's bounds on file traversal ask of any validator: it lists every
// directory under the source's plugins/, skills/, agents/ and
// instructions/ folders, states every file it lists (its size and mode,
// which the limits on entries, sizes and executable entries are of), and
// opens, states and reads the first 4 KiB of every member's Markdown
// file (its front matter is at its top). It checks nothing and follows no
// symlink below the top folders.
//
// floor is the yardstick, and bench/validate.sh judges dalo by
// it; walkfloor says how much of what is left the walk alone asks. Where
// every member has a folder of its own (a skill's scripts/ and
// reference/), listing and stating them costs more than reading the
// manifests: no validator that walks what it stages can be within a small
// multiple of floor there. It makes the system calls dalo's walk makes on
// Linux, no more, and makes them as dalo does, raw (internal/rawsys): an
// openat, getdents64 until the end and a close for a directory, an
// fstatat for a file, an openat, fstat, read and close for a member's
// Markdown file and a manifest.
//
//	go run ./bench/walkfloor SOURCE
package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/pelletier/go-toml/v2"

	"dalo/internal/rawsys"
)

// headBytes is how much of a Markdown file is read: the front matter of
// nearly every member is in its first 4 KiB.
const headBytes = 4 << 10

type walk struct {
	dirents   []byte // getdents64's buffer
	head      []byte
	dirs      int
	files     int
	read      int64
	manifests int
	keys      int
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: walkfloor SOURCE")
		os.Exit(2)
	}
	w, err := walkSource(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("%d manifests, %d top-level keys; %d directories, %d files, %d bytes of Markdown read\n",
		w.manifests, w.keys, w.dirs, w.files, w.read)
}

// walkSource walks the source src's top folders.
func walkSource(src string) (*walk, error) {
	w := &walk{dirents: make([]byte, 8<<10), head: make([]byte, headBytes)}
	for _, top := range []string{"plugins", "skills", "agents", "instructions"} {
		path := filepath.Join(src, top)
		fd, err := rawsys.Openat(rawsys.AtFDCWD, path, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if err == syscall.ENOENT {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
		if err := w.dir(fd, top, 0); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// dir lists the open directory fd (path, for errors; depth below the
// source's top folders), walks what it holds and closes it.
func (w *walk) dir(fd int, path string, depth int) error {
	defer rawsys.Close(fd)
	w.dirs++
	type entry struct {
		name string
		typ  byte
	}
	var ents []entry
	for {
		n, err := rawsys.Getdents(fd, w.dirents)
		if err != nil {
			return &os.PathError{Op: "getdents64", Path: path, Err: err}
		}
		if n == 0 {
			break
		}
		// struct linux_dirent64: d_ino (8 bytes), d_off (8), d_reclen (2),
		// d_type (1), d_name, NUL-terminated.
		for b := w.dirents[:n]; len(b) > 0; {
			reclen := 0
			if len(b) >= 19 {
				reclen = int(binary.NativeEndian.Uint16(b[16:18]))
			}
			if reclen < 19 || reclen > len(b) {
				return &os.PathError{Op: "getdents64", Path: path, Err: syscall.EIO}
			}
			name := b[19:reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if s := string(name); binary.NativeEndian.Uint64(b) != 0 && s != "." && s != ".." {
				ents = append(ents, entry{s, b[18]})
			}
			b = b[reclen:]
		}
	}
	for _, e := range ents {
		sub := path + "/" + e.name
		typ, stated := e.typ, false
		if typ == syscall.DT_UNKNOWN {
			var st syscall.Stat_t
			if err := rawsys.Fstatat(fd, e.name, &st, rawsys.AtSymlinkNoFollow); err != nil {
				return &os.PathError{Op: "fstatat", Path: sub, Err: err}
			}
			typ, stated = direntType(st.Mode), true
		}
		switch {
		case typ == syscall.DT_DIR:
			d, err := rawsys.Openat(fd, e.name, syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
			if err != nil {
				return &os.PathError{Op: "open", Path: sub, Err: err}
			}
			if err := w.dir(d, sub, depth+1); err != nil {
				return err
			}
		case typ == syscall.DT_REG && depth == 1 && e.name == "PLUGIN.toml" && strings.HasPrefix(path, "plugins/"):
			if err := w.manifest(fd, sub, e.name); err != nil {
				return err
			}
		case typ == syscall.DT_REG && member(path, depth, e.name):
			if err := w.markdown(fd, sub, e.name); err != nil {
				return err
			}
		case typ == syscall.DT_REG:
			w.files++
			if stated {
				continue
			}
			var st syscall.Stat_t
			if err := rawsys.Fstatat(fd, e.name, &st, rawsys.AtSymlinkNoFollow); err != nil {
				return &os.PathError{Op: "fstatat", Path: sub, Err: err}
			}
		}
	}
	return nil
}

// open opens the regular file name in the directory fd, without
// following a symlink, and states it.
func open(fd int, path, name string) (int, syscall.Stat_t, error) {
	var st syscall.Stat_t
	f, err := rawsys.Openat(fd, name, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
	if err != nil {
		return -1, st, &os.PathError{Op: "open", Path: path, Err: err}
	}
	if err := rawsys.Fstat(f, &st); err != nil {
		rawsys.Close(f)
		return -1, st, &os.PathError{Op: "fstat", Path: path, Err: err}
	}
	return f, st, nil
}

// markdown opens, states and reads the head of the file name in the
// directory fd (path, for errors).
func (w *walk) markdown(fd int, path, name string) error {
	w.files++
	f, st, err := open(fd, path, name)
	if err != nil {
		return err
	}
	defer rawsys.Close(f)
	if st.Size == 0 {
		return nil
	}
	n, err := rawsys.Read(f, w.head[:min(int64(len(w.head)), st.Size)])
	if err != nil {
		return &os.PathError{Op: "read", Path: path, Err: err}
	}
	w.read += int64(n)
	return nil
}

// manifest reads the manifest name in the directory fd whole and decodes
// it, as floor does.
func (w *walk) manifest(fd int, path, name string) error {
	f, st, err := open(fd, path, name)
	if err != nil {
		return err
	}
	defer rawsys.Close(f)
	b := make([]byte, st.Size)
	for n := 0; n < len(b); {
		m, err := rawsys.Read(f, b[n:])
		if err != nil {
			return &os.PathError{Op: "read", Path: path, Err: err}
		}
		if m == 0 {
			b = b[:n]
			break
		}
		n += m
	}
	var m map[string]any
	if err := toml.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	w.manifests++
	w.keys += len(m)
	return nil
}

// member reports whether the file name in the directory path, depth
// below the source's top folders, is a member's Markdown: a skill's
// SKILL.md, an agent's or an instruction's file.
func member(path string, depth int, name string) bool {
	switch {
	case depth == 1 && strings.HasPrefix(path, "skills/"):
		return name == "SKILL.md"
	case depth == 0 && (path == "agents" || path == "instructions"):
		return strings.HasSuffix(name, ".md")
	}
	return false
}

// direntType is the getdents64 type of a stat mode.
func direntType(mode uint32) byte {
	switch mode & syscall.S_IFMT {
	case syscall.S_IFDIR:
		return syscall.DT_DIR
	case syscall.S_IFREG:
		return syscall.DT_REG
	}
	return syscall.DT_UNKNOWN
}
