//go:build linux

// Command walkfloor does what floor does and, besides, the least that the
// draft's bounds on file traversal ask of any validator: it lists every
// directory under the source's plugins/, skills/, agents/ and
// instructions/ folders, states every file it lists (its size and mode,
// which the limits on entries, sizes and executable entries are of), and
// opens, states and reads the first 4 KiB of every member's Markdown
// file (its front matter is at its top). It checks nothing and follows no
// symlink.
//
// floor is the yardstick, and bench/validate.sh judges dalo by
// it; walkfloor says how much of what is left the kernel alone asks.
// Where every member has a folder of its own (a skill's scripts/ and
// references/), listing and stating them costs more than reading the
// manifests: no validator that walks what it stages can be within a small
// multiple of floor there. It makes the system calls dalo's walk makes on
// Linux, no more: an openat, getdents64 until the end and a close for a
// directory, an fstatat for a file, an openat, fstat, read and close for
// a member's Markdown file and a manifest.
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

	"github.com/pelletier/go-toml/v2"
	"golang.org/x/sys/unix"
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
		fd, err := unix.Open(filepath.Join(src, top), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err == unix.ENOENT {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", top, err)
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
	defer unix.Close(fd)
	w.dirs++
	type entry struct {
		name string
		typ  byte
	}
	var ents []entry
	for {
		n, err := unix.Getdents(fd, w.dirents)
		if err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
		if n == 0 {
			break
		}
		// struct linux_dirent64: ino (8), off (8), reclen (2), type (1), name.
		for b := w.dirents[:n]; len(b) > 0; {
			reclen := int(binary.NativeEndian.Uint16(b[16:18]))
			name := b[19:reclen]
			if i := bytes.IndexByte(name, 0); i >= 0 {
				name = name[:i]
			}
			if s := string(name); s != "." && s != ".." {
				ents = append(ents, entry{s, b[18]})
			}
			b = b[reclen:]
		}
	}
	for _, e := range ents {
		typ := e.typ
		if typ == unix.DT_UNKNOWN {
			var st unix.Stat_t
			if err := unix.Fstatat(fd, e.name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				return fmt.Errorf("%s/%s: %v", path, e.name, err)
			}
			typ = dirType(st.Mode)
		}
		switch {
		case typ == unix.DT_DIR:
			sub, err := unix.Openat(fd, e.name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
			if err != nil {
				return fmt.Errorf("%s/%s: %v", path, e.name, err)
			}
			if err := w.dir(sub, path+"/"+e.name, depth+1); err != nil {
				return err
			}
		case typ == unix.DT_REG && depth == 1 && e.name == "PLUGIN.toml" && strings.HasPrefix(path, "plugins/"):
			if err := w.manifest(fd, path, e.name); err != nil {
				return err
			}
		case typ == unix.DT_REG && member(path, depth, e.name):
			if err := w.markdown(fd, path, e.name); err != nil {
				return err
			}
		case typ == unix.DT_REG:
			w.files++
			var st unix.Stat_t
			if err := unix.Fstatat(fd, e.name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				return fmt.Errorf("%s/%s: %v", path, e.name, err)
			}
		}
	}
	return nil
}

// markdown opens, states and reads the head of the file name in the
// directory fd.
func (w *walk) markdown(fd int, path, name string) error {
	w.files++
	f, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("%s/%s: %v", path, name, err)
	}
	defer unix.Close(f)
	var st unix.Stat_t
	if err := unix.Fstat(f, &st); err != nil {
		return fmt.Errorf("%s/%s: %v", path, name, err)
	}
	n, err := unix.Read(f, w.head[:min(int64(len(w.head)), st.Size)])
	if err != nil {
		return fmt.Errorf("%s/%s: %v", path, name, err)
	}
	w.read += int64(n)
	return nil
}

// manifest reads the manifest name in the directory fd whole and decodes
// it, as floor does.
func (w *walk) manifest(fd int, path, name string) error {
	f, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("%s/%s: %v", path, name, err)
	}
	defer unix.Close(f)
	var st unix.Stat_t
	if err := unix.Fstat(f, &st); err != nil {
		return fmt.Errorf("%s/%s: %v", path, name, err)
	}
	b := make([]byte, st.Size)
	for n := 0; n < len(b); {
		m, err := unix.Read(f, b[n:])
		if err != nil {
			return fmt.Errorf("%s/%s: %v", path, name, err)
		}
		if m == 0 {
			b = b[:n]
			break
		}
		n += m
	}
	var m map[string]any
	if err := toml.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("%s/%s: %v", path, name, err)
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

// dirType is the getdents64 type of a stat mode.
func dirType(mode uint32) byte {
	switch mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return unix.DT_DIR
	case unix.S_IFREG:
		return unix.DT_REG
	}
	return unix.DT_UNKNOWN
}
