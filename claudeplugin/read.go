package claudeplugin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"dalo/engine"
	"dalo/internal/regular"
)

// A plugin is a Claude Code plugin directory as read, within the limits
// the rules set for a package.
type plugin struct {
	dir   string
	files map[string]int64 // regular files: slash path → size
	exec  map[string]bool  // the regular files with an executable bit
	dirs  map[string]bool  // directories, slash paths
	lim   engine.Limits
	// unread lists what the walk met but cannot carry: symlinks,
	// special files, .git.
	unread []Item
}

// readPlugin walks dir without following symlinks, bounded as a package
// is: entries, depth, file and total size.
func readPlugin(dir string, lim engine.Limits) (*plugin, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", dir)
	}
	p := &plugin{dir: dir, files: map[string]int64{}, exec: map[string]bool{}, dirs: map[string]bool{}, lim: lim}
	var entries int
	var total int64
	err = filepath.WalkDir(dir, func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, name)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if entries++; entries > lim.PackageEntries {
			return fmt.Errorf("%s has more than %d entries, the limit of a package", dir, lim.PackageEntries)
		}
		if strings.Count(rel, "/")+1 > lim.DirectoryDepth {
			return fmt.Errorf("%s is deeper than %d directories, the limit of a package", path.Join(dir, rel), lim.DirectoryDepth)
		}
		switch t := d.Type(); {
		case d.IsDir() && d.Name() == ".git":
			p.unread = append(p.unread, Item{rel + "/", "git's own data, not part of the plugin"})
			return fs.SkipDir
		case d.IsDir():
			p.dirs[rel] = true
		case t.IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			if info.Size() > lim.FileBytes {
				return fmt.Errorf("%s is larger than %d bytes, the limit of a file in a package", path.Join(dir, rel), lim.FileBytes)
			}
			if total += info.Size(); total > lim.PackageBytes {
				return fmt.Errorf("%s holds more than %d bytes, the limit of a package", dir, lim.PackageBytes)
			}
			p.files[rel] = info.Size()
			p.exec[rel] = info.Mode()&0o111 != 0
		default:
			p.unread = append(p.unread, Item{rel, regular.Describe(t) + ", which a package cannot hold"})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// read returns the bytes of the regular file rel, reading no more than
// its size when walked and max.
func (p *plugin) read(rel string, max int64) ([]byte, error) {
	name := filepath.Join(p.dir, filepath.FromSlash(rel))
	f, fi, err := regular.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", name, max)
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", name, max)
	}
	return b, nil
}

// has reports whether the plugin holds the regular file rel.
func (p *plugin) has(rel string) bool {
	_, ok := p.files[rel]
	return ok
}

// head returns at most the first n bytes of the regular file rel.
func (p *plugin) head(rel string, n int) ([]byte, error) {
	f, _, err := regular.Open(filepath.Join(p.dir, filepath.FromSlash(rel)))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, int64(n)))
}

// under returns the regular files below the directory rel ("" for all),
// sorted.
func (p *plugin) under(rel string) []string {
	var out []string
	for f := range p.files {
		if rel == "" || strings.HasPrefix(f, rel+"/") {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}

// An object is a JSON object with its keys in the order written (the
// order a report lists them in); a repeated key keeps its last value, as
// JSON.parse does.
type object struct {
	keys   []string
	values map[string]json.RawMessage
}

func decodeObject(data []byte) (*object, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	o := &object{values: map[string]json.RawMessage{}}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if _, dup := o.values[k]; !dup {
			o.keys = append(o.keys, k)
		}
		o.values[k] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON object")
	}
	return o, nil
}

// readObject reads the JSON object in the file rel of the plugin.
func (p *plugin) readObject(rel string) (*object, error) {
	b, err := p.read(rel, int64(p.lim.ManifestBytes))
	if err != nil {
		return nil, err
	}
	if bytes.HasPrefix(b, []byte("\uFEFF")) {
		return nil, fmt.Errorf("%s:1:1: the file starts with a UTF-8 byte order mark (U+FEFF), which JSON does not allow; save it without", rel)
	}
	// Checked whole first: a syntax error's offset is then the file's,
	// and a file cut short says so (the decoder's tokens say only EOF).
	if err := json.Unmarshal(b, new(json.RawMessage)); err != nil {
		return nil, fmt.Errorf("%s%s: %v", rel, syntaxAt(b, err), err)
	}
	o, err := decodeObject(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", rel, err)
	}
	return o, nil
}

// syntaxAt is where in data the JSON syntax error err is, as ":LINE:COL"
// (1-based; columns count bytes), or "" for another error.
func syntaxAt(data []byte, err error) string {
	var se *json.SyntaxError
	if !errors.As(err, &se) || se.Offset < 1 || se.Offset > int64(len(data)) {
		return ""
	}
	at := int(se.Offset) - 1 // the offending byte
	line := bytes.Count(data[:at], []byte("\n")) + 1
	return fmt.Sprintf(":%d:%d", line, at-bytes.LastIndexByte(data[:at], '\n'))
}

// str decodes the value of key as a string; ok is false when it is absent
// or not a string.
func (o *object) str(key string) (string, bool) {
	var s string
	if v, ok := o.values[key]; ok && json.Unmarshal(v, &s) == nil {
		return s, true
	}
	return "", false
}

// paths decodes a value that is a path or a list of paths, as plugin.json
// writes its component paths, into clean slash paths relative to the
// plugin root ("." for the root itself).
func paths(v json.RawMessage) ([]string, error) {
	var one string
	var many []string
	if json.Unmarshal(v, &one) == nil {
		many = []string{one}
	} else if err := json.Unmarshal(v, &many); err != nil {
		return nil, errors.New("is neither a path nor a list of paths")
	}
	for i, s := range many {
		many[i] = path.Clean(strings.TrimPrefix(s, "./"))
	}
	return many, nil
}

// hasComponent reports whether the plugin holds anything Claude Code
// finds in a plugin without a plugin.json: a file under skills/, agents/
// or one of the component paths, or hooks/hooks.json. A directory with
// none of them is no plugin (a typo, a parent, a marketplace's root), and
// importing it would write an empty package.
func (p *plugin) hasComponent() bool {
	locs := []string{"skills", "agents", "hooks/hooks.json"}
	for _, d := range defaultPaths {
		locs = append(locs, d)
	}
	for _, l := range locs {
		if p.has(l) || len(p.under(l)) > 0 {
			return true
		}
	}
	return false
}

// notPlugin is the error for a directory that holds no plugin, naming the
// plugins its subdirectories hold, when they hold some.
func notPlugin(dir string, p *plugin) error {
	var nested []string
	for f := range p.files {
		if d, ok := strings.CutSuffix(f, "/.claude-plugin/plugin.json"); ok && !strings.Contains(d, "/") {
			nested = append(nested, d)
		}
	}
	sort.Strings(nested)
	msg := fmt.Sprintf("%s is not a Claude Code plugin: it has no .claude-plugin/plugin.json, and none of skills/, agents/, commands/, hooks/hooks.json or .mcp.json", dir)
	if len(nested) > 0 {
		msg += "; import one of the plugins in it: " + strings.Join(nested, ", ")
	}
	return errors.New(msg)
}
