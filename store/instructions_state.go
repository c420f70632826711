package store

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"

	"dalo/engine"
	"dalo/instruction"
	"dalo/internal/regular"
	"dalo/plan"
	"dalo/providers"
)

// Instruction targets. The consumer, not the package, chooses where an
// instruction applies: a harness name (claude, codex: a provider table) is
// that harness's user-wide file, any other target an explicit (project)
// file.
const (
	TargetProject = "project"

	ScopeGlobal  = "global"
	ScopeProject = "project"
)

// maxUserFileBytes bounds how much of a user's file (an instruction target,
// a harness configuration) dalo reads.
const maxUserFileBytes = 64 << 20

// A Target is a file instructions are written into.
type Target struct {
	Name  string `json:"target"` // a harness name (claude, codex) or project
	File  string `json:"file"`   // absolute
	Scope string `json:"scope"`  // global or project
}

// globalTarget is the file of a harness's alias: the user-wide instruction
// file the newest table of the harness names (config.instructions), so
// that --target claude means what the table says, resolved as the harness
// resolves it ($CLAUDE_CONFIG_DIR/CLAUDE.md, else under $HOME).
func globalTarget(name string) (Target, error) {
	ts, err := providers.Load()
	if err != nil {
		return Target{}, err
	}
	t, ok := ts.Newest(name)
	if !ok {
		return Target{}, fmt.Errorf("no global target %q; known: %s", name, strings.Join(Providers(), ", "))
	}
	p, err := t.Path(t.Config.Instructions, os.Getenv)
	if err != nil {
		return Target{}, fmt.Errorf("locating the %s target: %w", name, err)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return Target{}, fmt.Errorf("locating the %s target: %w", name, err)
	}
	return Target{Name: name, File: abs, Scope: ScopeGlobal}, nil
}

// ResolveTarget reads --target: a harness name, or the path of a project
// file. A path must look like one (contain a separator or end in .md), so
// that a misspelt alias is not taken for a file in the current directory.
// A path that names a global file is refused: its scope would be ambiguous.
func ResolveTarget(spec string) (Target, error) {
	names := Providers()
	if spec == "" {
		var says []string
		for _, n := range names {
			says = append(says, "--target "+n)
		}
		return Target{}, fmt.Errorf("no target: say %s or --target PATH", strings.Join(says, ", "))
	}
	if slices.Contains(names, spec) {
		return globalTarget(spec)
	}
	if !filepath.IsAbs(spec) && !strings.ContainsAny(spec, string(filepath.Separator)+"/") && filepath.Ext(spec) != ".md" {
		return Target{}, fmt.Errorf("unknown target %q: want %s or the path of a file (./%s)", spec, strings.Join(names, ", "), spec)
	}
	abs, err := filepath.Abs(spec)
	if err != nil {
		return Target{}, fmt.Errorf("target %s: %w", spec, err)
	}
	for _, g := range names {
		gt, err := globalTarget(g)
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

// readTarget reads a target file with readUserFile. A file that does not
// exist reads as empty (exists false). A file with several hard links or
// without the owner's write permission is also an error naming it:
// replacing it atomically would split the links or override the user's
// choice.
func readTarget(name string) (data []byte, exists bool, err error) {
	return readUserFile(name, ": name the file itself with --target PATH", writableUserFile)
}

// targetDir makes sure the directory of t's file is there to create the
// file in. A global target's is the harness's configuration directory,
// which does not exist yet where the harness never ran: it is made, as
// install makes it for the hooks file (unless dry). A project file's must
// exist: a directory that does not is taken for a typo.
func targetDir(t Target, dry bool) error {
	dir := filepath.Dir(t.File)
	di, err := os.Stat(dir)
	switch {
	case err == nil && di.IsDir():
		return nil
	case t.Scope == ScopeGlobal && errors.Is(err, fs.ErrNotExist):
		if dry {
			return nil
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("creating %s: %w", dir, unwrapPath(err))
		}
		return plan.SyncDir(filepath.Dir(dir))
	}
	return fmt.Errorf("%s does not exist and cannot be created: its directory %s does not exist", t.File, dir)
}

// writableUserFile refuses a file of the user's that dalo would edit but
// must not replace: one with several hard links (replacing it atomically
// would split them) or without its owner's write permission (the user's
// choice, which a rename would override).
func writableUserFile(fi fs.FileInfo) error {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
		return fmt.Errorf("has %d hard links; replacing it atomically would split them", st.Nlink)
	}
	if fi.Mode().Perm()&0o200 == 0 {
		return fmt.Errorf("is read-only (mode %v); dalo does not override that", fi.Mode().Perm())
	}
	return nil
}

// readUserFile reads a file of the user's that dalo edits by replacing it
// atomically: an instruction target or a harness configuration. A file
// that does not exist reads as nil (exists false). A symlink (replacing
// the file would replace the link; hint follows the error), a directory or
// another non-regular file, or a file of more than maxUserFileBytes is an
// error naming it. The file is opened without following a symlink and
// without blocking on a FIFO, its type checked on the open file, and at
// most maxUserFileBytes+1 bytes are read, so that a file swapped meanwhile
// can neither block dalo nor make it read without bound. check, if not
// nil, vets the open file before it is read.
func readUserFile(name, hint string, check func(fs.FileInfo) error) (data []byte, exists bool, err error) {
	f, fi, err := regular.Open(name)
	var te *regular.TypeError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, false, nil
	case errors.Is(err, regular.ErrSymlink):
		dest, _ := os.Readlink(name)
		return nil, false, fmt.Errorf("%s is a symlink to %s; dalo replaces the file atomically and would replace the link%s", name, dest, hint)
	case errors.As(err, &te) && te.Mode.IsDir():
		return nil, false, fmt.Errorf("%s is a directory, not a file", name)
	case te != nil:
		return nil, false, te
	case err != nil:
		return nil, false, fmt.Errorf("reading %s: %w", name, unwrapPath(err))
	}
	defer f.Close()
	if check != nil {
		if err := check(fi); err != nil {
			return nil, false, fmt.Errorf("%s %w", name, err)
		}
	}
	if fi.Size() > maxUserFileBytes {
		return nil, false, fmt.Errorf("%s is %d bytes, more than the %d dalo reads", name, fi.Size(), maxUserFileBytes)
	}
	// A buffer of the file's size and a byte more, read to its end: a
	// 50 MB settings.json grown by io.ReadAll's doubling cost a third of
	// an install, most of it clearing memory. (bytes.Buffer.ReadFrom
	// wants 512 bytes free before each read, and doubled such a buffer
	// whenever the allocator's rounding left less.)
	data = make([]byte, 0, fi.Size()+1)
	for len(data) <= maxUserFileBytes {
		if len(data) == cap(data) { // the file grew since its stat
			data = append(data, 0)[:len(data)]
		}
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, false, fmt.Errorf("reading %s: %w", name, unwrapPath(err))
		}
	}
	if len(data) > maxUserFileBytes {
		return nil, false, fmt.Errorf("%s is more than the %d bytes dalo reads", name, maxUserFileBytes)
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
	instruction.ID
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
	if len(f.Instructions) == 0 && len(f.Files) == 0 {
		// Nothing enabled: no record, as after install and remove.
		err := os.Remove(s.path("instructions.json"))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing %s: %w", s.path("instructions.json"), err)
		}
		return nil
	}
	if f.Instructions == nil {
		f.Instructions = []InstructionRecord{}
	}
	if f.Files == nil {
		f.Files = []TargetFacts{}
	}
	return writeJSON(s.path("instructions.json"), f)
}

func (f *instructionsFile) record(file string, id instruction.ID) int {
	for i, r := range f.Instructions {
		if r.File == file && r.ID == id {
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
	Show func(*instruction.Edit) error
}

// ActionGone is the action of a disable whose block the user already
// removed: only the record goes.
const ActionGone = "gone"

// EnableInstruction writes the block of in into the target file and
// records it, under the store lock. The file is written before the record:
// a crash between the two leaves a block that list does not show but that
// disable still finds by its markers.
func (s *Store) EnableInstruction(t Target, in instruction.Asset, opt EditOptions) (*instruction.Edit, error) {
	if !opt.DryRun {
		l, err := s.Lock()
		if err != nil {
			return nil, err
		}
		defer l.Unlock()
		sweepBeside(t.File)
	}
	f, err := s.readInstructions()
	if err != nil {
		return nil, err
	}
	data, exists, err := readTarget(t.File)
	if err != nil {
		return nil, err
	}
	if !exists {
		if err := targetDir(t, true); err != nil {
			return nil, err
		}
	}
	e, err := instruction.Enable(t.File, data, in, opt.Force)
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
	if e.Action != instruction.ActionUnchanged || !exists {
		if !exists {
			if err := targetDir(t, false); err != nil {
				return nil, err
			}
		}
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
	rec := InstructionRecord{Target: t, ID: in.ID, Package: in.Package, SHA256: instruction.BlockDigest(e.Block)}
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
func (s *Store) DisableInstruction(t Target, id instruction.ID, opt EditOptions) (*instruction.Edit, error) {
	if !opt.DryRun {
		l, err := s.Lock()
		if err != nil {
			return nil, err
		}
		defer l.Unlock()
		sweepBeside(t.File)
	}
	f, err := s.readInstructions()
	if err != nil {
		return nil, err
	}
	rec := f.record(t.File, id)
	data, exists, err := readTarget(t.File)
	if err != nil {
		return nil, err
	}
	facts := *f.facts(t.File)
	var e *instruction.Edit
	if exists {
		e, err = instruction.Disable(t.File, data, id, opt.Force, facts.NewlineAdded)
	} else {
		err = fmt.Errorf("%s does not exist: %s is %w there", t.File, id, instruction.ErrNotEnabled)
	}
	switch {
	case errors.Is(err, instruction.ErrNotEnabled) && rec >= 0:
		e = &instruction.Edit{Action: ActionGone, Before: data, After: data}
	case err != nil:
		return nil, err
	}
	if e.Action == instruction.ActionRemove {
		if err := s.requiredBy(t, id); err != nil {
			return nil, err
		}
	}
	if opt.Show != nil {
		if err := opt.Show(e); err != nil {
			return nil, err
		}
	}
	if opt.DryRun {
		return e, nil
	}
	if e.Action == instruction.ActionRemove {
		blocks, _ := instruction.Parse(t.File, e.After)
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

// requiredBy refuses to take instruction id out of t, the user-wide file
// of a harness, while a package installed on that harness requires it, as
// remove refuses to take away a package another requires: without it the
// package's hooks would stay in force with their required instruction
// gone, the state install refuses to create. A project's file never
// satisfies a requirement, so disabling there takes nothing out of force.
func (s *Store) requiredBy(t Target, id instruction.ID) error {
	if t.Scope != ScopeGlobal {
		return nil
	}
	in, err := s.Installed(t.Name)
	if err != nil {
		return err
	}
	var held []string
	for _, ip := range in.Packages {
		if slices.Contains(ip.Instructions, id) {
			held = append(held, fmt.Sprintf("%s, installed on %s, requires it: remove the package first with 'dalo plugin remove %s --provider %s'", ip.Package, t.Name, ip.Package, t.Name))
		}
	}
	if len(held) == 0 {
		return nil
	}
	return fmt.Errorf("cannot disable %s in %s:\n  %s", id, t.File, strings.Join(held, "\n  "))
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
	return writeFile(name, after, 0o644)
}

func removeTarget(name string, before []byte) error {
	if err := unchangedSince(name, before, true); err != nil {
		return err
	}
	if err := os.Remove(name); err != nil {
		return fmt.Errorf("removing %s: %w", name, unwrapPath(err))
	}
	return plan.SyncDir(filepath.Dir(name))
}

func unchangedSince(name string, before []byte, existed bool) error {
	now, exists, err := readTarget(name)
	if err != nil {
		return err
	}
	if exists != existed || !bytes.Equal(now, before) {
		return fmt.Errorf("%s changed while dalo was editing it; nothing was written: run the command again", name)
	}
	return nil
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
		blocks  []*instruction.Block
		missing bool
		err     error
	}
	files := map[string]*fileState{}
	for _, r := range recs {
		st := InstructionState{InstructionRecord: r}
		fst, seen := files[r.File]
		if !seen {
			fst = &fileState{}
			data, exists, err := readTarget(r.File)
			switch {
			case err != nil:
				fst.err = err
			case !exists:
				fst.missing = true
			default:
				fst.blocks, fst.err = instruction.Parse(r.File, data)
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
				if b.ID == r.ID {
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

// PackageInstruction finds instruction id among the members of the selected
// package, as validation resolved it, and reads its Markdown. It returns
// the member's requirement too: a recommended instruction is enabled only
// by name. The file is read without following a symlink that appeared
// since validation, within the file limit the source was checked against.
func (sel *Selection) PackageInstruction(id instruction.ID) (instruction.Asset, string, error) {
	if err := sel.Valid(); err != nil {
		return instruction.Asset{}, "", err
	}
	pkg := sel.Identity.String()
	var members []string
	for n, mb := range sel.Pkg.Manifest.Plugin.Members {
		r := engine.ParseRef(mb.Ref)
		if r.Kind != "instruction" {
			continue
		}
		members = append(members, mb.Ref+" ("+mb.Requirement+")")
		src := r.Source
		if src == "" {
			src = sel.Identity.Source
		}
		if r.Selector != id.Selector || src != id.Source {
			continue
		}
		field := fmt.Sprintf("plugin.members[%d].ref", n)
		for _, ref := range sel.References() {
			if ref.Field != field {
				continue
			}
			if why := sel.omitted(field); why != "" {
				return instruction.Asset{}, "", fmt.Errorf("%s of %s is omitted by validation, and dalo writes nothing it omitted: %s", mb.Ref, pkg, why)
			}
			if ref.Resolution != engine.Resolved {
				return instruction.Asset{}, "", fmt.Errorf("%s of %s does not resolve (%s): %s", mb.Ref, pkg, ref.Resolution, ref.Reason)
			}
			file, err := sel.MemberPath(ref)
			if err != nil {
				return instruction.Asset{}, "", err
			}
			content, err := readInstructionFile(file, sel.Loaded.Limits.FileBytes)
			if err != nil {
				return instruction.Asset{}, "", err
			}
			return instruction.Asset{ID: id, Package: pkg, Content: content}, mb.Requirement, nil
		}
		return instruction.Asset{}, "", fmt.Errorf("%s of %s was not resolved", mb.Ref, pkg)
	}
	have := "it has no instruction members"
	if len(members) > 0 {
		have = "its instruction members: " + strings.Join(members, ", ")
	}
	ref := "instruction:" + id.Selector
	if id.Source != sel.Identity.Source {
		ref = "instruction:" + id.Source + ":" + id.Selector
	}
	return instruction.Asset{}, "", fmt.Errorf("%s is not a member of %s; %s", ref, pkg, have)
}

// readInstructionFile reads a resolved instruction file, without following
// a symlink, refusing anything but a regular file of at most limit bytes.
func readInstructionFile(file string, limit int64) ([]byte, error) {
	f, _, err := regular.Open(file)
	var te *regular.TypeError
	if errors.As(err, &te) {
		return nil, te
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than the %d-byte file limit", file, limit)
	}
	return data, nil
}

// instructionEnabled says whether instruction id is enabled, by the
// states of the records, in the user-wide instruction file of t's harness
// (the target named for t), the only file every session of a user-wide
// install reads. A project's file (its CLAUDE.md, AGENTS.md) applies only
// in that project, so it does not count: projects lists where the
// instruction is enabled in one, for the message. A block the user edited
// since is still theirs to keep, and counts.
func instructionEnabled(t *providers.Table, states []InstructionState, id instruction.ID) (ok bool, projects []string) {
	for _, st := range states {
		if st.ID != id || st.State != "enabled" && st.State != "edited" {
			continue
		}
		switch {
		case st.Scope == ScopeGlobal && st.Name == t.Name:
			return true, nil
		case st.Scope == ScopeProject:
			projects = append(projects, st.File)
		}
	}
	return false, projects
}

// notEnabled is why required instruction ref of pkg is not in force on t,
// given the project files it is enabled in, and what to run.
func notEnabled(t *providers.Table, pkg, ref string, projects []string) string {
	msg := fmt.Sprintf("%s (required) is not enabled in the user-wide %s that every %s session reads", ref, filepath.Base(t.Config.Instructions.Path), t.Harness)
	if len(projects) > 0 {
		msg += fmt.Sprintf(" (only in %s, which applies in its project alone)", strings.Join(projects, ", "))
	}
	return msg + fmt.Sprintf(": run 'dalo instruction enable %s %s --target %s'", pkg, ref, t.Name)
}

// A PendingInstruction is a required instruction member of a package that
// is not in force on its table: install refuses the package until it is
// enabled in the harness's user-wide file (Target), as 'dalo instruction
// enable' would write Asset there.
type PendingInstruction struct {
	Ref    string // the member's reference, as the manifest writes it
	Target Target
	Asset  instruction.Asset
}

// PendingInstructions lists the required instruction members of the
// selected package not enabled where install looks for them on
// sel.Table: what a command installing it (sync) shows and asks the user
// to enable, exactly as 'dalo instruction enable' would. A recommended or
// optional one is never listed: it is inactive until the user names it.
func (s *Store) PendingInstructions(sel *Selection) ([]PendingInstruction, error) {
	var states []InstructionState
	var out []PendingInstruction
	for _, mb := range sel.Pkg.Manifest.Plugin.Members {
		r := engine.ParseRef(mb.Ref)
		if r.Kind != "instruction" || !plan.UnmetBlocks[mb.Requirement] {
			continue
		}
		id := instruction.ID{Source: sel.Identity.Source, Selector: r.Selector}
		if r.Source != "" {
			id.Source = r.Source
		}
		if states == nil {
			var err error
			if states, err = s.InstructionStates(); err != nil {
				return nil, err
			}
		}
		if ok, _ := instructionEnabled(sel.Table, states, id); ok {
			continue
		}
		asset, _, err := sel.PackageInstruction(id)
		if err != nil {
			return nil, err
		}
		t, err := globalTarget(sel.Table.Name)
		if err != nil {
			return nil, err
		}
		out = append(out, PendingInstruction{Ref: mb.Ref, Target: t, Asset: asset})
	}
	return out, nil
}
