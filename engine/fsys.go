package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"dalo/internal/regular"
)

// readBounded reads the regular file at name, at most limit bytes (see
// package regular: no symlink followed, no FIFO waited on). tooBig reports
// a file longer than limit; the rest is not read. A symlink is an error
// matching regular.ErrSymlink.
func readBounded(name string, limit int64) (data []byte, tooBig bool, err error) {
	data, tooBig, err = regular.ReadLimited(name, limit)
	var te *regular.TypeError
	if errors.As(err, &te) {
		return nil, false, fmt.Errorf("not a regular file (%s)", regular.Describe(te.Mode))
	}
	if err != nil || tooBig {
		return nil, tooBig, err
	}
	return data, false, nil
}

// localPath checks that p names a path inside a directory: relative, with
// forward slashes, no empty, "." or ".." component and no backslash. It
// returns why not, or "".
func localPath(p string) string {
	switch {
	case p == "":
		return "is empty"
	case strings.HasPrefix(p, "/"):
		return "is absolute"
	case strings.ContainsRune(p, '\\'):
		return "contains a backslash; use forward slashes"
	case strings.ContainsRune(p, 0):
		return "contains a NUL byte"
	}
	for _, c := range strings.Split(p, "/") {
		switch c {
		case "..":
			return "escapes the package with .."
		case ".", "":
			return "is not a clean path (it has an empty or . component)"
		}
	}
	return ""
}

// lstatsInside counts lstatInside's calls: a test holds a package's tool
// files to the one stat the walk of its directory made.
var lstatsInside atomic.Int64

// lstatInside checks every component of rel under root without following
// symlinks: each directory on the way must be a real directory and the last
// component a regular file. It returns the file's info or why not.
func lstatInside(root, rel string) (fs.FileInfo, string) {
	return lstatInsideKnown(root, rel, nil)
}

// componentLstats counts the components lstatInside stated: a test holds
// a source's members to one statement of each layout directory.
var componentLstats atomic.Int64

// lstatInsideKnown is lstatInside that skips the directories on the way
// that dirs (when not nil) holds, as paths, and adds to it those it
// proved real directories: the members of a source are all under the
// few directories of its layout (skills, agents, instructions), which
// need stating once a run, not once a member.
func lstatInsideKnown(root, rel string, dirs map[string]bool) (fs.FileInfo, string) {
	lstatsInside.Add(1)
	parts := strings.Split(rel, "/")
	cur := root
	for i, c := range parts {
		cur = filepath.Join(cur, c)
		if i < len(parts)-1 && dirs[cur] {
			continue
		}
		componentLstats.Add(1)
		fi, err := os.Lstat(cur)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				// Name the path that was looked for, then what is missing
				// on the way to it when that is a directory.
				dir := ""
				if i < len(parts)-1 {
					dir = path.Join(parts[:i+1]...)
				}
				return nil, notExist(rel, dir)
			}
			return nil, fmt.Sprintf("%s cannot be read: %v", path.Join(parts[:i+1]...), unwrapPathError(err))
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Sprintf("%s is a symlink; paths cannot rely on symlinks", path.Join(parts[:i+1]...))
		}
		if i < len(parts)-1 {
			if !fi.IsDir() {
				return nil, fmt.Sprintf("%s is not a directory", path.Join(parts[:i+1]...))
			}
			if dirs != nil {
				dirs[cur] = true
			}
			continue
		}
		if !fi.Mode().IsRegular() {
			return nil, fmt.Sprintf("%s is %s, not a regular file", rel, regular.Describe(fi.Mode()))
		}
		return fi, ""
	}
	return nil, "is empty"
}

// notExist says that rel does not exist, and, when it is not rel itself
// that is missing but the directory dir on the way to it, that dir is not
// there: lstatInside's words, and treeStats.missing's.
func notExist(rel, dir string) string {
	if dir != "" {
		return fmt.Sprintf("%s does not exist: there is no directory %s", rel, dir)
	}
	return fmt.Sprintf("%s does not exist", rel)
}

// notThere is notExist's words for rel when err, of an open relative to
// a directory proved real, says the name dir (rel itself when "") is not
// there, and "" for any other error: lstatInside would say the same of
// it, and stating it again was a second system call for each member a
// source lacks.
func notThere(rel, dir string, err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return notExist(rel, dir)
	}
	return ""
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// onFile reports into l's list but about file: the walk names the entry at
// fault, not the manifest that owns the directory.
type onFile struct {
	l    *diagList
	file string
}

func (l *diagList) at(file string) onFile { return onFile{l, file} }

func (o onFile) errorf(code string, pos Pos, field, format string, args ...any) {
	o.l.errorf(code, pos, field, format, args...)
	o.l.diags[len(o.l.diags)-1].File = o.file
}

func (o onFile) warnf(code string, pos Pos, field, format string, args ...any) {
	o.l.warnf(code, pos, field, format, args...)
	o.l.diags[len(o.l.diags)-1].File = o.file
}

// treeStats walks a package or skill directory without following symlinks
// and enforces the entry, depth and size limits. It stops at the first
// limit broken, so that a hostile tree costs at most the entry limit.
type treeStats struct {
	entries int
	bytes   int64
	// seen, when the caller asks for it, is what the walk learned of each
	// entry, by its path under the walked directory: a package's tool
	// files are looked up in it rather than stated a second time. It
	// holds every entry the walk listed: a symlink or special file by
	// its type, and a file the walk could not state or found too large
	// as fs.ModeIrregular, so that a path it does not hold is missing.
	seen map[string]statInfo
	// whole reports that the walk read every directory to its end.
	whole bool
	// warned counts the symlinks, special files and files too large
	// the walk warned of (W064, W065, E068).
	warned int
	// topSearched says the walk opened or stated something in the
	// walked directory itself, as searched does of a directory in seen.
	topSearched bool
}

// lstat answers lstatInside for rel from what the walk saw, when it saw
// every component of rel and they are directories on the way to a regular
// file; false otherwise (and lstatInside then says why not).
func (st *treeStats) lstat(rel string) (fs.FileInfo, bool) {
	if st == nil || !st.whole || st.seen == nil {
		return nil, false
	}
	for i := 0; i < len(rel); i++ {
		if rel[i] != '/' {
			continue
		}
		if fi, ok := st.seen[rel[:i]]; !ok || !fi.mode.IsDir() {
			return nil, false
		}
	}
	fi, ok := st.seen[rel]
	if !ok || !fi.mode.IsRegular() {
		return nil, false
	}
	return fi, true
}

// missing answers lstatInside for rel, a clean relative path, from what
// the walk saw, when a component of rel is missing after directories
// only: why, in lstatInside's words, and true; false when the walk did
// not see all of the tree or rel is not missing so (and lstatInside then
// says why not). A tool listing a hundred files of a folder not checked
// in (node_modules) stated each one's way again, for nothing the walk had
// not seen (TestMissingToolFilesNotStated).
//
// A name the walk did not list is missing only where stating it would
// say so: in a directory the walk proved it may search (it opened or
// stated something in it, or it is the top, whose manifest was read),
// and of a length the kernel takes (a name longer than maxNameBytes, or
// a path longer than maxPathBytes from base, the length of the walked
// directory's path, cannot be stated at all).
func (st *treeStats) missing(base int, rel string) (string, bool) {
	if st == nil || !st.whole || st.seen == nil || rel == "" || path.Clean(rel) != rel || strings.HasPrefix(rel, "../") || path.IsAbs(rel) || base+1+len(rel) >= maxPathBytes {
		return "", false
	}
	parent := -1 // where the component's directory ends in rel; -1 the top
	for i := 0; i <= len(rel); i++ {
		if i < len(rel) && rel[i] != '/' {
			continue
		}
		fi, ok := st.seen[rel[:i]]
		switch {
		case !ok:
			searched := st.topSearched
			if parent >= 0 {
				searched = st.seen[rel[:parent]].searched
			}
			if !searched || i-parent-1 > maxNameBytes {
				return "", false
			}
			dir := ""
			if i < len(rel) {
				dir = rel[:i]
			}
			return notExist(rel, dir), true
		case i == len(rel) || !fi.mode.IsDir():
			return "", false
		}
		parent = i
	}
	return "", false
}

// maxNameBytes and maxPathBytes are the longest name and path Linux
// states (NAME_MAX, PATH_MAX less its NUL); other systems' are no longer.
const (
	maxNameBytes = 255
	maxPathBytes = 4096
)

// seenIndexes holds the seen maps of walks done, for the next: as a
// manifest's index of spans (spanIndex), a map not reused is memory the
// kernel faults in. The map holds statInfo, not fs.FileInfo: boxing each
// entry's was an allocation a file.
var (
	seenIndexes = sync.Pool{}
	// seenIndexesMade counts the maps made, not reused: a test holds
	// the packages one worker checks to one.
	seenIndexesMade atomic.Int64
)

// seenIndex returns an empty seen map, one released before if it can.
func seenIndex() map[string]statInfo {
	if m, ok := seenIndexes.Get().(map[string]statInfo); ok {
		return m
	}
	seenIndexesMade.Add(1)
	return make(map[string]statInfo)
}

// release gives st's seen map to the next walk that records; st.lstat
// knows nothing after.
// A map of more than maxPooledIndex entries is dropped instead, as a
// manifest's index is (manifest.release).
func (st *treeStats) release() {
	if st.seen != nil && len(st.seen) <= maxPooledIndex {
		clear(st.seen)
		seenIndexes.Put(st.seen)
	}
	st.seen = nil
}

// A walkDir is a directory the walk lists (walkdir_linux.go).
type walkDir interface {
	entries() ([]dirEntry, error) // sorted by name
	// info and readHead give a statInfo, not an fs.FileInfo: most of
	// the walk asks only its size, and boxing it would allocate.
	info(name string) (statInfo, error)
	// readHead opens the regular file name, without following a
	// symlink, and returns its info and, of its first limit bytes,
	// those the front matter check reads (frontMatterHead), or what
	// check, when not nil and able to check them, found in them.
	readHead(name string, limit int64, check func(yaml string) ([]fmFinding, bool)) (statInfo, fmText, error)
	// openRegular opens the regular file name for reading, without
	// following a symlink, and returns it with its info.
	openRegular(name string) (fdFile, statInfo, error)
	sub(name string) (walkDir, error)
	close()
}

// A dirEntry is a name a directory lists and its type.
type dirEntry struct {
	name string
	typ  fs.FileMode
}

// walkTree walks the directory rel under root (see treeStats). With
// record, the result keeps what it saw of each entry.
func walkTree(root, rel string, lim *Limits, l *diagList, record bool) treeStats {
	d, err := openWalkDir(filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		st := treeStats{}
		if record {
			st.seen = seenIndex()
		}
		l.at(rel).errorf("E070", Pos{}, "", "directory %s cannot be read: %v", rel, unwrapPathError(err))
		return st
	}
	defer d.close()
	return walkOpen(d, nil, rel, lim, l, record, nil)
}

// An assetHead asks the walk of a skill's directory to read the first
// limit bytes of its file name at the top (SKILL.md) where it would state
// it: one open relative to the directory, an fstat that gives the size
// the walk counts, one read and a close, where stating it in the walk
// and reading it by its path made six system calls. read reports that
// data holds them; when not, the caller reads the file itself, and so
// reports why it cannot be read as it always did.
type assetHead struct {
	name  string
	limit int64
	check func(yaml string) ([]fmFinding, bool) // see walkDir.readHead
	data  fmText
	read  bool
}

// walkOpen is walkTree of the directory d, already open; top, when not
// nil, is its listing (entries), and head, when not nil, the file at its
// top to read while walking.
func walkOpen(top walkDir, topEnts []dirEntry, rel string, lim *Limits, l *diagList, record bool, head *assetHead) treeStats {
	var st treeStats
	if record {
		st.seen = seenIndex()
	}
	prefix := len(rel) + 1 // of an entry's name, to its path under rel
	// An entry's path is path.Join(relDir, e.name): a listed name is one
	// component, neither "." nor "..", so that under a clean rel it is the
	// two joined by a slash, built only when a diagnostic or seen needs it.
	clean := rel != "" && rel != "." && rel != "/" && path.Clean(rel) == rel
	join := func(dir, name string) string {
		if clean {
			return dir + "/" + name
		}
		return path.Join(dir, name)
	}
	var walk func(d walkDir, relDir string, depth int) bool
	walk = func(d walkDir, relDir string, depth int) bool {
		searched := false // something in d opened or stated
		if st.seen != nil {
			defer func() {
				switch {
				case !searched:
				case relDir == rel:
					st.topSearched = true
				default:
					k := relDir[prefix:]
					fi := st.seen[k]
					fi.searched = true
					st.seen[k] = fi
				}
			}()
		}
		ents, err := topEnts, error(nil)
		if depth > 0 || ents == nil {
			ents, err = d.entries()
		}
		if err != nil {
			l.at(relDir).errorf("E070", Pos{}, "", "directory %s cannot be read: %v", relDir, unwrapPathError(err))
			return false
		}
		for _, e := range ents {
			st.entries++
			if st.entries > lim.PackageEntries {
				l.at(rel).errorf("E066", Pos{}, "", "%s has more than %d entries", rel, lim.PackageEntries)
				return false
			}
			switch t := e.typ; {
			case t&fs.ModeSymlink != 0:
				name := join(relDir, e.name)
				if st.seen != nil {
					st.seen[name[prefix:]] = statInfo{name: e.name, mode: e.typ}
				}
				st.warned++
				l.at(name).warnf("W064", Pos{}, "", "%s is a symlink; it is not followed and cannot be staged", name)
			case t.IsDir():
				name := join(relDir, e.name)
				if st.seen != nil {
					st.seen[name[prefix:]] = statInfo{name: e.name, mode: e.typ}
				}
				if depth+1 > lim.DirectoryDepth {
					l.at(name).errorf("E067", Pos{}, "", "%s is nested deeper than %d directories", name, lim.DirectoryDepth)
					return false
				}
				sub, err := d.sub(e.name)
				if err != nil {
					l.at(name).errorf("E070", Pos{}, "", "directory %s cannot be read: %v", name, unwrapPathError(err))
					return false
				}
				searched = true
				ok := walk(sub, name, depth+1)
				sub.close()
				if !ok {
					return false
				}
			case t.IsRegular():
				fi, err := walkInfo(d, e.name, depth, head)
				searched = searched || err == nil
				if err != nil || fi.size > lim.FileBytes {
					name := join(relDir, e.name)
					if st.seen != nil {
						st.seen[name[prefix:]] = statInfo{name: e.name, mode: fs.ModeIrregular}
					}
					if err != nil {
						l.at(name).errorf("E070", Pos{}, "", "%s cannot be read: %v", name, unwrapPathError(err))
						continue
					}
					// Counting it towards the package limit too would
					// report one mistake twice.
					st.warned++
					l.at(name).errorf("E068", Pos{}, "", "%s is %d bytes, more than the %d-byte file limit", name, fi.size, lim.FileBytes)
					continue
				}
				if st.seen != nil {
					st.seen[join(relDir, e.name)[prefix:]] = fi
				}
				st.bytes += fi.size
				if st.bytes > lim.PackageBytes {
					l.at(rel).errorf("E069", Pos{}, "", "%s holds more than %d bytes", rel, lim.PackageBytes)
					return false
				}
			default:
				name := join(relDir, e.name)
				if st.seen != nil {
					st.seen[name[prefix:]] = statInfo{name: e.name, mode: t | fs.ModeIrregular}
				}
				st.warned++
				l.at(name).warnf("W065", Pos{}, "", "%s is %s; it is ignored and cannot be staged", name, regular.Describe(t))
			}
		}
		return true
	}
	st.whole = walk(top, rel, 0)
	return st
}

// walkInfo states the regular file name of d at depth, or, when it is
// head's file, reads it (see assetHead).
func walkInfo(d walkDir, name string, depth int, head *assetHead) (statInfo, error) {
	if depth == 0 && head != nil && name == head.name {
		if fi, data, err := d.readHead(name, head.limit, head.check); err == nil {
			head.data, head.read = data, true
			return fi, nil
		}
	}
	return d.info(name)
}

// statInfo is an fs.FileInfo of a stat.
type statInfo struct {
	name  string
	size  int64
	mode  fs.FileMode
	mtime time.Time
	// searched, of a directory a walk recorded, says the walk opened or
	// stated something in it: the directory may be searched, and a name
	// it does not hold is not there (treeStats.missing).
	searched bool
}

func (s statInfo) Name() string       { return s.name }
func (s statInfo) Size() int64        { return s.size }
func (s statInfo) Mode() fs.FileMode  { return s.mode }
func (s statInfo) ModTime() time.Time { return s.mtime }
func (s statInfo) IsDir() bool        { return s.mode.IsDir() }
func (s statInfo) Sys() any           { return nil }
