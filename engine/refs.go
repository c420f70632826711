package engine

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/encoding/yaml"

	"dalo/internal/regular"
)

// sourceCheck makes the checks that need the whole source: unique ids,
// reference resolution, cycles in plugin.requires and the front matter of
// the skills and agents that references resolve to.
type sourceCheck struct {
	root, id string
	rules    *Rules
	registry map[string]string
	pkgs     []*Package
	byName   map[string]*Package
	files    map[string]*diagList // diagnostics about member files
	targets  map[string]target    // resolved asset, by kind:source:selector
	refs     []Reference
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
	}
	return l
}

func (v *sourceCheck) uniqueIDs() {
	first := map[string]*Package{}
	for _, p := range v.pkgs {
		if p.Manifest == nil || p.Manifest.Plugin.ID == "" {
			continue
		}
		id := p.Manifest.Plugin.ID
		if q, dup := first[id]; dup {
			p.diags.errorf("E076", p.doc.at("plugin.id"), "plugin.id", "plugin.id %s is also the id of %s; ids are unique in a source", id, q.File)
			continue
		}
		first[id] = p
	}
}

// references resolves every member, required plugin and fallback skill of
// every package whose manifest decoded.
func (v *sourceCheck) references() {
	v.targets = map[string]target{}
	for _, p := range v.pkgs {
		if p.Manifest == nil {
			continue
		}
		for n, mb := range p.Manifest.Plugin.Members {
			v.reference(p, fmt.Sprintf("plugin.members[%d].ref", n), mb.Ref, mb.Requirement)
		}
		for n, rq := range p.Manifest.Plugin.Requires {
			v.reference(p, fmt.Sprintf("plugin.requires[%d].ref", n), rq.Ref, rq.Requirement)
		}
	}
}

func (v *sourceCheck) reference(p *Package, field, ref, requirement string) {
	r := ParseRef(ref)
	if _, known := v.rules.Layout[r.Kind]; !known {
		return // already an E050/E051 from #RefRules
	}
	if hasErrorAt(&p.diags, field) {
		// Already refused where it stands (E050): resolving it would only
		// add a second diagnostic about the same mistake.
		v.refs = append(v.refs, Reference{Package: p.Name, Field: field, Ref: ref, Requirement: requirement, Resolution: InvalidRef, Reason: "not admitted at this position"})
		return
	}
	t := v.resolve(r)
	v.refs = append(v.refs, Reference{Package: p.Name, Field: field, Ref: ref, Requirement: requirement, Resolution: t.resolution, Target: t.path, Reason: t.reason})
	if t.resolution == Resolved {
		return
	}
	pos := p.doc.at(field)
	switch {
	case t.resolution == OutOfSource && requirement == "required":
		p.diags.errorf("E074", pos, field, "required reference %s names source %s; validate never consults the source registry, so it stays unresolved", ref, r.Source)
	case t.resolution == OutOfSource:
		p.diags.warnf("W075", pos, field, "%s reference %s names source %s and stays unresolved here; it is visibly omitted", requirement, ref, r.Source)
	case requirement == "required":
		p.diags.errorf("E071", pos, field, "required reference %s does not resolve: %s", ref, t.reason)
	default:
		p.diags.warnf("W072", pos, field, "%s reference %s does not resolve (%s); it is visibly omitted", requirement, ref, t.reason)
	}
}

func hasErrorAt(l *diagList, field string) bool {
	for _, d := range l.diags {
		if d.Severity == Error && d.Field == field {
			return true
		}
	}
	return false
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
		if _, ok := v.byName[r.Selector]; !ok {
			return target{resolution: Unresolved, reason: "no package " + v.rules.Layout.Dir("plugin", r.Selector)}
		}
		return target{resolution: Resolved, path: rel, root: root}
	}
	if _, why := lstatInside(root, rel); why != "" {
		return target{resolution: Unresolved, reason: why}
	}
	t := target{resolution: Resolved, path: rel, root: root}
	if src == v.id {
		switch r.Kind {
		case "skill":
			v.skill(r.Selector, rel)
		case "agent":
			v.agent(r.Selector, rel)
		}
	}
	return t
}

// skill checks a resolved skill: its directory within the limits and its
// Agent Skills front matter.
func (v *sourceCheck) skill(name, rel string) {
	l := v.fileDiags(rel)
	walkTree(v.root, v.rules.Layout.Dir("skill", name), &v.rules.Limits, l)
	fm, off, ok := v.frontMatter(rel, l)
	if !ok {
		return
	}
	v.checkFrontMatter(v.rules.skillDef, "skill", name, rel, fm, off, l)
}

func (v *sourceCheck) agent(name, rel string) {
	l := v.fileDiags(rel)
	fm, off, ok := v.frontMatter(rel, l)
	if !ok {
		return
	}
	v.checkFrontMatter(v.rules.agentDef, "agent", name, rel, fm, off, l)
}

// frontMatter reads the YAML front matter of a Markdown file, bounded: it
// must open the file and close within the front matter limit. It returns
// the YAML and the line it starts on.
func (v *sourceCheck) frontMatter(rel string, l *diagList) ([]byte, int, bool) {
	limit := int64(v.rules.Limits.FrontMatterBytes)
	f, _, err := regular.Open(filepath.Join(v.root, filepath.FromSlash(rel)))
	var te *regular.TypeError
	if errors.As(err, &te) {
		l.errorf("E079", Pos{}, "", "is not a regular file")
		return nil, 0, false
	}
	if err != nil {
		l.errorf("E079", Pos{}, "", "cannot be read: %v", unwrapPathError(err))
		return nil, 0, false
	}
	defer f.Close()
	buf := make([]byte, limit+8)
	// A short read is the whole file: only a read error would matter,
	// and a file that cannot be read has no front matter to find.
	n, _ := io.ReadFull(f, buf)
	buf = buf[:n]
	buf = bytes.TrimPrefix(buf, []byte(utf8BOM))
	if !bytes.HasPrefix(buf, []byte("---\n")) && !bytes.HasPrefix(buf, []byte("---\r\n")) {
		l.errorf("E079", Pos{1, 1}, "", "no YAML front matter: the file must start with a --- line")
		return nil, 0, false
	}
	start := bytes.IndexByte(buf, '\n') + 1
	rest := buf[start:]
	end := -1
	for i := 0; i < len(rest); {
		j := bytes.IndexByte(rest[i:], '\n')
		line := rest[i:]
		if j >= 0 {
			line = rest[i : i+j]
		}
		if string(bytes.TrimRight(line, "\r \t")) == "---" {
			end = i
			break
		}
		if j < 0 {
			break
		}
		i += j + 1
	}
	if end < 0 {
		l.errorf("E079", Pos{1, 1}, "", "front matter is not closed by a --- line within %d bytes", limit)
		return nil, 0, false
	}
	return rest[:end], 2, true
}

func (v *sourceCheck) checkFrontMatter(def cue.Value, kind, name, rel string, src []byte, line int, l *diagList) {
	file, err := yaml.Extract(rel, src)
	if err != nil {
		pos, msg := yamlError(rel, err, line)
		l.errorf("E078", pos, "", "front matter is not valid YAML: %s", msg)
		return
	}
	val := v.rules.ctx.BuildFile(file)
	if val.Err() != nil || val.IncompleteKind() != cue.StructKind {
		l.errorf("E078", Pos{line, 1}, "", "front matter must be a YAML mapping")
		return
	}
	keys := map[string]Pos{}
	for _, d := range file.Decls {
		if f, ok := d.(*ast.Field); ok {
			if lbl, _, err := ast.LabelName(f.Label); err == nil {
				p := f.Label.Pos()
				keys[lbl] = Pos{p.Line() + line - 1, p.Column()}
			}
		}
	}
	out := def.FillPath(cue.ParsePath("dir"), name).FillPath(cue.ParsePath("fm"), val).LookupPath(cue.ParsePath("violations"))
	var vs []violation
	if err := out.Decode(&vs); err != nil {
		l.errorf("E078", Pos{line, 1}, "", "front matter cannot be checked: %v", firstLine(err.Error()))
		return
	}
	for _, x := range vs {
		pos, ok := keys[x.Field]
		if !ok {
			pos = Pos{1, 1}
		}
		sev := Error
		if strings.HasPrefix(x.Code, "W") {
			sev = Warning
		}
		l.add(sev, x.Code, pos, x.Field, "%s", x.Message)
	}
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
	if len(nums) > 0 {
		pos.Line = first + nums[0] - 1
	}
	if len(nums) > 1 {
		pos.Column = nums[1]
	}
	return pos, strings.TrimSpace(rest)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// cycles finds cycles in plugin.requires (through any requirement) and
// reports each once, naming it, at the edge that closes it in the package
// that sorts first.
func (v *sourceCheck) cycles() {
	edges := map[string][]edge{}
	for _, p := range v.pkgs {
		if p.Manifest == nil {
			continue
		}
		for n, rq := range p.Manifest.Plugin.Requires {
			r := ParseRef(rq.Ref)
			if r.Kind != "plugin" || (r.Source != "" && r.Source != v.id) {
				continue
			}
			if _, ok := v.byName[r.Selector]; ok {
				edges[p.Name] = append(edges[p.Name], edge{to: r.Selector, field: fmt.Sprintf("plugin.requires[%d].ref", n)})
			}
		}
	}
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var stack []string
	reported := map[string]bool{}
	var visit func(n string)
	visit = func(n string) {
		color[n] = grey
		stack = append(stack, n)
		for _, e := range edges[n] {
			switch color[e.to] {
			case white:
				visit(e.to)
			case grey:
				i := len(stack) - 1
				for stack[i] != e.to {
					i--
				}
				cyc := append(append([]string{}, stack[i:]...), e.to)
				key := canonicalCycle(cyc)
				if reported[key] {
					continue
				}
				reported[key] = true
				p := v.byName[n]
				p.diags.errorf("E077", p.doc.at(e.field), e.field, "cycle in plugin.requires: %s", strings.Join(cyc, " -> "))
			}
		}
		stack = stack[:len(stack)-1]
		color[n] = black
	}
	for _, p := range v.pkgs {
		if color[p.Name] == white {
			visit(p.Name)
		}
	}
}

type edge struct{ to, field string }

func canonicalCycle(c []string) string {
	c = c[:len(c)-1]
	s := append([]string{}, c...)
	sort.Strings(s)
	return strings.Join(s, ",")
}

func (v *sourceCheck) packageReport(p *Package) PackageReport {
	pr := PackageReport{Name: p.Name, Path: p.Dir, Members: []MemberReport{}, Tools: []ToolReport{}, Hooks: []HookReport{}}
	pr.Valid = !p.diags.hasErrors()
	if p.Manifest == nil {
		pr.Valid = false
		return pr
	}
	m := p.Manifest
	pr.ID = m.Plugin.ID
	for _, mb := range m.Plugin.Members {
		pr.Members = append(pr.Members, MemberReport{Ref: mb.Ref, Requirement: mb.Requirement, Fallback: mb.Fallback})
		// A required member whose own file is invalid blocks the package.
		if mb.Requirement == "required" {
			r := ParseRef(mb.Ref)
			if _, known := v.rules.Layout[r.Kind]; known {
				if t := v.resolve(r); t.resolution == Resolved {
					if l, ok := v.files[t.path]; ok && l.hasErrors() {
						pr.Valid = false
					}
				}
			}
		}
	}
	for _, t := range m.Tools {
		pr.Tools = append(pr.Tools, ToolReport{ID: t.ID, Runtime: t.Runtime, Entry: t.Entry, Availability: t.Availability})
	}
	for _, h := range m.Hooks {
		pr.Hooks = append(pr.Hooks, HookReport{ID: h.ID, Tool: h.Tool, Subject: h.Subject, Phase: h.Phase, Effect: h.Effect, Requirement: h.Requirement, FailurePolicy: h.FailurePolicy})
	}
	return pr
}
