package store

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"syscall"
)

// Instruction targets. The consumer, not the package, chooses where an
// instruction applies: claude and codex are the user's global files, any
// other target an explicit (project) file.
const (
	TargetClaude  = "claude"
	TargetCodex   = "codex"
	TargetProject = "project"

	ScopeGlobal  = "global"
	ScopeProject = "project"
)

// maxTargetBytes bounds how much of a target file dalo reads.
const maxTargetBytes = 64 << 20

// A Target is a file instructions are written into.
type Target struct {
	Name  string `json:"target"` // claude, codex or project
	File  string `json:"file"`   // absolute
	Scope string `json:"scope"`  // global or project
}

// GlobalTarget is the file of the claude or codex alias: the harness's
// user-wide instruction file in its configuration directory.
func GlobalTarget(name string) (Target, error) {
	var env, dir, file string
	switch name {
	case TargetClaude:
		env, dir, file = "CLAUDE_CONFIG_DIR", ".claude", "CLAUDE.md"
	case TargetCodex:
		env, dir, file = "CODEX_HOME", ".codex", "AGENTS.md"
	default:
		return Target{}, fmt.Errorf("no global target %q", name)
	}
	base := os.Getenv(env)
	if base == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return Target{}, fmt.Errorf("locating the %s target: %w (set %s)", name, err, env)
		}
		base = filepath.Join(h, dir)
	}
	abs, err := filepath.Abs(filepath.Join(base, file))
	if err != nil {
		return Target{}, fmt.Errorf("locating the %s target: %w", name, err)
	}
	return Target{Name: name, File: abs, Scope: ScopeGlobal}, nil
}

// ResolveTarget reads --target: claude, codex, or the path of a project
// file. A path must look like one (contain a separator or end in .md), so
// that a misspelt alias is not taken for a file in the current directory.
// A path that names a global file is refused: its scope would be ambiguous.
func ResolveTarget(spec string) (Target, error) {
	switch spec {
	case "":
		return Target{}, errors.New("no target: say --target claude, --target codex or --target PATH")
	case TargetClaude, TargetCodex:
		return GlobalTarget(spec)
	}
	if !filepath.IsAbs(spec) && !bytes.ContainsAny([]byte(spec), string(filepath.Separator)+"/") && filepath.Ext(spec) != ".md" {
		return Target{}, fmt.Errorf("unknown target %q: want claude, codex or the path of a file (./%s)", spec, spec)
	}
	abs, err := filepath.Abs(spec)
	if err != nil {
		return Target{}, fmt.Errorf("target %s: %w", spec, err)
	}
	for _, g := range []string{TargetClaude, TargetCodex} {
		gt, err := GlobalTarget(g)
		if err != nil {
			continue
		}
		if sameFile(abs, gt.File) {
			return Target{}, fmt.Errorf("target %s is the global %s file; say --target %s so that its scope is explicit", spec, g, g)
		}
	}
	return Target{Name: TargetProject, File: abs, Scope: ScopeProject}, nil
}

func sameFile(a, b string) bool {
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// ReadTarget reads a target file. A file that does not exist reads as
// empty (exists false) if its directory does. A symlink, a directory or
// another non-regular file, a file with several hard links or without the
// owner's write permission is an error naming it: replacing it atomically
// would break the link or override the user's choice.
func ReadTarget(name string) (data []byte, exists bool, err error) {
	fi, err := os.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		dir := filepath.Dir(name)
		di, err := os.Stat(dir)
		if err != nil || !di.IsDir() {
			return nil, false, fmt.Errorf("%s does not exist and cannot be created: its directory %s does not exist", name, dir)
		}
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("reading %s: %w", name, unwrapPath(err))
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		dest, _ := os.Readlink(name)
		return nil, false, fmt.Errorf("%s is a symlink to %s; dalo replaces a target file atomically and would replace the link: name the file itself with --target PATH", name, dest)
	}
	if !fi.Mode().IsRegular() {
		what := "not a regular file"
		if fi.IsDir() {
			what = "a directory, not a file"
		}
		return nil, false, fmt.Errorf("%s is %s", name, what)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
		return nil, false, fmt.Errorf("%s has %d hard links; replacing it atomically would split them", name, st.Nlink)
	}
	if fi.Mode().Perm()&0o200 == 0 {
		return nil, false, fmt.Errorf("%s is read-only (mode %v); dalo does not override that", name, fi.Mode().Perm())
	}
	if fi.Size() > maxTargetBytes {
		return nil, false, fmt.Errorf("%s is %d bytes, more than the %d dalo reads", name, fi.Size(), maxTargetBytes)
	}
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, false, fmt.Errorf("reading %s: %w", name, unwrapPath(err))
	}
	defer f.Close()
	data, err = io.ReadAll(io.LimitReader(f, maxTargetBytes+1))
	if err != nil {
		return nil, false, fmt.Errorf("reading %s: %w", name, unwrapPath(err))
	}
	if len(data) > maxTargetBytes {
		return nil, false, fmt.Errorf("%s is more than the %d bytes dalo reads", name, maxTargetBytes)
	}
	return data, true, nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// An InstructionRecord is one instruction dalo enabled in one file.
type InstructionRecord struct {
	Target
	InstructionID
	Package string `json:"package"` // SOURCE:NAME it was enabled through
	SHA256  string `json:"sha256"`  // of the body as written
}

// A TargetFacts holds what the bytes of a target file cannot say about it.
type TargetFacts struct {
	File         string `json:"file"`
	Created      bool   `json:"created,omitempty"`       // dalo created it: disabling the last block removes it if empty
	NewlineAdded bool   `json:"newline_added,omitempty"` // dalo ended the user's last line: disabling the last block removes that line ending
}

type instructionsFile struct {
	Schema       int                 `json:"schema"`
	Instructions []InstructionRecord `json:"instructions"`
	Files        []TargetFacts       `json:"files"`
}

func (s *Store) readInstructions() (*instructionsFile, error) {
	f := &instructionsFile{Schema: 1}
	if err := readJSON(s.path("instructions.json"), f); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	if f.Schema != 1 {
		return nil, fmt.Errorf("%s has schema %d; this dalo reads schema 1", s.path("instructions.json"), f.Schema)
	}
	return f, nil
}

func (s *Store) writeInstructions(f *instructionsFile) error {
	sort.Slice(f.Instructions, func(i, j int) bool {
		a, b := f.Instructions[i], f.Instructions[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Source != b.Source {
			return a.Source < b.Source
		}
		return a.Selector < b.Selector
	})
	sort.Slice(f.Files, func(i, j int) bool { return f.Files[i].File < f.Files[j].File })
	if f.Instructions == nil {
		f.Instructions = []InstructionRecord{}
	}
	if f.Files == nil {
		f.Files = []TargetFacts{}
	}
	return writeJSON(s.path("instructions.json"), f)
}

func (f *instructionsFile) record(file string, id InstructionID) int {
	for i, r := range f.Instructions {
		if r.File == file && r.InstructionID == id {
			return i
		}
	}
	return -1
}

func (f *instructionsFile) facts(file string) *TargetFacts {
	for i := range f.Files {
		if f.Files[i].File == file {
			return &f.Files[i]
		}
	}
	f.Files = append(f.Files, TargetFacts{File: file})
	return &f.Files[len(f.Files)-1]
}

func (f *instructionsFile) dropFacts(file string) {
	out := f.Files[:0]
	for _, x := range f.Files {
		if x.File != file {
			out = append(out, x)
		}
	}
	f.Files = out
}

// Instructions lists what dalo enabled, by file and instruction.
func (s *Store) Instructions() ([]InstructionRecord, error) {
	f, err := s.readInstructions()
	if err != nil {
		return nil, err
	}
	return f.Instructions, nil
}

// EditOptions control EnableInstruction and DisableInstruction.
type EditOptions struct {
	Force  bool // take over a block the user edited
	DryRun bool // compute and show, write nothing
	// Show is called with the edit before anything is written, so that the
	// user sees where it applies first; an error stops the edit.
	Show func(*Edit) error
}

// ActionGone is the action of a disable whose block the user already
// removed: only the record goes.
const ActionGone = "gone"

// EnableInstruction writes the block of in into the target file and
// records it, under the store lock. The file is written before the record:
// a crash between the two leaves a block that list does not show but that
// disable still finds by its markers.
func (s *Store) EnableInstruction(t Target, in Instruction, opt EditOptions) (*Edit, error) {
	if !opt.DryRun {
		l, err := s.Lock()
		if err != nil {
			return nil, err
		}
		defer l.Unlock()
	}
	f, err := s.readInstructions()
	if err != nil {
		return nil, err
	}
	data, exists, err := ReadTarget(t.File)
	if err != nil {
		return nil, err
	}
	e, err := EnableBlock(t.File, data, in, opt.Force)
	if err != nil {
		return nil, err
	}
	if opt.Show != nil {
		if err := opt.Show(e); err != nil {
			return nil, err
		}
	}
	if opt.DryRun {
		return e, nil
	}
	if e.Action != ActionUnchanged || !exists {
		if err := writeTarget(t.File, data, exists, e.After); err != nil {
			return nil, err
		}
	}
	if !exists {
		// A file dalo creates has no blocks but this one: earlier records
		// of it are of a file the user deleted.
		out := f.Instructions[:0]
		for _, r := range f.Instructions {
			if r.File != t.File {
				out = append(out, r)
			}
		}
		f.Instructions = out
		f.dropFacts(t.File)
		f.facts(t.File).Created = true
	}
	if e.NewlineAdded {
		f.facts(t.File).NewlineAdded = true
	}
	rec := InstructionRecord{Target: t, InstructionID: in.ID, Package: in.Package, SHA256: bodyDigestOfBlock(e.Block)}
	if i := f.record(t.File, in.ID); i >= 0 {
		if f.Instructions[i] == rec {
			return e, nil
		}
		f.Instructions[i] = rec
	} else {
		f.Instructions = append(f.Instructions, rec)
	}
	step("instruction-enable-record")
	return e, s.writeInstructions(f)
}

// DisableInstruction removes the block of id from the target file and its
// record, under the store lock. When the last block goes, the facts of the
// file apply: a line ending dalo added is removed, and a file dalo created
// that is left empty is deleted.
func (s *Store) DisableInstruction(t Target, id InstructionID, opt EditOptions) (*Edit, error) {
	if !opt.DryRun {
		l, err := s.Lock()
		if err != nil {
			return nil, err
		}
		defer l.Unlock()
	}
	f, err := s.readInstructions()
	if err != nil {
		return nil, err
	}
	rec := f.record(t.File, id)
	data, exists, err := ReadTarget(t.File)
	if err != nil {
		return nil, err
	}
	facts := *f.facts(t.File)
	var e *Edit
	if exists {
		e, err = DisableBlock(t.File, data, id, opt.Force, facts.NewlineAdded)
	} else {
		err = fmt.Errorf("%s does not exist: %s is %w there", t.File, id, ErrNotEnabled)
	}
	switch {
	case errors.Is(err, ErrNotEnabled) && rec >= 0:
		e = &Edit{Action: ActionGone, Before: data, After: data}
	case err != nil:
		return nil, err
	}
	if opt.Show != nil {
		if err := opt.Show(e); err != nil {
			return nil, err
		}
	}
	if opt.DryRun {
		return e, nil
	}
	if e.Action == ActionRemove {
		blocks, _ := ParseBlocks(t.File, e.After)
		last := len(blocks) == 0
		if last && facts.Created && len(e.After) == 0 {
			if err := removeTarget(t.File, data); err != nil {
				return nil, err
			}
		} else if err := writeTarget(t.File, data, true, e.After); err != nil {
			return nil, err
		}
		if last {
			f.dropFacts(t.File)
		}
	}
	if rec >= 0 {
		f.Instructions = append(f.Instructions[:rec], f.Instructions[rec+1:]...)
	}
	if !hasRecord(f, t.File) && e.Action == ActionGone {
		f.dropFacts(t.File)
	}
	step("instruction-disable-record")
	return e, s.writeInstructions(f)
}

func hasRecord(f *instructionsFile, file string) bool {
	for _, r := range f.Instructions {
		if r.File == file {
			return true
		}
	}
	return false
}

// writeTarget replaces the target file with after, unless it changed
// since it was read as before: then the user's edit wins and nothing is
// written.
func writeTarget(name string, before []byte, existed bool, after []byte) error {
	if err := unchangedSince(name, before, existed); err != nil {
		return err
	}
	step("instruction-write-target")
	return WriteFile(name, after, 0o644)
}

func removeTarget(name string, before []byte) error {
	if err := unchangedSince(name, before, true); err != nil {
		return err
	}
	if err := os.Remove(name); err != nil {
		return fmt.Errorf("removing %s: %w", name, unwrapPath(err))
	}
	return SyncDir(filepath.Dir(name))
}

func unchangedSince(name string, before []byte, existed bool) error {
	now, exists, err := ReadTarget(name)
	if err != nil {
		return err
	}
	if exists != existed || !bytes.Equal(now, before) {
		return fmt.Errorf("%s changed while dalo was editing it; nothing was written: run the command again", name)
	}
	return nil
}

// bodyDigestOfBlock is the digest of the body of a block dalo just wrote.
func bodyDigestOfBlock(block []byte) string {
	ls := splitTextLines(block, 0)
	if len(ls) < 2 {
		return ""
	}
	first, last := ls[0], ls[len(ls)-1]
	return bodyDigest(block[first.off+len(first.text)+len(first.eol) : last.off])
}

// An InstructionState is a record checked against its file.
type InstructionState struct {
	InstructionRecord
	State  string `json:"state"`            // enabled, edited, missing, unreadable
	Detail string `json:"detail,omitempty"` // why, for missing and unreadable
}

// InstructionStates lists the records, each with what its file holds now.
func (s *Store) InstructionStates() ([]InstructionState, error) {
	recs, err := s.Instructions()
	if err != nil {
		return nil, err
	}
	out := make([]InstructionState, 0, len(recs))
	type fileState struct {
		blocks  []*Block
		missing bool
		err     error
	}
	files := map[string]*fileState{}
	for _, r := range recs {
		st := InstructionState{InstructionRecord: r}
		fst, seen := files[r.File]
		if !seen {
			fst = &fileState{}
			data, exists, err := ReadTarget(r.File)
			switch {
			case err != nil:
				fst.err = err
			case !exists:
				fst.missing = true
			default:
				fst.blocks, fst.err = ParseBlocks(r.File, data)
			}
			files[r.File] = fst
		}
		switch {
		case fst.err != nil:
			st.State, st.Detail = "unreadable", fst.err.Error()
		case fst.missing:
			st.State, st.Detail = "missing", r.File+" does not exist"
		default:
			st.State, st.Detail = "missing", "no block in "+r.File
			for _, b := range fst.blocks {
				if b.ID == r.InstructionID {
					st.State, st.Detail = "enabled", ""
					if b.Edited() {
						st.State = "edited"
					}
				}
			}
		}
		out = append(out, st)
	}
	return out, nil
}
