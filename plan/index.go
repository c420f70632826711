package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"dalo/internal/regular"
)

// The index is what dispatch reads: the plan split so that one dispatch
// reads only the hooks that can run for its event and tool, whatever the
// number of installed packages. Under plans/<provider>.d/:
//
//	current.<schema>            symlink to the generation in use, in the plan
//	                            format of that schema: g-<id>
//	g-<id>/<Event>.json         an EventFile: the event's Native, its hooks
//	                            without a tool matcher, the tools with a bucket
//	g-<id>/<Event>/<tool>.json  a bucket: the hooks whose matcher names tool
//	                            (tool escaped as a path segment)
//
// A generation is written whole under a temporary name, synced, renamed
// into place, and only then made current by renaming a new symlink over
// the pointer of its schema: a reader resolves the pointer once and reads
// one generation, old or new, never a mix. Writers (holding the store lock)
// remove the other generations of that schema after the swap; a reader
// whose generation vanished under it notices (the pointer moved on) and
// starts again.
//
// The pointer is named for the plan schema (current.5), and a dispatcher
// reads only the one of the schema it was built for. So a writer of a new
// schema can make its generation current while the harness entries still
// call a dispatcher of the old one, which goes on reading the old pointer's
// generation; once the entries call the new dispatcher, the writer drops
// the old pointers and their generations (DropOtherSchemas). Dispatch never
// reads a plan of a schema it does not know. Schema 4 and before used one
// pointer, current.

// An EventFile is the index entry of one native event.
type EventFile struct {
	Schema   int    `json:"schema"`
	Provider string `json:"provider"`
	Version  string `json:"version"`
	Event    string `json:"event"`
	Native   Native `json:"native"`
	// Hooks are the event's hooks without a tool matcher, in stable
	// hook-identity order.
	Hooks []PlannedHook `json:"hooks"`
	// Tools are the native tool names some hook's matcher names: each has
	// a bucket file.
	Tools []string `json:"tools,omitempty"`
}

// A bucket holds the hooks of one event whose matcher names one tool.
type bucket struct {
	Schema int           `json:"schema"`
	Tool   string        `json:"tool"`
	Hooks  []PlannedHook `json:"hooks"`
}

// indexDir is the index directory of provider below plansDir.
func indexDir(plansDir, provider string) string {
	return filepath.Join(plansDir, provider+".d")
}

// TempMark is in the name of every temporary file and directory a writer
// makes in the store; one a writer killed half way leaves behind is
// removed by the next writer (store.Lock), and readers skip them.
const TempMark = ".dalo-tmp-"

// Pointer is the name of the symlink, in a provider's index directory, to
// the generation in use in the plan format of this Schema.
var Pointer = "current." + strconv.Itoa(Schema)

// legacyPointer is the one pointer of schemas 1 to 4.
const legacyPointer = "current"

// WriteIndex makes the index of p current under plansDir, durably, and
// removes every other generation of this schema; the generations the
// pointers of other schemas name stay (see DropOtherSchemas). With no
// events it removes the index (RemoveIndex).
// step, if not nil, is called once the new generation is in place and
// before it becomes current (a crash test kills the writer there). The
// caller holds the store lock.
func WriteIndex(plansDir string, p *Plan, step func()) error {
	dir := indexDir(plansDir, p.Provider)
	if len(p.Events) == 0 {
		return RemoveIndex(plansDir, p.Provider)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("writing dispatch index: %w", err)
	}
	gen := fmt.Sprintf("g-%d-%d", time.Now().UnixNano(), os.Getpid())
	tmp := filepath.Join(dir, "."+gen+TempMark)
	if err := writeGeneration(tmp, p); err != nil {
		os.RemoveAll(tmp)
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, gen)); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("writing dispatch index: %w", err)
	}
	if err := SyncDir(dir); err != nil {
		return err
	}
	if step != nil {
		step()
	}
	link := filepath.Join(dir, "."+Pointer+TempMark+gen)
	if err := os.Symlink(gen, link); err != nil {
		return fmt.Errorf("writing dispatch index: %w", err)
	}
	if err := os.Rename(link, filepath.Join(dir, Pointer)); err != nil {
		os.Remove(link)
		return fmt.Errorf("writing dispatch index: %w", err)
	}
	if err := SyncDir(dir); err != nil {
		return err
	}
	return removeStale(dir, map[string]bool{gen: true})
}

// RemoveIndex removes the index of provider: first the pointers, so that
// readers see nothing installed, then the generations.
func RemoveIndex(plansDir, provider string) error {
	dir := indexDir(plansDir, provider)
	ptrs, err := pointers(dir)
	if err != nil {
		return fmt.Errorf("removing dispatch index: %w", err)
	}
	for _, p := range ptrs {
		if err := os.Remove(filepath.Join(dir, p)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing dispatch index: %w", err)
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("removing dispatch index: %w", err)
	}
	if _, err := os.Stat(plansDir); errors.Is(err, fs.ErrNotExist) {
		return nil // no plans yet: nothing was removed
	}
	return SyncDir(plansDir)
}

// DropOtherSchemas removes the pointers of other plan schemas from the
// index of provider, and every generation the pointer of this one does
// not name. A writer calls it once the harness entries call a dispatcher
// of this schema: no entry reads the others any more.
func DropOtherSchemas(plansDir, provider string) error {
	dir := indexDir(plansDir, provider)
	gen, err := os.Readlink(filepath.Join(dir, Pointer))
	if errors.Is(err, fs.ErrNotExist) {
		return nil // nothing of this schema: RemoveIndex is the writer's call
	}
	if err != nil {
		return fmt.Errorf("cleaning dispatch index: %w", err)
	}
	ptrs, err := pointers(dir)
	if err != nil {
		return fmt.Errorf("cleaning dispatch index: %w", err)
	}
	dropped := false
	for _, p := range ptrs {
		if p == Pointer {
			continue
		}
		if err := os.Remove(filepath.Join(dir, p)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("cleaning dispatch index: %w", err)
		}
		dropped = true
	}
	if dropped {
		if err := SyncDir(dir); err != nil {
			return err
		}
	}
	return removeStale(dir, map[string]bool{gen: true})
}

// pointers lists the pointer names in the index directory dir, of every
// schema: current.<n>, and the legacy current.
func pointers(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		if isPointer(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

func isPointer(name string) bool {
	return name == legacyPointer || strings.HasPrefix(name, legacyPointer+".") && !strings.Contains(name, TempMark)
}

// removeStale removes every generation of dir that no name in keep or
// pointer of another schema names, and what killed writers left.
func removeStale(dir string, keep map[string]bool) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("cleaning dispatch index: %w", err)
	}
	for _, e := range ents {
		if isPointer(e.Name()) {
			if gen, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil {
				keep[gen] = true
			}
		}
	}
	for _, e := range ents {
		if keep[e.Name()] || isPointer(e.Name()) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("cleaning dispatch index: %w", err)
		}
	}
	return nil
}

func writeGeneration(dir string, p *Plan) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("writing dispatch index: %w", err)
	}
	events := make([]string, 0, len(p.Events))
	for ev := range p.Events {
		events = append(events, ev)
	}
	sort.Strings(events)
	for _, ev := range events {
		if !validEvent(ev) {
			return fmt.Errorf("writing dispatch index: native event %q is not a name", ev)
		}
		n, ok := p.Natives[ev]
		if !ok {
			return fmt.Errorf("writing dispatch index: event %s has no native protocol in the plan", ev)
		}
		ef := EventFile{Schema: Schema, Provider: p.Provider, Version: p.Version, Event: ev, Native: n, Hooks: []PlannedHook{}}
		buckets := map[string][]PlannedHook{}
		for _, h := range p.Events[ev] {
			if len(h.ToolNames) == 0 {
				ef.Hooks = append(ef.Hooks, h)
				continue
			}
			for _, t := range h.ToolNames {
				buckets[t] = append(buckets[t], h)
			}
		}
		for t := range buckets {
			ef.Tools = append(ef.Tools, t)
		}
		sort.Strings(ef.Tools)
		if len(ef.Tools) > 0 {
			sub := filepath.Join(dir, ev)
			if err := os.Mkdir(sub, 0o755); err != nil {
				return fmt.Errorf("writing dispatch index: %w", err)
			}
			for _, t := range ef.Tools {
				if err := writeSynced(filepath.Join(sub, toolFile(t)), bucket{Schema: Schema, Tool: t, Hooks: buckets[t]}); err != nil {
					return err
				}
			}
			if err := SyncDir(sub); err != nil {
				return err
			}
		}
		if err := writeSynced(filepath.Join(dir, ev+".json"), ef); err != nil {
			return err
		}
	}
	return SyncDir(dir)
}

func validEvent(ev string) bool {
	if ev == "" {
		return false
	}
	for _, r := range ev {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
			return false
		}
	}
	return true
}

// toolFile is the bucket file name of a native tool name: escaped as a
// path segment, or hashed when that is long (a matcher names any tool).
func toolFile(tool string) string {
	s := pathEscape(tool)
	if strings.HasPrefix(s, ".") {
		s = "%2E" + s[1:]
	}
	if len(s) > maxNameBytes {
		s = HashedName(tool)
	}
	return s + ".json"
}

// pathEscape escapes s as net/url's PathEscape does (TestPathEscape): every
// byte but the unreserved ones and $&+:=@ as %XX. It is written here
// because package net/url would link net/netip, whose initialisation every
// dispatcher start would pay.
func pathEscape(s string) string {
	const hex = "0123456789ABCDEF"
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', strings.IndexByte("-._~$&+:=@", c) >= 0:
			if b != nil {
				b = append(b, c)
			}
		default:
			if b == nil {
				b = append(make([]byte, 0, len(s)+8), s[:i]...)
			}
			b = append(b, '%', hex[c>>4], hex[c&0xF])
		}
	}
	if b == nil {
		return s
	}
	return string(b)
}

// writeSynced creates name, which must not exist, holding v as JSON, and
// syncs it.
func writeSynced(name string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return CreateFile(name, data, 0o644)
}

// maxIndexFile bounds the read of one index file.
const maxIndexFile = 256 << 20

// errMoved says the generation a reader resolved was replaced under it.
var errMoved = errors.New("the dispatch index changed while it was read")

// ErrNotInstalled is Load's error when the provider has no index and no
// whole plan at all: nothing is installed, which a dispatcher answers with
// nothing unless its entry says a required fail_closed hook is installed.
var ErrNotInstalled = errors.New("nothing is installed: the store has no dispatch plan")

// Load reads the index of provider under plansDir for event, from one
// generation: the event's file and, if the event has tool buckets, the
// ones pick chooses once it saw the event's Native: the bucket of tool, or
// with all every bucket (when the tool name is unknown, so that every hook
// with a matcher can fail). Hooks come back in stable hook-identity order,
// each once. No file for the event in the current generation means no
// hooks: a nil EventFile and no error; no index at all is ErrNotInstalled.
//
// An index of another schema, or a legacy
// plans/<provider>.json without an index, is an error: dispatch must not
// guess at a format it does not read.
func Load(plansDir, provider, event string, pick func(n *Native) (tool string, all bool)) (*EventFile, error) {
	if !validEvent(event) {
		return nil, nil
	}
	for try := 0; ; try++ {
		ef, err := load(plansDir, provider, event, pick)
		if errors.Is(err, errMoved) && try < 10 {
			continue
		}
		return ef, err
	}
}

func load(plansDir, provider, event string, pick func(n *Native) (string, bool)) (*EventFile, error) {
	dir := indexDir(plansDir, provider)
	gen, err := os.Readlink(filepath.Join(dir, Pointer))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, other(plansDir, provider)
	}
	if err != nil {
		return nil, fmt.Errorf("reading dispatch index: %w", err)
	}
	if !strings.HasPrefix(gen, "g-") || strings.ContainsRune(gen, '/') {
		return nil, fmt.Errorf("reading dispatch index %s: %s points to %q, not a generation", dir, Pointer, gen)
	}
	moved := func() bool {
		now, err := os.Readlink(filepath.Join(dir, Pointer))
		return err != nil || now != gen
	}
	name := filepath.Join(dir, gen, event+".json")
	var ef EventFile
	if err := readIndexFile("dispatch index", name, &ef); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if moved() {
				return nil, errMoved
			}
			if _, err := os.Stat(filepath.Join(dir, gen)); err != nil {
				return nil, errMoved
			}
			return nil, nil
		}
		return nil, err
	}
	if ef.Schema != Schema {
		return nil, fmt.Errorf("reading dispatch index %s: schema %d, this dalo reads %d; run 'dalo plugin install' again", name, ef.Schema, Schema)
	}
	if ef.Provider != provider || ef.Event != event {
		return nil, fmt.Errorf("reading dispatch index %s: it is for %s %s", name, ef.Provider, ef.Event)
	}
	if len(ef.Tools) == 0 {
		return &ef, nil
	}
	tool, all := pick(&ef.Native)
	_, known := slices.BinarySearch(ef.Tools, tool) // ef.Tools is sorted
	var tools []string
	switch {
	case all:
		tools = ef.Tools
	case known:
		tools = []string{tool}
	}
	seen := map[[2]string]bool{}
	for _, h := range ef.Hooks {
		seen[[2]string{h.Package, h.Hook}] = true
	}
	for _, t := range tools {
		bname := filepath.Join(dir, gen, event, toolFile(t))
		var b bucket
		if err := readIndexFile("dispatch index", bname, &b); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, errMoved // listed, so its generation was removed
			}
			return nil, err
		}
		if b.Schema != Schema || b.Tool != t {
			return nil, fmt.Errorf("reading dispatch index %s: schema %d for tool %q, want schema %d for %q", bname, b.Schema, b.Tool, Schema, t)
		}
		for _, h := range b.Hooks {
			k := [2]string{h.Package, h.Hook}
			if !seen[k] {
				seen[k] = true
				ef.Hooks = append(ef.Hooks, h)
			}
		}
	}
	if moved() {
		// Both files were whole, but a writer may have replaced the
		// generation between them: read again rather than mix.
		return nil, errMoved
	}
	SortHooks(ef.Hooks)
	return &ef, nil
}

// other reports an index that has no pointer of this schema: one written
// by a dalo of another plan schema (another pointer, or a
// plans/<provider>.json of another schema, or one with no index at all).
// No pointer and no whole plan is nothing installed: ErrNotInstalled.
func other(plansDir, provider string) error {
	dir := indexDir(plansDir, provider)
	if ptrs, err := pointers(dir); err == nil && len(ptrs) > 0 {
		return fmt.Errorf("reading dispatch index %s: it holds plans of another schema (%s), this dalo reads %d; run 'dalo plugin install' again", dir, strings.Join(ptrs, ", "), Schema)
	}
	name := filepath.Join(plansDir, provider+".json")
	var p struct {
		Schema int `json:"schema"`
	}
	err := readIndexFile("dispatch plan", name, &p)
	if errors.Is(err, fs.ErrNotExist) {
		return ErrNotInstalled
	}
	if err != nil {
		return err
	}
	if p.Schema != Schema {
		return fmt.Errorf("reading dispatch plan %s: schema %d, this dalo reads %d; run 'dalo plugin install' again", name, p.Schema, Schema)
	}
	return fmt.Errorf("reading dispatch plan %s: it has no index %s; run 'dalo plugin install' again", name, dir)
}

// readIndexFile decodes the JSON file name into v; what names it in
// errors (a dispatch index file, or the legacy dispatch plan). It opens it as
// dispatch opens grants and staged files, on the same hot path: a symlink
// or a FIFO put in its place is an error at once, never a read elsewhere
// or one that blocks. A missing file is an error fs.ErrNotExist matches.
func readIndexFile(what, name string, v any) error {
	f, fi, err := regular.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", what, err)
	}
	size := fi.Size()
	defer f.Close()
	if size > maxIndexFile {
		return fmt.Errorf("reading %s %s: over %d bytes", what, name, maxIndexFile)
	}
	data := make([]byte, size)
	if _, err := io.ReadFull(f, data); err != nil {
		return fmt.Errorf("reading %s %s: %w", what, name, err)
	}
	if err := decodeJSON(data, v); err != nil {
		return fmt.Errorf("reading %s %s: %v", what, name, err)
	}
	return nil
}

// Roots lists the staged tool roots that the plans under plansDir name, of
// every provider: those of the current index generation, which dispatch
// reads, and those of the whole plan beside it. A writer collecting staged
// trees keeps these whatever the install records say: a reinstall killed
// after recording its new state, but before switching the index, leaves
// an index whose hooks still run from trees the record no longer names.
// Any file it cannot read is an error, and the caller then collects
// nothing. The caller holds the store lock, so no generation changes
// meanwhile.
func Roots(plansDir string) ([]string, error) {
	seen := map[string]bool{}
	err := walkPlans(plansDir, func(h namedHook) {
		if h.Tool.Root != "" {
			seen[h.Tool.Root] = true
		}
	})
	if err != nil {
		return nil, err
	}
	return slices.Sorted(maps.Keys(seen)), nil
}

// GrantsNamed lists the grants, as "id digest", that the plans under
// plansDir name, as Roots lists their staged roots: what dispatch may hold
// a hook to now.
func GrantsNamed(plansDir string) (map[string]bool, error) {
	seen := map[string]bool{}
	err := walkPlans(plansDir, func(h namedHook) {
		for _, g := range []GrantRef{h.ToolGrant, h.HookGrant} {
			if g.ID != "" {
				seen[g.ID+" "+g.Digest] = true
			}
		}
	})
	return seen, err
}

// namedHook is what Roots and GrantsNamed read of a planned hook.
type namedHook struct {
	Tool struct {
		Root string `json:"root"`
	} `json:"tool"`
	ToolGrant GrantRef `json:"tool_grant"`
	HookGrant GrantRef `json:"hook_grant"`
}

// walkPlans calls add with every hook that the plans under plansDir name:
// the whole plans, and every generation a pointer of the index names.
func walkPlans(plansDir string, add func(namedHook)) error {
	ents, err := os.ReadDir(plansDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("listing dispatch plans: %w", err)
	}
	type hooks []namedHook
	addAll := func(hs hooks) {
		for _, h := range hs {
			add(h)
		}
	}
	for _, e := range ents {
		name := e.Name()
		if strings.Contains(name, TempMark) {
			continue
		}
		if provider, ok := strings.CutSuffix(name, ".json"); ok && provider != "" && e.Type().IsRegular() {
			var p struct {
				Events map[string]hooks `json:"events"`
			}
			if err := readIndexFile("dispatch plan", filepath.Join(plansDir, name), &p); err != nil {
				return err
			}
			for _, hs := range p.Events {
				addAll(hs)
			}
			continue
		}
		if _, ok := strings.CutSuffix(name, ".d"); !ok || !e.IsDir() {
			continue
		}
		dir := filepath.Join(plansDir, name)
		ptrs, err := pointers(dir)
		if err != nil {
			return fmt.Errorf("reading dispatch index: %w", err)
		}
		// Every pointer's generation: a dispatcher of another schema
		// may still read its own until the entries stop calling it.
		for _, ptr := range ptrs {
			gen, err := os.Readlink(filepath.Join(dir, ptr))
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return fmt.Errorf("reading dispatch index: %w", err)
			}
			if !strings.HasPrefix(gen, "g-") || strings.ContainsRune(gen, '/') {
				return fmt.Errorf("reading dispatch index %s: %s points to %q, not a generation", dir, ptr, gen)
			}
			files, err := indexFiles(filepath.Join(dir, gen))
			if err != nil {
				return err
			}
			for _, f := range files {
				var x struct {
					Hooks hooks `json:"hooks"`
				}
				if err := readIndexFile("dispatch index", f, &x); err != nil {
					return err
				}
				addAll(x.Hooks)
			}
		}
	}
	return nil
}

// indexFiles lists the JSON files of one generation: its event files and
// their tool buckets.
func indexFiles(gen string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(gen, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("reading dispatch index: %w", err)
		}
		if rel, _ := filepath.Rel(gen, p); strings.Count(rel, string(filepath.Separator)) > 1 {
			return fmt.Errorf("reading dispatch index: %s is deeper than a tool bucket", p)
		}
		if !d.IsDir() && strings.HasSuffix(p, ".json") {
			out = append(out, p)
		}
		return nil
	})
	return out, err
}
