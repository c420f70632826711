package engine

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/encoding/yaml"
	asmutf8 "github.com/segmentio/asm/utf8"
	"golang.org/x/sys/unix"

	"dalo/internal/regular"
	"dalo/internal/suggest"
	"dalo/plan"
)

// sourceCheck makes the checks that need the whole source: unique ids,
// reference resolution, cycles in plugin.requires and the front matter of
// the skills and agents that references resolve to.
type sourceCheck struct {
	root, id string
	rules    *Rules
	registry map[string]string
	cache    *cacheRun            // nil but in Validate
	pkgs     []*Package           // the packages validated
	byName   map[string]*Package  // the packages validated, by name
	exists   map[string]bool      // every package discovery found, by name
	files    map[string]*diagList // diagnostics about member files
	targets  map[string]target    // resolved asset, by kind:source:selector
	refs     []Reference
	dirs     map[string]bool    // directories resolution proved real, by path (lstatInsideKnown)
	realRel  map[string]bool    // the paths under root realDirs proved real directories
	held     map[string]walkDir // layout directories held open while references resolve (heldDir)
	// nearNames are the selectors of each kind's assets, listed once for
	// nearRef, and nearMade how many suggestions it sought by severity.
	nearNames map[string][]string
	nearMade  map[Severity]int
}

type target struct {
	resolution, path, reason string
	root                     string // the source root the asset is in
}

func (v *sourceCheck) fileDiags(file string) *diagList {
	l, ok := v.files[file]
	if !ok {
		l = &diagList{file: file}
		v.files[file] = l
		fileListsKept.Add(1)
	}
	return l
}

// keep adds l, the findings of a member file checked apart from
// v.files, to them when it holds any. Most member files have none: a
// list kept for each was a map entry and a place in the report's sort
// for every skill, agent and instruction of the source.
func (v *sourceCheck) keep(l *diagList) {
	if len(l.diags) > 0 {
		to := v.fileDiags(l.file)
		if to.diags == nil {
			to.diags = l.diags // l is dropped: no copy
		} else {
			to.diags = append(to.diags, l.diags...)
		}
	}
}

// fileListsKept counts the member files given a list of findings: a test
// holds a source whose members have none to none.
var fileListsKept atomic.Int64

// uniqueIDs reports each package whose id an earlier package of pkgs, in
// discovery order, already has (E076). pkgs holds the packages validated
// and every package that could have one of their ids before them.
func (v *sourceCheck) uniqueIDs(pkgs []*Package) {
	first := map[string]*Package{}
	for _, p := range pkgs {
		if p.Manifest == nil || p.Manifest.Plugin.ID == "" {
			continue
		}
		id := p.Manifest.Plugin.ID
		if q, dup := first[id]; dup {
			p.diags.errorf("E076", p.at("plugin.id"), "plugin.id", "plugin.id %s is also the id of %s; ids are unique in a source", id, q.File)
			continue
		}
		first[id] = p
	}
}

// mentionsAny reports whether src may declare one of ids: it holds one
// as written, or a backslash, with which a TOML string can spell one
// otherwise (an escape, a line continuation). Most manifests are told
// apart by this alone, without parsing them.
func mentionsAny(src []byte, ids map[string]int) bool {
	if bytes.IndexByte(src, '\\') >= 0 {
		return true
	}
	for id := range ids {
		if bytes.Contains(src, []byte(id)) {
			return true
		}
	}
	return false
}

// closure checks the packages named in want and those they require,
// transitively, in this source, and returns them in discovery order.
func (v *sourceCheck) closure(all []*Package, want []string) []*Package {
	byName := map[string]*Package{}
	for _, p := range all {
		byName[p.Name] = p
	}
	taken := map[*Package]bool{}
	var frontier, out []*Package
	add := func(name string) {
		if p := byName[name]; p != nil && !taken[p] {
			taken[p] = true
			frontier = append(frontier, p)
		}
	}
	for _, n := range want {
		add(n)
	}
	for len(frontier) > 0 {
		next := frontier
		frontier = nil
		checkPackages(v.root, v.id, next, v.rules, nil, nil)
		out = append(out, next...)
		for _, p := range next {
			if p.refs == nil {
				continue
			}
			for _, rq := range p.refs.requires {
				if r := ParseRef(rq.Ref); r.Kind == "plugin" && (r.Source == "" || r.Source == v.id) {
					add(r.Selector)
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b *Package) int { return a.order - b.order })
	return out
}

// manifestsScanned counts the manifests idClaimants reads: a test holds
// it to those that can matter.
var manifestsScanned atomic.Int64

// idClaimants returns the packages uniqueIDs must see for the answer about
// the validated packages to be the one validating the whole source gives:
// those, and every other package before one of them whose manifest
// declares one of their ids, checked. The other manifests are only read
// and scanned for plugin.id (declaredID); a package the scan names is
// checked in full, since only a package whose manifest is valid in shape
// holds its id.
func (v *sourceCheck) idClaimants(all, checked []*Package) []*Package {
	ids := map[string]int{} // id → the last place a validated package has it
	isChecked := map[*Package]bool{}
	for _, p := range checked {
		isChecked[p] = true
		if p.Manifest != nil && p.Manifest.Plugin.ID != "" {
			ids[p.Manifest.Plugin.ID] = max(ids[p.Manifest.Plugin.ID], p.order)
		}
	}
	if len(ids) == 0 {
		return checked
	}
	// Only a package before a validated one can take its id first: the
	// manifests after the last are not read (approving the fifth of
	// 1,000 packages read the other 999, a third of its cost).
	end := 0
	for _, o := range ids {
		end = max(end, o)
	}
	buf := keyBuffers.Get().(*[]byte)
	defer keyBuffers.Put(buf)
	var st unix.Stat_t
	var more []*Package
	for _, p := range all {
		if isChecked[p] || p.order >= end {
			continue
		}
		manifestsScanned.Add(1)
		src, ok := readKeyed(filepath.Join(v.root, filepath.FromSlash(p.File)), int64(v.rules.Limits.ManifestBytes), &st, buf)
		if !ok || !mentionsAny(src, ids) {
			continue // not read, over the limit, or no such id
		}
		if last, ok := ids[declaredID(bytes.TrimPrefix(src, []byte(utf8BOM)))]; ok && p.order < last {
			more = append(more, p)
		}
	}
	if len(more) == 0 {
		return checked
	}
	checkPackages(v.root, v.id, more, v.rules, nil, nil)
	out := append(slices.Clone(checked), more...)
	slices.SortFunc(out, func(a, b *Package) int { return a.order - b.order })
	return out
}

// references resolves every member and required plugin of every package
// whose manifest decoded: when its shape failed, those that can be read
// (refList), since references are reported apart from package validity.
func (v *sourceCheck) references() {
	// Sized once: grown by doubling, the list and the map of a source of
	// 1,000 packages of seven members each allocated twice what they hold.
	n := 0
	for _, p := range v.pkgs {
		if p.refs != nil {
			n += len(p.refs.members) + len(p.refs.requires)
		}
	}
	defer func() {
		for _, d := range v.held {
			if d != nil {
				d.close()
			}
		}
		// What each reference resolved to is in its Reference now: the
		// index of answers by reference, over a third of what a source of
		// 120 members a package held until its report, is done with.
		v.held, v.targets = nil, nil
	}()
	v.targets = make(map[string]target, n)
	if n > 0 {
		v.refs = make([]Reference, 0, n) // nil when none, as the report had it
	}
	for _, p := range v.pkgs {
		if p.refs == nil {
			continue
		}
		for _, mb := range p.refs.members {
			v.reference(p, memberField(mb.n), mb.Ref, mb.Requirement)
		}
		for _, rq := range p.refs.requires {
			v.reference(p, requireField(rq.n), rq.Ref, rq.Requirement)
		}
	}
}

// omissions settles the members whose own files fail their checks (a
// skill's front matter, an instruction's bytes). Such an asset cannot be
// activated: its reference is invalid (reference). A package that requires
// it is blocked (Report.Blocked) and its findings stay errors; one that
// references it only optionally or as recommended omits it, visibly: a
// warning at its reference names the member and every finding (W073). When
// no package requires the asset, its findings are only those warnings, so
// that an optional omission never makes the source invalid.
func (v *sourceCheck) omissions() {
	required := map[string]bool{}
	for _, r := range v.refs {
		if r.Target != "" && r.Requirement == plan.RequirementRequired {
			required[r.Target] = true
		}
	}
	byName := v.byName
	for _, r := range v.refs {
		l, ok := v.files[r.Target]
		if r.Target == "" || r.Requirement == plan.RequirementRequired || !ok || !l.hasErrors() {
			continue
		}
		p := byName[r.Package]
		for _, d := range l.diags {
			if d.Severity != Error {
				continue
			}
			p.refDiags.warnf("W073", p.at(r.Field), r.Field, "%s member %s is visibly omitted: %s", r.Requirement, r.Ref, finding(d))
		}
	}
	for path, l := range v.files {
		if required[path] {
			continue
		}
		out := l.diags[:0]
		for _, d := range l.diags {
			if d.Severity != Error {
				out = append(out, d)
			}
		}
		l.diags = out
	}
}

func (v *sourceCheck) reference(p *Package, field, ref, requirement string) {
	r := ParseRef(ref)
	if _, known := v.rules.Layout[r.Kind]; !known {
		// Already an E051 from #RefRules; the report still lists it, since
		// it lists every reference.
		v.refs = append(v.refs, Reference{Package: p.Name, Field: field, Ref: ref, Requirement: requirement, Resolution: InvalidRef, Reason: "unknown reference kind " + r.Kind})
		return
	}
	if d := errorAt(&p.diags, field); d != nil {
		// Already refused where it stands (E050, E057): resolving it would
		// only add a second diagnostic about the same mistake.
		reason := "not admitted at this position"
		if d.Code == "E057" {
			reason = "duplicate reference"
		}
		v.refs = append(v.refs, Reference{Package: p.Name, Field: field, Ref: ref, Requirement: requirement, Resolution: InvalidRef, Reason: reason})
		return
	}
	t := v.resolve(r)
	if l, ok := v.files[t.path]; ok && t.resolution == Resolved && l.hasErrors() {
		// The asset is there but fails its own checks, which its file's
		// diagnostics say (and omissions settles): the reference is
		// invalid, not the package.
		v.refs = append(v.refs, Reference{Package: p.Name, Field: field, Ref: ref, Requirement: requirement, Resolution: InvalidRef, Target: t.path, Reason: failedChecks(l)})
		return
	}
	v.refs = append(v.refs, Reference{Package: p.Name, Field: field, Ref: ref, Requirement: requirement, Resolution: t.resolution, Target: t.path, Reason: t.reason})
	pos, l := p.at(field), &p.refDiags
	switch {
	case t.resolution == Resolved:
	case t.resolution == OutOfSource && requirement == plan.RequirementRequired:
		l.errorf("E074", pos, field, "required reference %s names source %s; validate never consults the source registry, so it stays unresolved", ref, r.Source)
	case t.resolution == OutOfSource:
		l.warnf("W075", pos, field, "%s reference %s names source %s and stays unresolved here; it is visibly omitted", requirement, ref, r.Source)
	case requirement == plan.RequirementRequired:
		l.errorf("E071", pos, field, "required reference %s does not resolve: %s%s", ref, t.reason, v.nearRef(ref, r, Error))
	default:
		l.warnf("W072", pos, field, "%s reference %s does not resolve (%s); it is visibly omitted%s", requirement, ref, t.reason, v.nearRef(ref, r, Warning))
	}
}

// nearRef suggests, for a reference r into this source that resolves to
// nothing, the reference to the asset of its kind whose selector is
// nearest (skill:desing-review: did you mean skill:design-review?), or "".
// It lists the kind's directory as the layout has it, once a run: a
// directory per asset (skills/<name>/SKILL.md) or a file
// (agents/<name>.md).
//
// Only the first maxNearRefs references of each severity that resolve to
// nothing get a suggestion: each is measured against every asset of its
// kind, and a source of 1,000 packages that name 3,500 optional members
// not in it spent two seconds here, 100 times its manifests' reading. A
// source with so many has more to fix than a typo.
func (v *sourceCheck) nearRef(ref string, r Ref, sev Severity) string {
	if r.Source != "" && r.Source != v.id || v.nearMade[sev] >= maxNearRefs {
		return ""
	}
	if v.nearMade == nil {
		v.nearMade = map[Severity]int{}
	}
	v.nearMade[sev]++
	nearRefsMade.Add(1)
	names, ok := v.nearNames[r.Kind]
	if !ok {
		names = v.assetNames(r.Kind)
		if v.nearNames == nil {
			v.nearNames = map[string][]string{}
		}
		v.nearNames[r.Kind] = names
	}
	near := suggest.Closest(r.Selector, names)
	if near == "" {
		return ""
	}
	return "; did you mean " + strings.TrimSuffix(ref, r.Selector) + near + "?"
}

// maxNearRefs is how many references of a severity that resolve to
// nothing nearRef makes a suggestion for in a run.
const maxNearRefs = 64

// nearRefsMade counts nearRef's suggestions sought: a test holds a source
// of many missing members to maxNearRefs.
var nearRefsMade atomic.Int64

// assetNames lists the selectors of kind's assets in this source, sorted.
func (v *sourceCheck) assetNames(kind string) []string {
	if kind == "plugin" {
		return slices.Sorted(maps.Keys(v.exists))
	}
	e, ok := v.rules.Layout[kind]
	if !ok {
		return nil
	}
	entries, err := os.ReadDir(filepath.Join(v.root, filepath.FromSlash(e.Dir)))
	if err != nil {
		return nil
	}
	var names []string
	for _, d := range entries {
		switch {
		case strings.HasPrefix(e.Suffix, "/") && d.IsDir():
			names = append(names, d.Name())
		case !strings.HasPrefix(e.Suffix, "/") && !d.IsDir():
			if name, ok := strings.CutSuffix(d.Name(), e.Suffix); ok {
				names = append(names, name)
			}
		}
	}
	return names
}

// failedChecks says, for the reason of an invalid reference, how the
// asset whose diagnostics l holds fails its checks: the first error, and
// how many more.
func failedChecks(l *diagList) string {
	var first *Diagnostic
	n := 0
	for i, d := range l.diags {
		if d.Severity == Error {
			if first == nil {
				first = &l.diags[i]
			}
			n++
		}
	}
	s := "fails its checks: " + finding(*first)
	if n > 1 {
		s += fmt.Sprintf(" (and %d more)", n-1)
	}
	return s
}

// finding writes a diagnostic about a member's file as a reference's
// reason or a warning quotes it: file:line:column: code message.
func finding(d Diagnostic) string {
	loc := d.File
	if d.Line > 0 {
		loc = fmt.Sprintf("%s:%d:%d", d.File, d.Line, d.Column)
	}
	return fmt.Sprintf("%s: %s %s", loc, d.Code, d.Message)
}

// errorAt returns the first error l holds about field, or nil.
func errorAt(l *diagList, field string) *Diagnostic {
	for i, d := range l.diags {
		if d.Severity == Error && d.Field == field {
			return &l.diags[i]
		}
	}
	return nil
}

func (v *sourceCheck) resolve(r Ref) target {
	src := r.Source
	if src == "" {
		src = v.id
	}
	key := r.Kind + ":" + src + ":" + r.Selector
	if t, ok := v.targets[key]; ok {
		return t
	}
	t := v.resolveOnce(r, src)
	v.targets[key] = t
	return t
}

func (v *sourceCheck) resolveOnce(r Ref, src string) target {
	root := v.root
	if src != v.id {
		var ok bool
		if root, ok = v.registry[src]; !ok {
			return target{resolution: OutOfSource, reason: "source " + src + " is not this source"}
		}
	}
	if r.Selector == "." || r.Selector == ".." {
		return target{resolution: InvalidRef, reason: "selector " + r.Selector + " is not a safe single path component"}
	}
	rel := v.rules.Layout.Path(r.Kind, r.Selector)
	if r.Kind == "plugin" && src == v.id {
		if !v.exists[r.Selector] {
			return target{resolution: Unresolved, reason: "no package " + v.rules.Layout.Dir("plugin", r.Selector)}
		}
		return target{resolution: Resolved, path: rel, root: root}
	}
	if v.dirs == nil {
		v.dirs = make(map[string]bool)
	}
	// A skill's or agent's check is made afresh through a cache too:
	// its key (the file's head and stat, a skill's directory walked)
	// cost more than the check, and a vet of agents or skills cost more
	// than validating without a cache. An instruction's is kept with its
	// stat (checkInstruction), which spares reading it whole.
	if src == v.id {
		var ok bool
		missing := ""
		switch {
		case r.Kind == "skill":
			ok, missing = v.skillAt(r.Selector, rel)
		case r.Kind == "agent":
			ok, missing = v.agentAt(r.Selector, rel)
		case r.Kind == "instruction" && v.cache == nil:
			ok, missing = v.instructionAt(rel)
		}
		if ok {
			return target{resolution: Resolved, path: rel, root: root}
		}
		if missing != "" {
			return target{resolution: Unresolved, reason: missing}
		}
	}
	fi, why := lstatInsideKnown(root, rel, v.dirs)
	if why != "" {
		return target{resolution: Unresolved, reason: why}
	}
	t := target{resolution: Resolved, path: rel, root: root}
	if src == v.id {
		switch r.Kind {
		case "skill":
			v.skill(r.Selector, rel)
		case "agent":
			v.agent(r.Selector, rel, fi)
		case "instruction":
			v.instruction(rel, fi)
		}
	}
	return t
}

// tooBig reports a member file over the file limit (E068) into l. Its
// size comes from lstat: the file is not read.
func (v *sourceCheck) tooBig(rel string, fi fs.FileInfo, l *diagList) bool {
	if fi.Size() <= v.rules.Limits.FileBytes {
		return false
	}
	l.errorf("E068", Pos{}, "", "%s is %d bytes, more than the %d-byte file limit", rel, fi.Size(), v.rules.Limits.FileBytes)
	return true
}

// instruction checks a resolved instruction: within the file limit, and
// text, since its bytes are written into the user's CLAUDE.md or
// AGENTS.md: valid UTF-8 without NUL.
func (v *sourceCheck) instruction(rel string, fi fs.FileInfo) {
	l := v.fileDiags(rel)
	if v.tooBig(rel, fi, l) {
		return
	}
	v.checkInstruction(rel, func() {
		f, ofi, err := regular.Open(filepath.Join(v.root, filepath.FromSlash(rel)))
		if err != nil {
			l.errorf("E070", Pos{}, "", "%s cannot be read: %v", rel, unwrapPathError(err))
			return
		}
		defer f.Close()
		v.instructionText(rel, f, ofi.Size(), l)
	})
}

// instructionAt resolves and checks the instruction whose file is rel, as
// agentAt does an agent: opened without following a symlink, its fstat
// proves it regular and gives the size the file limit is held to, and it
// is read to that size with raw system calls (instructionText), where
// stating it, opening it by its path and reading it through an *os.File
// made six calls through the scheduler (TestInstructionSystemCalls). A
// file that is not there is said missing from the failed open (missing,
// in lstatInside's words); what else it cannot prove it leaves to
// lstatInside and instruction.
func (v *sourceCheck) instructionAt(rel string) (ok bool, missing string) {
	d := v.heldDir(path.Dir(rel))
	if d == nil {
		return false, ""
	}
	f, fi, err := d.openRegular(path.Base(rel))
	if err != nil {
		return false, notThere(rel, "", err)
	}
	defer f.close()
	l := &diagList{file: rel}
	if !v.tooBig(rel, fi, l) {
		instructionsRead.Add(1)
		v.instructionText(rel, f, fi.size, l)
	}
	v.keep(l)
	return true, ""
}

// instructionText checks that the instruction rel, open as r, is text.
// It reads the size the open file's fstat gave, and no read more to see
// the end, as readKeyed reads a manifest: that read was a system call for
// each instruction, and a file that grows meanwhile is checked as its
// fstat stated it. A size of 0, which a file system that does not know
// sizes gives, or one past the file limit (a file that grew since tooBig
// saw it) is read to the end or the limit.
func (v *sourceCheck) instructionText(rel string, r io.Reader, size int64, l *diagList) {
	limit := v.rules.Limits.FileBytes
	if size > 0 && size < limit {
		limit = size
	}
	pos, what, err := checkText(io.LimitReader(r, limit))
	switch {
	case err != nil:
		l.errorf("E070", Pos{}, "", "%s cannot be read: %v", rel, unwrapPathError(err))
	case what != "":
		l.errorf("E091", pos, "", "%s: an instruction is Markdown text written into the user's CLAUDE.md or AGENTS.md", what)
	}
}

// textBuffers hold checkText's buffers: a source whose packages bring
// instructions of their own would otherwise allocate and clear 64 KiB for
// each, most of the garbage of its check.
var textBuffers = sync.Pool{New: func() any {
	b := make([]byte, 64<<10)
	return &b
}}

// checkText reads r to its end and returns the position of the first byte
// that keeps it from being text (invalid UTF-8 or NUL) and what it is, or
// "" when it is text. It reads in chunks: an instruction may be as large
// as the file limit. A read's whole runes are checked at once (a UTF-8
// check and a search for NUL, both many bytes a step) and only a read that
// holds a fault is stepped through a rune at a time to place it: stepping
// through every byte was the largest single cost of validating packages
// that bring instructions of their own (6% of the instructions run).
//
// The UTF-8 check is github.com/segmentio/asm/utf8's, 32 bytes a step
// with AVX2: unicode/utf8.Valid goes a byte at a time through any word
// that holds a character outside ASCII, and on instructions of prose with
// one every few words it was a quarter of a cold validation's CPU
// (BenchmarkCheckText: 1.2 GB/s, and some 7x that with it). It answers as
// unicode/utf8 does (TestCheckTextAgrees, FuzzCheckText).
func checkText(r io.Reader) (Pos, string, error) {
	bp := textBuffers.Get().(*[]byte)
	defer textBuffers.Put(bp)
	buf := *bp
	pos := Pos{1, 1}
	carry := 0
	for {
		n, err := r.Read(buf[carry:])
		eof := err == io.EOF
		if err != nil && !eof {
			return Pos{}, "", err
		}
		data := buf[:carry+n]
		end := len(data)
		if !eof {
			end = wholeRunes(data)
		}
		if text := data[:end]; asmutf8.Valid(text) && bytes.IndexByte(text, 0) < 0 {
			if lines := bytes.Count(text, []byte{'\n'}); lines > 0 {
				pos = Pos{pos.Line + lines, len(text) - lastByte(text, '\n')}
			} else {
				pos.Column += len(text)
			}
			carry = copy(buf, data[end:])
			if eof {
				return pos, "", nil
			}
			continue
		}
		textStepped.Add(1)
		i := 0
		for i < len(data) {
			b := data[i]
			switch {
			case b == 0:
				return pos, "NUL byte", nil
			case b < utf8.RuneSelf:
				if b == '\n' {
					pos.Line++
					pos.Column = 0
				}
				pos.Column++
				i++
				continue
			case !eof && !utf8.FullRune(data[i:]):
				// The rest of this rune is in the next read.
			default:
				c, size := utf8.DecodeRune(data[i:])
				if c == utf8.RuneError && size <= 1 {
					return pos, fmt.Sprintf("invalid UTF-8 (byte 0x%02x)", b), nil
				}
				pos.Column += size
				i += size
				continue
			}
			break
		}
		carry = copy(buf, data[i:])
		if eof {
			return pos, "", nil
		}
	}
}

// lastByte is bytes.LastIndexByte(s, c), found a window at a time from
// the end with IndexByte, many bytes a step: LastIndexByte goes a byte at
// a time, and placing the end of each read of an instruction written on
// one line of 256 KB went through all of it, over a third of validating
// packages that bring one.
func lastByte(s []byte, c byte) int {
	const window = 512
	for end := len(s); end > 0; end -= window {
		start := max(end-window, 0)
		if w := s[start:end]; bytes.IndexByte(w, c) >= 0 {
			return start + bytes.LastIndexByte(w, c)
		}
	}
	return -1
}

// wholeRunes returns how many of data's bytes hold whole runes: all but a
// rune whose last bytes the next read brings. A byte that starts no rune
// counts as whole, as utf8.FullRune counts it.
func wholeRunes(data []byte) int {
	for i := len(data) - 1; i >= 0 && i >= len(data)-utf8.UTFMax; i-- {
		if utf8.RuneStart(data[i]) {
			if !utf8.FullRune(data[i:]) {
				return i
			}
			break
		}
	}
	return len(data)
}

// textStepped counts the reads checkText stepped through a rune at a
// time: a test holds valid text to none.
var textStepped atomic.Int64

// skill checks a resolved skill: its directory within the limits and its
// Agent Skills front matter.
func (v *sourceCheck) skill(name, rel string) {
	l := v.fileDiags(rel)
	walkTree(v.root, v.rules.Layout.Dir("skill", name), &v.rules.Limits, l, false)
	v.skillFrontMatter(name, rel, nil, l)
}

func (v *sourceCheck) skillFrontMatter(name, rel string, head *fmText, l *diagList) {
	if head != nil && head.checked {
		reportFindings(head.found, l)
		return
	}
	fm, off, ok := v.frontMatter(rel, head, l)
	if !ok {
		return
	}
	v.rules.checkFrontMatter(v.rules.skillFM, name, rel, fm, off, l, fmProgramFirst)
}

// skillAt resolves and checks the skill name, whose file is rel, with the
// system calls its walk makes anyway, and reports whether it did: its
// directory opened relative to its layout folder (heldDir), so that the
// kernel resolves one name, not the path from the root, and without
// following a symlink, proves it a real directory, the listing shows its
// file a regular one, and the walk reads
// the file's head where it would state it. Resolving it with
// lstatInside, walking it and then reading the file by its path made
// 17 system calls for a skill of one subfolder, where this makes 13
// (TestSkillSystemCalls). Whatever this cannot prove (a
// layout directory not yet known real, a directory that does not open, a
// file not regular) it leaves to lstatInside and skill, which say why, as
// they always did; a directory or file that is not there it says missing
// itself (missing, in lstatInside's words), from the failed open or the
// listing.
func (v *sourceCheck) skillAt(name, rel string) (ok bool, missing string) {
	dir := v.rules.Layout.Dir("skill", name)
	if path.Dir(rel) != dir {
		return false, ""
	}
	held := v.heldDir(path.Dir(dir))
	if held == nil {
		return false, ""
	}
	d, err := held.sub(path.Base(dir))
	if err != nil {
		return false, notThere(rel, dir, err)
	}
	defer d.close()
	ents, err := d.entries()
	if err != nil {
		return false, ""
	}
	file := path.Base(rel)
	i, found := slices.BinarySearchFunc(ents, file, func(e dirEntry, n string) int { return strings.Compare(e.name, n) })
	if !found {
		return false, notExist(rel, "")
	}
	if !ents[i].typ.IsRegular() {
		return false, ""
	}
	l := &diagList{file: rel}
	defer v.keep(l)
	head := assetHead{name: file, limit: int64(v.rules.Limits.FrontMatterBytes + 8), check: func(yaml string) ([]fmFinding, bool) {
		return v.rules.plainFindings(v.rules.skillFM, name, yaml, frontMatterLine)
	}}
	walkOpen(d, ents, dir, &v.rules.Limits, l, false, &head)
	var data *fmText
	if head.read {
		data = &head.data
	}
	v.skillFrontMatter(name, rel, data, l)
	return true, ""
}

// heldDir returns the directory rel under v.root, a layout directory
// such as agents, held open for the run once realDirs proved each of its
// components a real directory, or nil when it is not one or cannot be
// opened (or not here: openRealDir). Its files are opened relative to it,
// so that the kernel resolves one name for each, not the path from the
// root; references closes what it holds.
func (v *sourceCheck) heldDir(rel string) walkDir {
	if d, ok := v.held[rel]; ok {
		return d
	}
	var d walkDir
	if v.realDirs(rel) {
		if od, err := openRealDir(filepath.Join(v.root, filepath.FromSlash(rel))); err == nil {
			d = od
		}
	}
	if v.held == nil {
		v.held = make(map[string]walkDir)
	}
	v.held[rel] = d
	return d
}

// realDirs reports whether each component of rel under v.root is a real
// directory, stating (once a run, v.dirs) those not yet known to be.
// Its answer is kept by rel too: every skill asks it of the same layout
// directory, and splitting and joining its path cost allocations a skill.
func (v *sourceCheck) realDirs(rel string) bool {
	if v.realRel[rel] {
		return true
	}
	cur := v.root
	for _, c := range strings.Split(rel, "/") {
		cur = filepath.Join(cur, c)
		if v.dirs[cur] {
			continue
		}
		componentLstats.Add(1)
		fi, err := os.Lstat(cur)
		if err != nil || !fi.IsDir() {
			return false
		}
		v.dirs[cur] = true
	}
	if v.realRel == nil {
		v.realRel = make(map[string]bool)
	}
	v.realRel[rel] = true
	return true
}

func (v *sourceCheck) agent(name, rel string, fi fs.FileInfo) {
	v.agentFile(name, rel, fi, nil)
}

func (v *sourceCheck) agentFile(name, rel string, fi fs.FileInfo, head *fmText) {
	l := &diagList{file: rel}
	defer v.keep(l)
	if v.tooBig(rel, fi, l) {
		return
	}
	if head != nil && head.checked {
		reportFindings(head.found, l)
		return
	}
	fm, off, ok := v.frontMatter(rel, head, l)
	if !ok {
		return
	}
	v.rules.checkFrontMatter(v.rules.agentFM, name, rel, fm, off, l, fmProgramFirst)
}

// agentAt resolves and checks the agent name, whose file is rel, as
// skillAt does a skill: opened without following a symlink, its fstat
// proves it regular and gives the size the file limit is held to, and one
// read its head, where stating it, opening it by its path and reading to
// its end made six system calls. A file that is not there it says
// missing (missing, in lstatInside's words); what else it cannot prove it
// leaves to lstatInside and agent.
func (v *sourceCheck) agentAt(name, rel string) (ok bool, missing string) {
	d := v.heldDir(path.Dir(rel))
	if d == nil {
		return false, ""
	}
	fi, head, err := d.readHead(path.Base(rel), int64(v.rules.Limits.FrontMatterBytes+8), func(yaml string) ([]fmFinding, bool) {
		return v.rules.plainFindings(v.rules.agentFM, name, yaml, frontMatterLine)
	})
	if err != nil {
		return false, notThere(rel, "", err)
	}
	v.agentFile(name, rel, fi, &head)
	return true, ""
}

// frontMatter reads the YAML front matter of a Markdown file, bounded: it
// must open the file and close within the front matter limit. It returns
// the YAML and the line it starts on. head is what the caller read of the
// file's first bytes (readHead), else nil.
func (v *sourceCheck) frontMatter(rel string, head *fmText, l *diagList) (string, int, bool) {
	limit := int64(v.rules.Limits.FrontMatterBytes)
	if head == nil {
		buf, err := v.readHead(rel)
		var te *regular.TypeError
		if errors.As(err, &te) {
			l.errorf("E079", Pos{}, "", "is not a regular file")
			return "", 0, false
		}
		if err != nil {
			l.errorf("E079", Pos{}, "", "cannot be read: %v", unwrapPathError(err))
			return "", 0, false
		}
		t := frontMatterText(buf)
		head = &t
	}
	if !head.opened {
		l.errorf("E079", Pos{1, 1}, "", "no YAML front matter: the file must start with a --- line")
		return "", 0, false
	}
	if !head.closed {
		l.errorf("E079", Pos{1, 1}, "", "front matter is not closed by a --- line within %d bytes", limit)
		return "", 0, false
	}
	return head.yaml, frontMatterLine, true
}

// An fmText is what the front matter check reads of a Markdown file's
// first bytes: whether a --- line opens them, whether another closes the
// front matter and, when one does, the YAML between.
type fmText struct {
	yaml           string
	opened, closed bool
	// checked says the front matter was read plain and checked where
	// it was read (Rules.plainFindings), its YAML not kept: found is
	// what the check found, nothing when it broke no rule.
	checked bool
	found   []fmFinding
}

// frontMatterText is the fmText of a file's first bytes buf. Its YAML is
// the one copy made of them: the front matter check cuts its keys and
// values from it (plainFrontMatter), where copying the file's head and
// then the YAML again was a sixth of what checking a package of
// bench/sourcegen's skills shape allocated.
func frontMatterText(buf []byte) fmText {
	opened, from, to, _ := frontMatterSpan(buf)
	if !opened || to < 0 {
		return fmText{opened: opened}
	}
	return fmText{yaml: string(buf[from:to]), opened: true, closed: true}
}

// frontMatterSpan finds the front matter of a Markdown file's first bytes
// buf: opened reports that buf (after a byte order mark) starts with a
// --- line; the YAML is buf[from:to], to < 0 when no closing --- line
// follows; next is the offset just past the closing line's newline, -1
// when that line is buf's last and unterminated (more bytes could make
// it another line).
func frontMatterSpan(buf []byte) (opened bool, from, to, next int) {
	b := bytes.TrimPrefix(buf, []byte(utf8BOM))
	if !bytes.HasPrefix(b, []byte("---\n")) && !bytes.HasPrefix(b, []byte("---\r\n")) {
		return false, 0, -1, -1
	}
	start := len(buf) - len(b) + bytes.IndexByte(b, '\n') + 1
	rest := buf[start:]
	for i := 0; i < len(rest); {
		j := bytes.IndexByte(rest[i:], '\n')
		line := rest[i:]
		if j >= 0 {
			line = rest[i : i+j]
		}
		if closesFrontMatter(line) {
			if j < 0 {
				return true, start, start + i, -1
			}
			return true, start, start + i, start + i + j + 1
		}
		if j < 0 {
			break
		}
		i += j + 1
	}
	return true, start, -1, -1
}

// closesFrontMatter reports whether line is ---, then blanks or carriage
// returns: what bytes.TrimRight(line, "\r \t") == "---" says, without
// its cutset's set built for each line of each front matter.
func closesFrontMatter(line []byte) bool {
	if len(line) < 3 || line[0] != '-' || line[1] != '-' || line[2] != '-' {
		return false
	}
	for _, b := range line[3:] {
		if b != '\r' && b != ' ' && b != '\t' {
			return false
		}
	}
	return true
}

// frontMatterHead returns how many of a file's first bytes buf frontMatter
// needs to give the answer it gives on the file's first limit bytes:
// through the closing --- line, or the few that show the file does not
// start with front matter; -1 when buf does not settle it.
func frontMatterHead(buf []byte) int {
	opened, _, _, next := frontMatterSpan(buf)
	if opened {
		return next
	}
	b := bytes.TrimPrefix(buf, []byte(utf8BOM))
	if len(b) < len("---\r\n") {
		return -1 // "---" or "---\r" may yet open it
	}
	return len(buf) - len(b) + len("---\r\n")
}

// fmRule is a front matter definition and the program read from it.
type fmRule struct {
	def  cue.Value
	prog *fmProgram // nil when the definition holds what no program runs
}

func newFMRule(root cue.Value, path string) fmRule {
	def := root.LookupPath(cue.ParsePath(path))
	return fmRule{def: def, prog: newFMProgram(root, def)}
}

// fmWay is how checkFrontMatter asks the rule; each way but fmFill falls
// back on the next when it cannot answer.
type fmWay int

const (
	fmProgramFirst fmWay = iota // the definition's program (fmprog.go)
	fmUnify                     // one unification from the YAML's syntax tree
	fmFill                      // filling dir and the built front matter: the reference
)

// extractYAML is yaml.Extract, with a panic of the YAML decoder (CUE
// v0.17.1 indexes past its line table on some inputs with bare carriage
// returns: FuzzFrontMatterProgram found "\r\r00") returned as the error
// it is: a package's bytes must never crash the validator.
func extractYAML(rel string, src []byte) (file *ast.File, err error) {
	defer func() {
		if p := recover(); p != nil {
			file, err = nil, fmt.Errorf("%s: the YAML decoder failed on it (%v)", rel, p)
		}
	}()
	return yaml.Extract(rel, src)
}

// yamlExtracted counts the front matters CUE's YAML decoder read: a test
// holds a source of generated skills to none (plainFrontMatter reads them).
var yamlExtracted atomic.Int64

// frontMatterUnified counts the front matters CUE was asked to unify: a
// test holds a source of generated skills to none.
var frontMatterUnified atomic.Int64

// checkFrontMatter checks the YAML front matter src of a skill or agent
// found under the name dir, starting on line line of rel, against rule
// (#SkillFrontMatter or #AgentFrontMatter) into l, the way way says.
// fmUnify asks CUE once, with dir and the front matter in one value built
// from the YAML's syntax tree; a front matter that is not a plain
// mapping, or whose answer cannot be decoded, is asked the fmFill way,
// filling dir and then the built front matter into the definition, so
// that its diagnostics are exactly those. TestFrontMatterFastPathAgrees
// and TestFrontMatterProgramAgrees hold the three to the same findings.
// plainFindings runs rule's program on src, a front matter's YAML from
// the file's line line, when it is read plain (plainFrontMatter), and
// returns what it found, each at its key's line (none: src broke no rule);
// ok is false when src is not read plain or the program declines. It
// keeps nothing of src, which may be a view of a buffer its caller
// reuses (readHeadAt): copying the YAML of every skill and agent out of
// it was most of what checking packages of twelve subagents allocated,
// and what a finding says is copied out of it instead. A front matter
// the program finds something in was read and run again, from a copy,
// before its findings could be said (TestFrontMatterFindingsReadOnce).
func (r *Rules) plainFindings(rule fmRule, name, src string, line int) (found []fmFinding, ok bool) {
	if rule.prog == nil {
		return nil, false
	}
	dec := unescaped.Get().(*[]byte)
	defer func() {
		*dec = (*dec)[:0] // what it decoded is read no more: found holds copies (emit)
		unescaped.Put(dec)
	}()
	fm, lines, twice, ok := plainFrontMatterKeys(src, dec)
	if !ok {
		return nil, false
	}
	if twice.line > 0 {
		// All that is said of it, in the words checkFrontMatter says it
		// of CUE's tree, without CUE's decoder (some 70 us a file).
		found = []fmFinding{{code: "E078", pos: Pos{twice.line + line - 1, 1}, message: keyTwiceMessage(twice.key, twice.first+line-1)}}
		releasePlain(fm, lines)
		return found, true
	}
	vs, ok := rule.prog.violationsOf(name, fm)
	if ok && len(vs) > 0 {
		found = make([]fmFinding, len(vs))
		for i, x := range vs {
			pos := Pos{1, 1}
			if j := fm.field(x.Field); j >= 0 {
				pos = Pos{lines[j] + line - 1, 1}
			}
			found[i] = fmFinding{code: x.Code, field: x.Field, message: x.Message, pos: pos}
		}
	}
	releasePlain(fm, lines)
	if !ok {
		return nil, false
	}
	if len(found) == 0 {
		frontMattersProved.Add(1)
	}
	return found, true
}

// keyTwiceMessage is E078's message of a front matter that holds key
// twice, first at line first of its file.
func keyTwiceMessage(key string, first int) string {
	return fmt.Sprintf("front matter is not valid YAML: mapping key %q already defined at line %d", key, first)
}

// frontMatterLine is the line a Markdown file's front matter YAML starts
// on, after its opening --- line.
const frontMatterLine = 2

// An fmFinding is a violation of a front matter's rules, at its line.
type fmFinding struct {
	code, field, message string
	pos                  Pos
}

// reportFindings adds found to l.
func reportFindings(found []fmFinding, l *diagList) {
	l.diags = slices.Grow(l.diags, len(found))
	for _, x := range found {
		x.report(l)
	}
}

// report adds f to l: a code that starts with W is a warning.
func (f fmFinding) report(l *diagList) {
	sev := Error
	if strings.HasPrefix(f.code, "W") {
		sev = Warning
	}
	l.add(sev, f.code, f.pos, f.field, "%s", f.message)
}

// unescaped holds the buffers plainFindings has escaped values
// decoded onto (doubleQuoted): it keeps none of them.
var unescaped = sync.Pool{New: func() any { return new([]byte) }}

// frontMattersProved counts the front matters plainFindings proved: a
// test holds a generated source's to being proved so.
var frontMattersProved atomic.Int64

func (r *Rules) checkFrontMatter(rule fmRule, name, rel string, src string, line int, l *diagList, way fmWay) {
	if way == fmProgramFirst {
		if found, ok := r.plainFindings(rule, name, src, line); ok {
			reportFindings(found, l)
			return
		}
	}
	yamlExtracted.Add(1)
	file, err := extractYAML(rel, []byte(src))
	if err != nil {
		pos, msg := yamlError(rel, err, line)
		switch {
		case strings.Contains(msg, "mapping values are not allowed"):
			msg += quoteHint(src, pos.Line-line)
		case msg == "did not find expected key":
			msg += closedHint(src, pos.Line-line)
		}
		l.errorf("E078", pos, "", "front matter is not valid YAML: %s", msg)
		return
	}
	keys := map[string]Pos{}
	for _, d := range file.Decls {
		if f, ok := d.(*ast.Field); ok {
			if lbl, _, err := ast.LabelName(f.Label); err == nil {
				p := f.Label.Pos()
				at := Pos{p.Line() + line - 1, p.Column()}
				if first, twice := keys[lbl]; twice {
					// CUE's decoder keeps both, which unify to a
					// conflict (a front matter said to be no mapping,
					// after two more decodings) or to one value. YAML
					// holds a key once; go.yaml.in/yaml/v3 says so in
					// these words.
					l.errorf("E078", at, "", "%s", keyTwiceMessage(lbl, first.Line))
					return
				}
				keys[lbl] = at
			}
		}
	}
	var vs []violation
	done := false
	if way == fmProgramFirst && rule.prog != nil {
		vs, done = rule.prog.violations(name, file)
	}
	if !done && way <= fmUnify {
		frontMatterUnified.Add(1)
		vs, done = r.frontMatterViolations(rule.def, name, file)
	}
	if !done {
		frontMatterUnified.Add(1)
		if way <= fmUnify {
			// The fast attempt built its value from these nodes;
			// the whole path starts from a tree of its own.
			if file, err = extractYAML(rel, []byte(src)); err != nil {
				l.errorf("E078", Pos{line, 1}, "", "front matter is not valid YAML: %v", firstLine(err.Error()))
				return
			}
		}
		val := r.ctx.BuildFile(file)
		if val.Err() != nil || val.IncompleteKind() != cue.StructKind {
			if commentsOnly(src) {
				// A --- too many (Ruby's to_yaml starts its text with
				// one) closes the front matter before its keys.
				l.errorf("E078", Pos{line, 1}, "", "front matter is empty: its closing --- is on line %d; it must be a YAML mapping", line+strings.Count(src, "\n"))
				return
			}
			l.errorf("E078", Pos{line, 1}, "", "front matter must be a YAML mapping")
			return
		}
		out := rule.def.FillPath(cue.ParsePath("dir"), name).FillPath(cue.ParsePath("fm"), val).LookupPath(cue.ParsePath("violations"))
		if err := out.Decode(&vs); err != nil {
			l.errorf("E078", Pos{line, 1}, "", "front matter cannot be checked: %v", firstLine(err.Error()))
			return
		}
	}
	reportFrontMatter(vs, keys, l)
}

// reportFrontMatter adds the violations of a front matter whose keys are
// at keys to l.
func reportFrontMatter(vs []violation, keys map[string]Pos, l *diagList) {
	for _, x := range vs {
		pos, ok := keys[x.Field]
		if !ok {
			pos = Pos{1, 1}
		}
		fmFinding{x.Code, x.Field, x.Message, pos}.report(l)
	}
}

// frontMatterViolations asks def for the violations of the front matter
// file found under the name dir, unifying def once with {dir, fm} built
// from file's syntax tree, when file is a mapping of plain fields: each
// FillPath evaluates def whole, and building the front matter as a value
// of its own first costs a third evaluation. ok is false when file is
// anything else or the answer is not a list of violations: the caller then
// asks the way whose diagnostics are the reference.
func (r *Rules) frontMatterViolations(def cue.Value, dir string, file *ast.File) (vs []violation, ok bool) {
	for _, d := range file.Decls {
		if _, field := d.(*ast.Field); !field {
			return nil, false
		}
	}
	in := &ast.StructLit{Elts: []ast.Decl{
		&ast.Field{Label: ast.NewIdent("dir"), Value: ast.NewString(dir)},
		&ast.Field{Label: ast.NewIdent("fm"), Value: &ast.StructLit{Elts: file.Decls}},
	}}
	val := r.ctx.BuildExpr(in)
	if val.Err() != nil {
		return nil, false
	}
	out := def.Unify(val).LookupPath(cue.ParsePath("violations"))
	if err := out.Decode(&vs); err != nil {
		return nil, false
	}
	return vs, true
}

// yamlError splits a YAML decoding error into a position in the Markdown
// file and the message alone. The decoder words it "FILE:LINE: message" (or
// "FILE:LINE:COLUMN: message", or "FILE: message" when the YAML library gave
// no line) and counts lines from the front matter's first line, which is
// line first of the file; a finding names one position, the file's.
func yamlError(rel string, err error, first int) (Pos, string) {
	pos := Pos{first, 1}
	msg := firstLine(err.Error())
	msg = strings.TrimPrefix(msg, "expected a single YAML document: ")
	rest, ok := strings.CutPrefix(msg, rel+":")
	if !ok {
		return pos, msg
	}
	var nums []int
	for len(nums) < 2 {
		i := strings.IndexByte(rest, ':')
		n, err := strconv.Atoi(rest[:max(i, 0)])
		if i <= 0 || err != nil || n < 1 {
			break
		}
		nums = append(nums, n)
		rest = rest[i+1:]
	}
	msg = strings.TrimSpace(rest)
	if len(nums) > 0 {
		pos.Line = first + nums[0] - 1
		if len(nums) == 1 && slices.Contains(yamlParserProblems, msg) {
			// The library counts its parser's lines from 0 and its
			// scanner's from 1 (go.yaml.in/yaml/v3, parser.fail).
			pos.Line++
		}
	}
	if len(nums) > 1 {
		pos.Column = nums[1]
	}
	return pos, msg
}

// yamlParserProblems are the errors of the YAML library's parser (as
// against its scanner), whose line it gives counted from 0.
var yamlParserProblems = []string{
	"did not find expected <stream-start>",
	"did not find expected <document start>",
	"did not find expected node content",
	"did not find expected '-' indicator",
	"did not find expected key",
	"did not find expected ',' or ']'",
	"did not find expected ',' or '}'",
	"found undefined tag handle",
	"found duplicate %YAML directive",
	"found incompatible YAML document",
	"found duplicate %TAG directive",
}

// quoteHint says how to write line i (from 0) of the front matter src
// when YAML read a second mapping in it: a plain value holding ": "
// (description: Use when: asked) must be quoted. It is written in single
// quotes, where only a quote is doubled, so the fix is exact. A value
// wrapped over lines, its ": " on a line after its key's, is written
// whole, folded as YAML reads it.
func quoteHint(src string, i int) string {
	lines := strings.Split(src, "\n")
	if i < 0 || i >= len(lines) {
		return ""
	}
	key, value, ok := strings.Cut(strings.TrimRight(lines[i], "\r"), ": ")
	if k, v, wrapped := wrappedValue(lines, i); wrapped {
		key, value, ok = k, v, true
	}
	if j := strings.Index(value, " #"); j >= 0 {
		value = value[:j] // a comment, not the value's
	}
	value = strings.TrimSpace(value)
	key = strings.TrimSpace(key)
	if !ok || key == "" || strings.ContainsAny(key, "\"'#") || !strings.Contains(value, ": ") && !strings.HasSuffix(value, ":") || strings.ContainsAny(value[:1], "\"'[{|>") {
		return ""
	}
	return fmt.Sprintf("; a value holding \": \" must be quoted: %s: '%s'", key, strings.ReplaceAll(value, "'", "''"))
}

// closedHint is what E078 adds to "did not find expected key" when line
// i of src is a key whose value starts with a flow collection or a quoted
// scalar and goes on after it closes, as Claude Code's docs write a
// command's argument-hint: [pr-number] [priority] [assignee]: YAML reads
// the first [...] as the value and the rest as no key, so the message
// names the cause and gives the line with its value quoted whole, in
// single quotes.
func closedHint(src string, i int) string {
	lines := strings.Split(src, "\n")
	if i < 0 || i >= len(lines) {
		return ""
	}
	key, value, ok := strings.Cut(strings.TrimRight(lines[i], "\r"), ": ")
	key, value = strings.TrimSpace(key), strings.TrimSpace(value)
	if !ok || key == "" || strings.ContainsAny(key, "\"'#[{") || value == "" {
		return ""
	}
	end := closes(value)
	if end < 0 {
		return ""
	}
	rest := value[end:]
	if j := strings.Index(rest, " #"); j >= 0 {
		rest = rest[:j] // a comment, not the value's
		value = value[:end+j]
	}
	if strings.TrimSpace(rest) == "" {
		return ""
	}
	value = strings.TrimSpace(value)
	return fmt.Sprintf("; a value that goes on after its closing %c must be quoted whole: %s: '%s'", value[end-1], key, strings.ReplaceAll(value, "'", "''"))
}

// closes returns the length of the flow collection or quoted scalar s
// starts with, through its closing bracket or quote, or -1 when s starts
// with neither or it does not close.
func closes(s string) int {
	switch s[0] {
	case '"', '\'':
		for j := 1; j < len(s); j++ {
			switch {
			case s[0] == '"' && s[j] == '\\':
				j++
			case s[j] == '\'' && s[0] == '\'' && j+1 < len(s) && s[j+1] == '\'':
				j++ // '' is a quote inside
			case s[j] == s[0]:
				return j + 1
			}
		}
	case '[', '{':
		depth := 0
		for j := 0; j < len(s); j++ {
			switch s[j] {
			case '[', '{':
				depth++
			case ']', '}':
				if depth--; depth == 0 {
					return j + 1
				}
			case '"', '\'':
				n := closes(s[j:])
				if n < 0 {
					return -1
				}
				j += n - 1
			}
		}
	}
	return -1
}

// wrappedValue reports whether line i goes on a plain value that a
// key's line above it starts (description: Use when\n  the user says:
// review this), each line between indented more than the key's, and
// returns the key and the value folded over all its lines. What comes
// before the line's ": " must hold a blank, as prose does and a key
// rarely: "  author: Me" under "name: x" is a key indented by mistake
// more likely than the rest of x.
func wrappedValue(lines []string, i int) (key, value string, ok bool) {
	if before, _, found := strings.Cut(strings.TrimSpace(lines[i]), ": "); !found || !strings.Contains(before, " ") {
		return "", "", false
	}
	indent := func(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }
	at := indent(lines[i])
	for j := i - 1; j >= 0 && at > 0; j-- {
		l := strings.TrimRight(lines[j], "\r")
		if t := strings.TrimSpace(l); t == "" || t[0] == '#' {
			return "", "", false // an empty line or a comment ends a plain value
		}
		if indent(l) >= at {
			continue // a line of the value, or a key of the same mapping
		}
		k, v, found := strings.Cut(strings.TrimSpace(l), ": ")
		v = strings.TrimSpace(v)
		if !found || k == "" || v == "" || strings.ContainsAny(v[:1], "\"'[{|>&*!") || strings.Contains(v, " #") {
			return "", "", false
		}
		parts := []string{v}
		for _, m := range lines[j+1:] {
			m = strings.TrimRight(m, "\r")
			if strings.TrimSpace(m) == "" || indent(m) <= indent(l) {
				break
			}
			parts = append(parts, strings.TrimSpace(m))
		}
		return k, strings.Join(parts, " "), true
	}
	return "", "", false
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// cycles finds cycles in plugin.requires (through any requirement). Every
// package on a cycle is invalid: each gets one E077, at its edge into the
// shortest cycle through it, naming that cycle from itself round. In a
// component too large to search each member's (cycleSearchable), each
// gets the E077 at its first edge into the component, which leads back.
func (v *sourceCheck) cycles() {
	edges := map[string][]edge{}
	for _, p := range v.pkgs {
		if p.refs == nil {
			continue
		}
		for _, rq := range p.refs.requires {
			r := ParseRef(rq.Ref)
			if r.Kind != "plugin" || (r.Source != "" && r.Source != v.id) {
				continue
			}
			if _, ok := v.byName[r.Selector]; ok {
				edges[p.Name] = append(edges[p.Name], edge{to: r.Selector, field: requireField(rq.n)})
			}
		}
	}
	// Only a package in a strongly connected component with a cycle can
	// be on one, and its cycles stay inside that component: searching
	// there alone keeps a long chain of requires linear.
	comp := cyclicComponents(v.pkgs, edges)
	for _, p := range v.pkgs {
		c, ok := comp[p.Name]
		if !ok {
			continue
		}
		field, msg := c.cycleThrough(c.index[p.Name])
		if field == "" {
			continue
		}
		p.diags.errorf("E077", p.at(field), field, "cycle in plugin.requires: %s", msg)
	}
}

type edge struct{ to, field string }

// cyclicComponents returns, for each package on a cycle, its strongly
// connected component (Tarjan's algorithm, iterative so that a chain of
// 10,000 requires needs no deep stack).
func cyclicComponents(pkgs []*Package, edges map[string][]edge) map[string]*requiresComponent {
	index := map[string]int{}
	low := map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	out := map[string]*requiresComponent{}
	type frame struct {
		node string
		next int
	}
	for _, p := range pkgs {
		if _, seen := index[p.Name]; seen {
			continue
		}
		call := []frame{{node: p.Name}}
		index[p.Name], low[p.Name] = len(index), len(index)
		stack = append(stack, p.Name)
		onStack[p.Name] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			if es := edges[f.node]; f.next < len(es) {
				to := es[f.next].to
				f.next++
				if _, seen := index[to]; !seen {
					index[to], low[to] = len(index), len(index)
					stack = append(stack, to)
					onStack[to] = true
					call = append(call, frame{node: to})
				} else if onStack[to] {
					low[f.node] = min(low[f.node], index[to])
				}
				continue
			}
			n := f.node
			call = call[:len(call)-1]
			if len(call) > 0 {
				parent := call[len(call)-1].node
				low[parent] = min(low[parent], low[n])
			}
			if low[n] != index[n] {
				continue
			}
			i := len(stack) - 1
			for stack[i] != n {
				i--
			}
			members := slices.Clone(stack[i:])
			stack = stack[:i]
			for _, m := range members {
				onStack[m] = false
			}
			self := false
			for _, e := range edges[n] {
				self = self || e.to == n
			}
			if len(members) == 1 && !self {
				continue
			}
			c := newRequiresComponent(members, edges)
			for _, m := range members {
				out[m] = c
			}
		}
	}
	return out
}

// A requiresComponent is a strongly connected component of the packages'
// requires that holds a cycle, its members numbered for the searches.
type requiresComponent struct {
	members []string
	index   map[string]int32 // each member's number
	out     [][]cycleEdge    // each member's edges to members
	edges   int
	// What shortestCycle searches with, made for the first search and
	// reused: prev and first of a member are set when seen is stamp.
	prev, first []int32
	seen        []uint32
	stamp       uint32
	queue       []int32
}

type cycleEdge struct {
	to    int32
	field string
}

// newRequiresComponent numbers members and keeps their edges to each other.
func newRequiresComponent(members []string, edges map[string][]edge) *requiresComponent {
	c := &requiresComponent{members: members, index: make(map[string]int32, len(members)), out: make([][]cycleEdge, len(members))}
	for i, m := range members {
		c.index[m] = int32(i)
	}
	for i, m := range members {
		for _, e := range edges[m] {
			if to, ok := c.index[e.to]; ok {
				c.out[i] = append(c.out[i], cycleEdge{to, e.field})
				c.edges++
			}
		}
	}
	return c
}

// maxCycleSearch bounds the breadth-first searches of one component: the
// search for a member's shortest cycle may read every member and edge,
// and a component of n members and e edges is searched n times, n*(n+e)
// in all. A ring of 2,000 packages, each requiring the two before it,
// cost 40 times the floor searched so, and more per package the longer
// the ring (TestLongCycleSearchBounded).
const maxCycleSearch = 1 << 18

// cycleSearchable reports whether c is small enough to search each
// member's shortest cycle.
func (c *requiresComponent) cycleSearchable() bool {
	n := int64(len(c.members))
	return n*(n+int64(c.edges)) <= maxCycleSearch
}

// cycleThrough returns the field of member m's edge into a cycle through
// it, and how the finding names the cycle: the shortest one, from m
// round, when c is small enough to search; else m's first edge into c,
// which leads back to m, as every member of c reaches every other.
func (c *requiresComponent) cycleThrough(m int32) (field, cycle string) {
	if c.cycleSearchable() {
		cyc, field := c.shortestCycle(m)
		if cyc == nil {
			return "", ""
		}
		return field, nameCycle(cyc)
	}
	if len(c.out[m]) == 0 {
		return "", "" // not in a component: none is without an edge
	}
	e := c.out[m][0]
	name := c.members[m]
	return e.field, fmt.Sprintf("%s -> %s -> ... -> %s, through some of the %d packages that require one another (too many to name the shortest cycle through each)", name, c.members[e.to], name, len(c.members))
}

// shortestCycle returns the shortest cycle from start back to itself
// (start first and last), breadth first, with the field of start's edge
// that begins it; nil if start is on no cycle.
func (c *requiresComponent) shortestCycle(start int32) ([]string, string) {
	if c.seen == nil {
		c.prev, c.first = make([]int32, len(c.members)), make([]int32, len(c.members))
		c.seen = make([]uint32, len(c.members))
	}
	c.stamp++
	steps := int64(0)
	defer func() { cycleSearchSteps.Add(steps) }()
	see := func(to, from, first int32) {
		c.seen[to], c.prev[to], c.first[to] = c.stamp, from, first
		c.queue = append(c.queue, to)
	}
	c.queue = c.queue[:0]
	for i, e := range c.out[start] {
		if e.to == start {
			return []string{c.members[start], c.members[start]}, e.field
		}
		if c.seen[e.to] != c.stamp {
			see(e.to, start, int32(i))
		}
	}
	for q := 0; q < len(c.queue); q++ {
		n := c.queue[q]
		for _, e := range c.out[n] {
			steps++
			if e.to == start {
				path := []string{c.members[start]}
				for x := n; x != start; x = c.prev[x] {
					path = append(path, c.members[x])
				}
				slices.Reverse(path[1:])
				return append(path, c.members[start]), c.out[start][c.first[n]].field
			}
			if c.seen[e.to] != c.stamp {
				see(e.to, n, c.first[n])
			}
		}
	}
	return nil, ""
}

// cycleSearchSteps counts the edges shortestCycle reads: a test holds a
// long ring's to a bound.
var cycleSearchSteps atomic.Int64

// nameCycle writes a cycle as a -> b -> a; a long one keeps its first and
// last packages, so that a message stays short on a cycle through
// thousands of packages.
func nameCycle(c []string) string {
	const keep = 8
	if len(c) <= 2*keep {
		return strings.Join(c, " -> ")
	}
	return fmt.Sprintf("%s -> ... (%d more) -> %s", strings.Join(c[:keep], " -> "), len(c)-2*keep, strings.Join(c[len(c)-keep:], " -> "))
}

func (v *sourceCheck) packageReport(p *Package) PackageReport {
	pr := PackageReport{Name: p.Name, Path: p.Dir, Members: []MemberReport{}, Tools: []ToolReport{}, Hooks: []HookReport{}}
	pr.Valid = !p.diags.hasErrors()
	if p.Manifest == nil {
		pr.Valid = false
	}
	if p.refs == nil {
		return pr
	}
	for _, mb := range p.refs.members {
		pr.Members = append(pr.Members, MemberReport{Ref: mb.Ref, Requirement: mb.Requirement, Fallback: mb.Fallback})
	}
	m := p.Manifest
	if m == nil {
		return pr
	}
	pr.ID = m.Plugin.ID
	sum := p.summary
	if sum == nil {
		sum = summarize(m)
	}
	pr.Tools, pr.Hooks = sum.Tools, sum.Hooks
	return pr
}
