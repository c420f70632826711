package engine

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/pelletier/go-toml/v2"

	"dalo/internal/regular"
	"dalo/plan"
	"dalo/providers"
)

// DefaultSourceID is the source identity validate uses unless told another.
const DefaultSourceID = "validation"

// ErrNoSource is wrapped by the error that refuses a source path: missing,
// unreadable, or not a directory. The command line reports it as a usage
// error (exit 2).
var ErrNoSource = errors.New("source directory not found")

// A sourcePathError says what is wrong with a source path in words of its
// own; it is ErrNoSource for errors.Is.
type sourcePathError struct{ msg string }

func (e *sourcePathError) Error() string        { return e.msg }
func (e *sourcePathError) Is(target error) bool { return target == ErrNoSource }

// CheckSourceDir checks that dir is a directory, as a source must be: the
// check both 'dalo plugin validate' and 'dalo source add' apply. Its error
// wraps ErrNoSource and says what dir is instead.
func CheckSourceDir(dir string) error {
	r, err := LoadRules()
	if err != nil {
		return err
	}
	return r.CheckSourceDir(dir)
}

// CheckSourceDir checks dir with r's layout: missing, unreadable, or a file,
// with the source root to give when the file is a package's manifest.
func (r *Rules) CheckSourceDir(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &sourcePathError{fmt.Sprintf("%v: %s", ErrNoSource, dir)}
	case err != nil:
		return &sourcePathError{fmt.Sprintf("source directory %s cannot be read: %v", dir, unwrapPathError(err))}
	case fi.IsDir():
		return nil
	}
	lay := r.Layout
	msg := fmt.Sprintf("%s is a file, not a source directory: a source is a directory holding %s", dir, lay.Path("plugin", "<name>"))
	// The manifest of a package given for its source: name the source,
	// the directory that holds plugins/<name>/.
	pkg := filepath.Dir(dir)
	if filepath.Base(dir) == lay.File("plugin") && filepath.ToSlash(filepath.Base(filepath.Dir(pkg))) == lay["plugin"].Dir {
		msg += "; the source of this manifest is " + filepath.Dir(filepath.Dir(pkg))
	}
	return &sourcePathError{msg}
}

// Options configure Validate.
type Options struct {
	// SourceID is the identity of the source, for explicit same-source
	// references such as skill:company:review.
	SourceID string
	// Providers limits provider_hook_capabilities to these provider@version
	// keys; empty means every known provider version.
	Providers []string
	// Tables are the provider tables Providers are looked up in; nil means
	// the ones dalo ships (providers.Load). Install and review pass the
	// store's, with the local tables verified on this machine; validation
	// never does, so that its report is the same on every machine.
	Tables *providers.Tables
	// Registry resolves references to other sources: source id → root
	// directory. Validation passes none: it never consults the user's
	// registry, so such references stay out_of_source.
	Registry map[string]string
	// Sized, when set, is told how many packages discovery found, how
	// many bytes their manifests hold and how many the largest holds,
	// before any is checked: what validation holds in memory grows with
	// the first two, and what a worker needs while it checks a manifest
	// with the third (some 40 times its size). dalo sets its memory
	// limit from them.
	Sized func(packages int, manifestBytes, largest int64)
	// keepManifests keeps each package's typed manifest (Load): a
	// validation drops it once the package's checks are done (forget).
	keepManifests bool
	// Packages, when not empty, limits validation to these packages and
	// those they require, transitively, in this source: what a command
	// about one package needs. The report holds those alone, each with
	// the answer validating the whole source gives it; the facts that
	// concern the whole source (which packages exist, which ids are
	// taken) come from discovery and a scan of the other manifests for
	// their plugin.id. A name no package has is not an error: Source.Names
	// says which there are.
	Packages []string
	// Cache, when set, keeps the answers of package checks between runs:
	// a package whose inputs did not change is not checked again. Only
	// Validate reads it (validate and vet); Load ignores it, since what it
	// returns is read for decisions of trust.
	Cache Cache
}

// A Package is one discovered package after its own checks.
type Package struct {
	Name string
	Dir  string // relative to the source root: plugins/<name>
	File string // plugins/<name>/PLUGIN.toml
	// Manifest is the typed manifest, nil when its shape failed. Of a
	// package Validate checked, it keeps only schema_version and the
	// plugin's name and id once its checks are done (forget).
	Manifest *Manifest
	// doc is the decoded manifest while the package's own checks run.
	// They end by keeping only pos, the positions of the fields the
	// source-wide checks report at (sourceFields): the whole document
	// costs some 30 KB a package, which at 10,000 packages is most of
	// the memory validation holds.
	doc *manifest
	pos map[string]Pos
	// askedNext says the worker that checks the package asks the
	// providers about its hooks right after, and no cache entry is
	// written: the document is kept until then (dropDoc), and the
	// positions of the hooks' fields are read from it, not indexed for
	// each matcher name. Packages of forty hooks of forty names spent a
	// seventh of a validation indexing them and held 130 KB a package.
	askedNext bool
	// diags are the findings of the package's own contract: its manifest
	// and its files. refDiags are those of the resolution of its
	// references (unresolved, out of source, a member that fails its own
	// checks), which the report keeps apart: they never make the package
	// invalid, they block it (Report.Blocked).
	diags    diagList
	refDiags diagList
	// refs is what the manifest references, as far as it can be read:
	// nil only when the manifest was not decoded.
	refs *refList
	// caps are the capability rows of its hooks, made by capsBy.
	caps   []CapabilityRow
	capsBy *capabilityRun
	// summary is what the report says of its tools and hooks, made when
	// a validation drops the typed manifest (forget).
	summary *PackageReport
	// order is the package's place in discovery: the first of two
	// packages with one id keeps it.
	order int
}

// Source is a validated source: its packages and the report.
type Source struct {
	Root     string
	ID       string
	Packages []*Package
	Report   *Report
	// Limits are the reference limits the source was checked against;
	// install applies the same ones to what it copies.
	Limits Limits
	// Layout is where references point in the source (#SourceLayout);
	// the store reads asset paths from it rather than restating them.
	Layout Layout
	// Names are the packages discovery found, validated or not.
	Names []string
}

// Validate validates the author source at root without a store.
func Validate(root string, opts Options) (*Report, error) {
	s, err := load(root, opts)
	if err != nil {
		return nil, err
	}
	return s.Report, nil
}

// Load validates the source at root and keeps the decoded packages, for
// review, approval and installation.
func Load(root string, opts Options) (*Source, error) {
	opts.Cache = nil
	opts.keepManifests = true
	return load(root, opts)
}

// beforeReport is called when a validation has checked every package and
// is about to gather the report: a test measures what it holds then.
var beforeReport = func() {}

func load(root string, opts Options) (*Source, error) {
	if opts.SourceID == "" {
		opts.SourceID = DefaultSourceID
	}
	rules, err := LoadRules()
	if err != nil {
		return nil, err
	}
	if err := rules.CheckSourceID(opts.SourceID); err != nil {
		return nil, err
	}
	if err := rules.CheckSourceDir(root); err != nil {
		return nil, err
	}
	s := &Source{Root: root, ID: opts.SourceID, Limits: rules.Limits, Layout: rules.Layout}
	top := &diagList{}
	lay := rules.Layout
	names, size, largest := discover(root, lay, int64(rules.Limits.ManifestBytes), top)
	if opts.Sized != nil {
		opts.Sized(len(names), size, largest)
	}
	s.Names = names
	all := make([]*Package, len(names))
	for i, n := range names {
		file := lay.Path("plugin", n)
		all[i] = &Package{Name: n, Dir: lay.Dir("plugin", n), File: file, order: i, diags: diagList{file: file}, refDiags: diagList{file: file}}
	}
	cache := newCacheRun(opts.Cache, root)
	v := &sourceCheck{root: root, id: opts.SourceID, rules: rules, registry: opts.Registry, cache: cache, byName: map[string]*Package{}, files: map[string]*diagList{}, exists: map[string]bool{}}
	for _, p := range all {
		v.exists[p.Name] = true
	}
	tables := opts.Tables
	if tables == nil {
		if tables, err = providers.Load(); err != nil {
			return nil, err
		}
	}
	capsRun, err := newCapabilityRun(tables, opts.Providers)
	if err != nil {
		return nil, err
	}
	claimants := all
	if len(opts.Packages) == 0 {
		s.Packages = all
		for _, p := range s.Packages {
			p.askedNext = !opts.keepManifests && cache == nil
		}
		checkPackages(root, opts.SourceID, s.Packages, rules, cache, capsRun.afterChecks(opts.keepManifests))
	} else {
		s.Packages = v.closure(all, opts.Packages)
		claimants = v.idClaimants(all, s.Packages)
	}
	v.pkgs = s.Packages
	for _, p := range s.Packages {
		v.byName[p.Name] = p
	}
	v.uniqueIDs(claimants)
	v.references()
	v.omissions()
	v.cycles()
	cache.done()
	// Provider capabilities come before the diagnostics are gathered: an
	// unknown matcher tool name is a warning on its package.
	caps, err := capsRun.capabilities(s.Packages)
	if err != nil {
		return nil, err
	}
	beforeReport()

	rep := &Report{
		Schema:        1,
		Source:        SourceInfo{Path: root, ID: opts.SourceID},
		Authorization: "not evaluated",
		Packages:      []PackageReport{},
		References:    v.refs,
	}
	if rep.References == nil {
		rep.References = []Reference{}
	}
	rep.Diagnostics = gatherDiagnostics(top, s.Packages, v.files)
	for _, p := range s.Packages {
		rep.Packages = append(rep.Packages, v.packageReport(p))
	}
	// No package is its own finding only when discovery did not already
	// say why (a symlinked or unreadable plugins/ or package directory).
	if len(names) == 0 && !top.hasErrors() {
		rep.Diagnostics = append(rep.Diagnostics, Diagnostic{Severity: Error, Code: "E001", File: lay["plugin"].Dir, Message: "no package found: a source exposes packages only at " + lay.Path("plugin", "<name>")})
	}
	rep.Capabilities = caps
	rep.Valid = len(s.Packages) > 0 && rep.Errors() == 0
	for _, p := range rep.Packages {
		// A required reference that does not resolve is an error too;
		// this keeps the exit-0 condition the draft's whatever a
		// diagnostic says.
		if len(rep.Blocked(p.Name)) > 0 {
			rep.Valid = false
		}
	}
	s.Report = rep
	return s, nil
}

// gatherDiagnostics returns the findings of the source, of its packages
// and of the other files it read, in the report's order. It counts them
// first: a report of 160,000 findings appended one list after another
// copied and faulted in its growing slice for a sixth of the run's CPU.
func gatherDiagnostics(top *diagList, pkgs []*Package, files map[string]*diagList) []Diagnostic {
	n := len(top.diags)
	for _, p := range pkgs {
		n += len(p.diags.diags) + len(p.refDiags.diags)
	}
	var withFindings []string
	for f, l := range files {
		if len(l.diags) > 0 {
			withFindings = append(withFindings, f)
			n += len(l.diags)
		}
	}
	slices.Sort(withFindings)
	ds := make([]Diagnostic, 0, n+1) // +1: the report may add E001
	ds = append(ds, top.diags...)
	for _, p := range pkgs {
		ds = append(ds, p.diags.diags...)
		ds = append(ds, p.refDiags.diags...)
	}
	for _, f := range withFindings {
		ds = append(ds, files[f].diags...)
	}
	sortDiagnostics(ds)
	return ds
}

// discover lists the package directories of the plugin kind's directory
// (plugins/), not recursively, and the bytes of their manifests that
// validation will read (those within the limit of limit bytes): all of
// them and the largest.
func discover(root string, lay Layout, limit int64, l *diagList) ([]string, int64, int64) {
	top := lay["plugin"].Dir
	manifest := lay.File("plugin")
	dir := filepath.Join(root, top)
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, 0, 0
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		l.file = top
		l.errorf("E003", Pos{}, "", "%s is a symlink; packages cannot rely on symlinks", top)
		l.file = ""
		return nil, 0, 0
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		l.file = top
		l.errorf("E005", Pos{}, "", "%s cannot be read: %v", top, unwrapPathError(err))
		l.file = ""
		return nil, 0, 0
	}
	var names []string
	var size, largest int64
	for _, e := range ents {
		rel := lay.Dir("plugin", e.Name())
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			l.file = rel
			l.errorf("E003", Pos{}, "", "%s is a symlink; a package directory cannot rely on symlinks", rel)
		case e.IsDir():
			mf := filepath.Join(dir, e.Name(), manifest)
			fi, err := os.Lstat(mf)
			if errors.Is(err, fs.ErrNotExist) {
				l.file = rel
				l.warnf("W002", Pos{}, "", "%s has no %s; it is not a package", rel, manifest)
				continue
			}
			names = append(names, e.Name())
			if err == nil && fi.Mode().IsRegular() && fi.Size() <= limit {
				size += fi.Size()
				largest = max(largest, fi.Size())
			}
		}
	}
	l.file = ""
	return names, size, largest
}

// checkPackages runs each package's own checks, those the cache c (which
// may be nil) does not answer for, on a pool of workers that share the
// rules first. then, when not nil, makes for each worker what it does with
// each package after its checks.
func checkPackages(root, sourceID string, pkgs []*Package, first *Rules, c *cacheRun, then func() func(*Package)) {
	if then == nil {
		then = func() func(*Package) { return func(*Package) {} }
	}
	workers := min(runtime.GOMAXPROCS(0), len(pkgs))
	if workers <= 1 {
		own := func() *Rules { return first }
		next := then()
		for _, p := range pkgs {
			checkCached(root, sourceID, p, first, own, c)
			next(p)
			p.dropDoc()
		}
		return
	}
	// The workers share first: what they ask of CUE is serialized
	// (Rules.cueMu), and after the first packages nearly every answer is
	// remembered or a field program's. Compiling rules for each worker
	// cost some 9 ms of CPU a worker, as much as the floor's whole run on
	// 1,000 short manifests. A worker that meets a manifest the fast path
	// does not prove compiles rules of its own for the walk that says
	// where it is wrong, which asks CUE throughout.
	//
	// Each worker takes the next package by an atomic counter: handing
	// them out on a channel woke a parked worker, through the scheduler
	// and often the kernel, for every package.
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		var rules *Rules
		own := func() *Rules {
			if rules == nil {
				r, err := LoadRules()
				if err != nil {
					// Cannot happen: first was compiled from the same
					// files. Sharing it would race; fail loudly.
					panic(err)
				}
				rules = r
			}
			return rules
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			after := then()
			for i := next.Add(1) - 1; i < int64(len(pkgs)); i = next.Add(1) - 1 {
				checkCached(root, sourceID, pkgs[i], first, own, c)
				after(pkgs[i])
				pkgs[i].dropDoc()
			}
		}()
	}
	wg.Wait()
}

// checkPackage checks p, whose manifest's bytes are src, or, when src is
// nil, those it reads, with the rules r the workers share and, for what
// r's fast path does not prove, slow (checkShape).
func checkPackage(root, sourceID string, p *Package, r *Rules, slow func() *Rules, src []byte) {
	checkManifest(root, sourceID, p, r, slow, src)
	if p.doc != nil {
		p.pos = make(map[string]Pos)
		for _, f := range sourceFields(p, !p.askedNext) {
			p.pos[f] = p.doc.at(f)
		}
		positionsIndexed.Add(int64(len(p.pos)))
		if !p.askedNext {
			p.dropDoc()
		}
	}
}

// positionsIndexed counts the positions checkPackage kept: a test holds
// a validation without a cache to those of the source-wide fields.
var positionsIndexed atomic.Int64

// dropDoc releases p's decoded manifest, when it holds one.
func (p *Package) dropDoc() {
	if p.doc != nil {
		p.doc.release()
		p.doc = nil
	}
}

// forget drops p's typed manifest and the positions of its hooks' fields,
// once its own checks and what the
// providers do with its hooks are done, in a validation: its report says
// of the manifest only what summary keeps of its tools and hooks, and the
// source-wide checks read only plugin.id. On packages of six tools and
// twelve hooks the manifest was half of what a package held until the
// report (TestValidateHoldsLittlePerPackage).
func (p *Package) forget() {
	m := p.Manifest
	if m == nil {
		return
	}
	p.summary = summarize(m)
	p.Manifest = &Manifest{SchemaVersion: m.SchemaVersion, Plugin: Plugin{Name: m.Plugin.Name, ID: m.Plugin.ID}}
	// The positions kept are sourceFields(p, false)'s, which checkPackage
	// indexed with the hooks' (sourceFields(p, true)): the hooks' are
	// dropped, and a package with none keeps its index as it is, not
	// copied key by key after formatting each key again.
	hooks := 0
	for f := range p.pos {
		if strings.HasPrefix(f, hookFields) {
			hooks++
		}
	}
	if hooks > 0 {
		pos := make(map[string]Pos, len(p.pos)-hooks)
		for f, at := range p.pos {
			if !strings.HasPrefix(f, hookFields) {
				pos[f] = at
			}
		}
		p.pos = pos
	}
}

// summarize is what a package's report says of m's tools and hooks.
func summarize(m *Manifest) *PackageReport {
	pr := &PackageReport{Tools: make([]ToolReport, 0, len(m.Tools)), Hooks: make([]HookReport, 0, len(m.Hooks))}
	for _, t := range m.Tools {
		pr.Tools = append(pr.Tools, ToolReport{ID: t.ID, Runtime: t.Runtime, Entry: t.Entry, Availability: t.Availability})
	}
	for _, h := range m.Hooks {
		pr.Hooks = append(pr.Hooks, HookReport{ID: h.ID, Tool: h.Tool, Subject: h.Subject, Phase: h.Phase, Effect: h.Effect, Requirement: h.Requirement, FailurePolicy: h.FailurePolicy})
	}
	return pr
}

// sourceFields lists every field of p a source-wide check may report at:
// plugin.id (E076), each member and required reference (their
// resolution, W073, E077), and, with hooks, each hook's timeout and
// matcher names (the provider findings W101, W102).
func sourceFields(p *Package, hooks bool) []string {
	fs := []string{"plugin.id"}
	if p.refs != nil {
		fs = slices.Grow(fs, len(p.refs.members)+len(p.refs.requires))
		for _, mb := range p.refs.members {
			fs = append(fs, memberField(mb.n))
		}
		for _, rq := range p.refs.requires {
			fs = append(fs, requireField(rq.n))
		}
	}
	if hooks && p.Manifest != nil {
		for i, h := range p.Manifest.Hooks {
			at := indexPath("hook", i)
			fs = append(fs, at+".timeout_ms")
			if h.Matcher != nil {
				for n := range h.Matcher.ToolNames {
					fs = append(fs, at+".matcher.tool_names["+strconv.Itoa(n)+"]")
				}
			}
		}
	}
	return fs
}

// hookFields starts the field path of each hook's field (hook[3].id).
const hookFields = "hook["

// at is the position of field, one of sourceFields, once the package's
// own checks are done: from the document while it is kept (askedNext).
func (p *Package) at(field string) Pos {
	if pos, ok := p.pos[field]; ok {
		return pos
	}
	if p.doc != nil {
		return p.doc.at(field)
	}
	return Pos{1, 1}
}

func checkManifest(root, sourceID string, p *Package, r *Rules, slow func() *Rules, src []byte) {
	l := &p.diags
	lim := &r.Limits
	name := r.Layout.File("plugin") // PLUGIN.toml
	var tooBig bool
	var err error
	if src == nil {
		src, tooBig, err = readBounded(filepath.Join(root, filepath.FromSlash(p.File)), int64(lim.ManifestBytes))
		afterRead(filepath.Join(root, filepath.FromSlash(p.File)))
	}
	switch {
	case errors.Is(err, regular.ErrSymlink):
		l.errorf("E004", Pos{}, "", "%s is a symlink; a manifest cannot rely on symlinks", name)
		return
	case err != nil:
		l.errorf("E005", Pos{}, "", "%s cannot be read: %v", name, unwrapPathError(err))
		return
	case tooBig:
		l.errorf("E006", Pos{}, "", "%s is larger than %d bytes", name, lim.ManifestBytes)
		return
	}
	// TOML 1.0 asks for "a valid UTF-8 encoded Unicode document", which
	// its authors meant to admit a byte order mark (toml-lang/toml#437);
	// editors on Windows save one. It is skipped, so line 1's columns
	// count from after it, as an editor shows them.
	src = bytes.TrimPrefix(src, []byte(utf8BOM))
	doc := decodeManifest(src, lim, l)
	if doc == nil {
		return
	}
	p.doc = doc
	tree := walkTree(root, p.Dir, lim, l, true)
	defer tree.release()
	if !r.checkShape(doc, l, slow) {
		// The reference checks still run on the entries that can be read:
		// references are a report of their own, and an author who fixes
		// the shape should not then meet an unresolved member. Tools and
		// hooks are not checked: that would guess at what a broken
		// descriptor means.
		p.refs = readRefs(doc, l)
		c := pkgCheck{root: root, sourceID: sourceID, p: p, doc: doc, r: r, l: l}
		c.refs()
		return
	}
	var m Manifest
	if typedManifest(doc.data, &m) != nil {
		m = Manifest{}
		if err := toml.Unmarshal(src, &m); err != nil {
			l.errorf("E008", Pos{1, 1}, "", "%v", err) // shape passed, so this is a bug
			return
		}
	}
	p.Manifest = &m
	p.refs = manifestRefs(&m)
	if m.Plugin.Name != p.Name {
		l.errorf("E027", doc.at("plugin.name"), "plugin.name", "plugin.name %s must equal its directory name %s", m.Plugin.Name, p.Name)
	}
	c := pkgCheck{root: root, sourceID: sourceID, p: p, m: &m, doc: doc, r: r, l: l, tree: &tree}
	c.tools()
	c.hooks()
	c.refs()
}

type pkgCheck struct {
	root, sourceID string
	p              *Package
	m              *Manifest
	doc            *manifest
	r              *Rules
	l              *diagList
	tree           *treeStats // what the walk of the package's directory saw
}

func (c *pkgCheck) report(vs []violation, prefix string) {
	for _, v := range vs {
		path := prefix
		if v.Field != "" {
			path = prefix + "." + v.Field
		}
		sev := Error
		if strings.HasPrefix(v.Code, "W") {
			sev = Warning
		}
		c.l.add(sev, v.Code, c.doc.at(path), path, "%s", v.Message)
	}
}

func (c *pkgCheck) tools() {
	seen := map[string]int{}
	for i, t := range c.m.Tools {
		at := indexPath("tool", i)
		if _, dup := seen[t.ID]; dup {
			c.l.errorf("E058", c.doc.at(at+".id"), at+".id", "duplicate tool id %s (first at tool[%d])", t.ID, seen[t.ID])
		} else {
			seen[t.ID] = i
		}
		inputs := map[string]int{}
		for n, in := range t.Inputs {
			if first, dup := inputs[in.Name]; dup {
				f := indexPath(at+".inputs", n) + ".name"
				c.l.errorf("E044", c.doc.at(f), f, "duplicate input name %s (first at inputs[%d])", in.Name, first)
				continue
			}
			inputs[in.Name] = n
		}
		for n, a := range t.Argv {
			if !strings.Contains(a, plan.ArgvSubstitution) {
				continue
			}
			f := indexPath(at+".argv", n)
			m := c.r.argvWhole.FindStringSubmatch(a)
			switch {
			case m == nil:
				c.l.errorf("E042", c.doc.at(f), f, "only a whole argument ${input.NAME} may interpolate; %q embeds or malforms a substitution", a)
			case !hasKey(inputs, m[1]):
				c.l.errorf("E043", c.doc.at(f), f, "argv interpolates undeclared input %s", m[1])
			}
		}
		c.toolFile(at+".entry", t.Entry, plan.Runtimes[t.Runtime].Interpreter == "")
		files := map[string]int{}
		for n, f := range t.Files {
			fp := indexPath(at+".files", n)
			switch first, dup := files[f]; {
			case f == t.Entry:
				c.l.errorf("E045", c.doc.at(fp), fp, "the entry %s is included automatically and must not be repeated in files", f)
			case dup:
				c.l.errorf("E046", c.doc.at(fp), fp, "duplicate file %s (first at files[%d])", f, first)
			default:
				files[f] = n
				c.toolFile(fp, f, false)
			}
		}
	}
}

// toolFile checks that rel names a regular file inside the package, reached
// without symlinks, executable when it must be.
func (c *pkgCheck) toolFile(field, rel string, executable bool) {
	if why := localPath(rel); why != "" {
		c.l.errorf("E060", c.doc.at(field), field, "path %q %s", rel, why)
		return
	}
	fi, ok := c.tree.lstat(rel)
	why := ""
	if !ok {
		dir := filepath.Join(c.root, filepath.FromSlash(c.p.Dir))
		var known bool
		if why, known = c.tree.missing(len(dir), rel); !known {
			fi, why = lstatInside(dir, rel)
		}
	}
	if why != "" {
		code := "E061"
		if strings.Contains(why, "symlink") {
			code = "E062"
		}
		c.dropWalkWarning(c.p.Dir + "/" + rel)
		c.l.errorf(code, c.doc.at(field), field, "%s", why)
		return
	}
	if fi.Size() > c.r.Limits.FileBytes {
		c.dropWalkWarning(c.p.Dir + "/" + rel)
		c.l.errorf("E068", c.doc.at(field), field, "%s is %d bytes, more than the %d-byte file limit", rel, fi.Size(), c.r.Limits.FileBytes)
	}
	if executable && fi.Mode().Perm()&0o100 == 0 {
		c.l.errorf("E063", c.doc.at(field), field, "runtime executable needs %s to have its executable bit set (chmod +x)", rel)
	}
}

// dropWalkWarning removes what the walk said about a symlink or a special
// file on the way to path (W064, W065), or about its size (E068): the
// diagnostic at the tool's field says it with a position, and one mistake
// is one diagnostic. What the walk said has no field: a tool field's own
// E068, filed under the manifest, is not the walk's, though a later path
// through the manifest (PLUGIN.toml/x) falls under it.
// It reads the list only when the walk warned (treeStats.warned), and
// moves it only when it drops something (slices.DeleteFunc): a package
// listing a hundred missing files copied its hundred findings at each.
func (c *pkgCheck) dropWalkWarning(path string) {
	if c.tree != nil && c.tree.warned == 0 {
		return
	}
	c.l.diags = slices.DeleteFunc(c.l.diags, func(d Diagnostic) bool {
		return d.Field == "" && (d.Code == "W064" || d.Code == "W065" || d.Code == "E068") && (d.File == path || strings.HasPrefix(path, d.File+"/"))
	})
}

func (c *pkgCheck) hooks() {
	tools := map[string]*Tool{}
	for i := range c.m.Tools {
		if _, ok := tools[c.m.Tools[i].ID]; !ok {
			tools[c.m.Tools[i].ID] = &c.m.Tools[i]
		}
	}
	seen := map[string]int{}
	declared := "" // toolIDs, made for the first hook whose tool is not one
	for i, h := range c.m.Hooks {
		at := indexPath("hook", i)
		if first, dup := seen[h.ID]; dup {
			c.l.errorf("E058", c.doc.at(at+".id"), at+".id", "duplicate hook id %s (first at hook[%d])", h.ID, first)
		} else {
			seen[h.ID] = i
		}
		var kb keyBuf
		key := questionKey(kb[:0], "hook", h.Subject, h.Phase, h.Effect, h.FailurePolicy, h.Requirement, strconv.FormatBool(h.Fallback != ""), strconv.FormatBool(h.Matcher != nil))
		c.report(c.r.ask(c.r.hookDef, key, func() map[string]any {
			return map[string]any{
				"subject": h.Subject, "phase": h.Phase, "effect": h.Effect,
				"failure_policy": h.FailurePolicy, "requirement": h.Requirement,
				"has_fallback": h.Fallback != "", "has_matcher": h.Matcher != nil,
			}
		}), at)
		t := tools[h.Tool]
		if t == nil {
			if declared == "" {
				declared = toolIDs(c.m.Tools)
			}
			c.l.errorf("E036", c.doc.at(at+".tool"), at+".tool", "no tool %s in this package; tools: %s", h.Tool, declared)
			continue
		}
		types := map[string]string{}
		for _, in := range t.Inputs {
			if _, ok := types[in.Name]; !ok {
				types[in.Name] = in.Type
			}
		}
		bound := map[string]int{}
		for n, b := range h.Bindings {
			bt := indexPath(at+".bindings", n)
			typ, ok := types[b.Input]
			if !ok {
				c.l.errorf("E038", c.doc.at(bt+".input"), bt+".input", "tool %s declares no input %s", h.Tool, b.Input)
			}
			if first, dup := bound[b.Input]; dup {
				c.l.errorf("E040", c.doc.at(bt+".input"), bt+".input", "input %s is already bound by bindings[%d]", b.Input, first)
				continue
			}
			bound[b.Input] = n
			if !ok {
				typ = "string" // still check the field itself
			}
			field := free(b.Field, c.r.eventFields, 0)
			vs := said(c.r.ask(c.r.bindDef, questionKey(kb[:0], "bind", h.Subject, h.Phase, field, typ), func() map[string]any {
				return map[string]any{"subject": h.Subject, "phase": h.Phase, "field": field, "input_type": typ}
			}), field, b.Field)
			if !ok {
				vs = dropCode(vs, "E039")
			}
			c.report(vs, bt)
		}
		for _, in := range t.Inputs {
			if _, ok := bound[in.Name]; !ok && in.IsRequired() {
				f := at + ".bindings"
				if h.Bindings == nil {
					f = at + ".tool"
				}
				c.l.errorf("E041", c.doc.at(f), f, "required input %s of tool %s has no binding", in.Name, h.Tool)
			}
		}
	}
}

func dropCode(vs []violation, code string) []violation {
	var out []violation
	for _, v := range vs {
		if v.Code != code {
			out = append(out, v)
		}
	}
	return out
}

// toolIDs names the tools ts declares, for a hook that names none of
// them: the first maxToolsNamed, and how many more.
func toolIDs(ts []Tool) string {
	if len(ts) == 0 {
		return "none"
	}
	ids := make([]string, min(len(ts), maxToolsNamed))
	for i := range ids {
		ids[i] = ts[i].ID
	}
	if len(ts) > maxToolsNamed {
		return fmt.Sprintf("%s and %d more", strings.Join(ids, ", "), len(ts)-maxToolsNamed)
	}
	return strings.Join(ids, ", ")
}

// maxToolsNamed is how many of a package's tools an E036 names: a package
// of 600 tools whose hooks each named one misspelt printed 10 KB a
// finding, 122 MB for 20 such packages (TestUnknownToolsNamedBounded).
const maxToolsNamed = 16

// refs checks members and requires against #RefRules, duplicates and the
// fallback closure; resolution happens once the whole source is known.
func (c *pkgCheck) refs() {
	rl := c.p.refs
	required := map[string]bool{}
	for _, mb := range rl.members {
		if mb.Requirement == plan.RequirementRequired {
			required[c.norm(mb.Ref)] = true
		}
	}
	seen := map[string]int{}
	var kb keyBuf
	for _, mb := range rl.members {
		n := mb.n
		at := indexPath("plugin.members", n)
		ref := ParseRef(mb.Ref)
		fbKind := ""
		if mb.Fallback != nil {
			fbKind = ParseRef(mb.Fallback.Skill).Kind
		}
		kind, fb := free(ref.Kind, c.r.refKinds, 0), free(fbKind, c.r.refKinds, 1)
		c.report(said(c.r.ask(c.r.refDef, questionKey(kb[:0], "ref", "members", kind, mb.Requirement, strconv.FormatBool(mb.Fallback != nil), fb), func() map[string]any {
			return map[string]any{
				"position": "members", "kind": kind, "requirement": mb.Requirement,
				"has_fallback": mb.Fallback != nil, "fallback_kind": fb,
			}
		}), kind, ref.Kind, fb, fbKind), at)
		norm := c.norm(mb.Ref)
		if first, dup := seen[norm]; dup {
			c.l.errorf("E057", c.doc.at(at+".ref"), at+".ref", "duplicate member reference %s (first at plugin.members[%d])", mb.Ref, first)
		} else {
			seen[norm] = n
		}
		// The closure is over every member: with one unreadable, the
		// skill may be that one.
		if mb.Fallback != nil && c.r.fallbacks[ref.Kind][fbKind] && !rl.partialMembers && !required[c.norm(mb.Fallback.Skill)] {
			c.l.errorf("E055", c.doc.at(at+".fallback.skill"), at+".fallback.skill", "fallback skill %s must also be a required member", mb.Fallback.Skill)
		}
	}
	seen = map[string]int{}
	for _, rq := range rl.requires {
		n := rq.n
		at := indexPath("plugin.requires", n)
		ref := ParseRef(rq.Ref)
		kind := free(ref.Kind, c.r.refKinds, 0)
		c.report(said(c.r.ask(c.r.refDef, questionKey(kb[:0], "ref", "requires", kind, rq.Requirement, "false", ""), func() map[string]any {
			return map[string]any{"position": "requires", "kind": kind, "requirement": rq.Requirement, "has_fallback": false}
		}), kind, ref.Kind), at)
		norm := c.norm(rq.Ref)
		if first, dup := seen[norm]; dup {
			c.l.errorf("E057", c.doc.at(at+".ref"), at+".ref", "duplicate required reference %s (first at plugin.requires[%d])", rq.Ref, first)
		} else {
			seen[norm] = n
		}
	}
}

// norm writes kind:<this source>:selector as kind:selector.
func (c *pkgCheck) norm(ref string) string {
	r := ParseRef(ref)
	if r.Source == c.sourceID {
		return r.Kind + ":" + r.Selector
	}
	return ref
}

func hasKey[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}
