package main

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/spf13/pflag"

	"dalo/engine"
	"dalo/internal/termtext"
	"dalo/plan"
	"dalo/providers"
	"dalo/store"
)

const pluginReviewDoc = `Plugin review validates a package of a registered source and shows
everything to read before trusting it: each tool's files with sha256 and
size, runtime, argv, env, capabilities, platforms, cwd and inputs; each hook
with its subject, phase, effect, matcher, bindings, timeout, failure policy
and its support on the provider; members and what they resolve to; and
where instructions would apply. For a git source it says which commit it
shows: the one the source is pinned to. It writes nothing and grants
nothing.

Each skill and agent shows, per provider version, what its file makes the
harness do by itself as the provider's table lists it (member_powers):
the front-matter keys and body constructs that run code or widen
permissions, with their values and commands.

--show also prints the text of every tool file and every skill and agent
file, escaped, at most 400 lines or 32 KiB of each; a binary file is named
as such.

Without --provider it shows hook support on every known provider version;
approvals are shown only with --provider.

--json prints the same review as one JSON object: package, valid, pin
(a git source's url, ref, commit and tree), providers, tools (files with path, sha256 and size; runtime,
runtime_version, argv, env, capabilities, platforms, cwd, inputs,
approval), hooks (subject, phase, effect, matcher, bindings, timeout_ms,
failure_policy, error_visibility, requirement, fallback, support per
provider with status, native_event, reason and blocks_activation,
approval), members and requires (resolution, and for members what install
would do on each provider, with the powers the table lists that the
member uses and, with --provider, the approval of a skill or agent),
instructions (the instruction members) and,
with --provider, reapprove: the one approve command that renews every grant
of the package that no longer matches it, when one does.

Exit status: 0 reviewed; 1 invalid package or store error; 2 bad usage.

Examples:
  dalo plugin review company:design-review
  dalo plugin review company:design-review --provider codex
  dalo --json plugin review company:design-review --provider claude
`

func init() {
	register(&command{
		name: "plugin review", usage: "[--json] SOURCE:NAME [--provider P] [--show]", short: "show what trusting a package means",
		doc: pluginReviewDoc,
		flags: func(fs *pflag.FlagSet) {
			fs.String("provider", "", "show hook support and approvals on this provider (NAME or NAME@VERSION)")
			fs.Bool("show", false, "print the text of every tool file and every skill and agent file too")
		},
		run: runPluginReview,
	})
}

func runPluginReview(e *env, fs *pflag.FlagSet) int {
	const cmd = "plugin review"
	if !packageArg(e, cmd, fs) {
		return exitUsage
	}
	provider, _ := fs.GetString("provider")
	s, ok := openStore(e, cmd)
	if !ok {
		return exitFail
	}
	provider, note := tableFor(s, provider)
	sel, err := s.Select(fs.Arg(0), provider)
	if err != nil {
		return fail(e, cmd, err)
	}
	if err := sel.Valid(); err != nil {
		return fail(e, cmd, err)
	}
	var tables []*providers.Table
	if sel.Table != nil {
		tables = []*providers.Table{sel.Table}
	} else {
		ts, err := providers.Load()
		if err != nil {
			return fail(e, cmd, err)
		}
		tables = ts.All()
	}
	r, err := buildReview(s, sel, tables)
	if err != nil {
		return fail(e, cmd, err)
	}
	r.Table = note
	if e.json {
		return writeJSON(e, r)
	}
	r.writeText(e.stdout)
	if show, _ := fs.GetBool("show"); show {
		if err := writeShown(e.stdout, s, sel, tables); err != nil {
			return fail(e, cmd, err)
		}
	}
	if note != "" {
		fmt.Fprintf(e.stdout, "%s\n", note)
	}
	return exitOK
}

// Bounds of what --show prints of one file.
const (
	showLines = 400
	showBytes = 32 << 10
)

// writeShown prints the text of every file a grant of the package would
// bind: each tool's files, and the files of each skill and agent install
// writes on any of tables. Each line is escaped; a file is cut at showLines
// lines or showBytes bytes, saying how much is left; a binary file (a
// NUL byte, or not UTF-8) is named as such.
func writeShown(w io.Writer, s *store.Store, sel *store.Selection, tables []*providers.Table) error {
	m := sel.Pkg.Manifest
	for i := range m.Tools {
		tool := &m.Tools[i]
		for _, f := range store.ToolFiles(tool) {
			showFile(w, "tool "+tool.ID+": "+f, filepath.Join(sel.PkgDir(), filepath.FromSlash(f)))
		}
	}
	var acts []store.MemberAction
	for _, t := range tables {
		as, err := s.MemberActions(sel, t, os.Getenv)
		if err != nil {
			return err
		}
		acts = append(acts, as...)
	}
	seen := map[string]bool{}
	for i := range acts {
		a := &acts[i]
		if a.Src == "" || a.Dest == "" || seen[a.Ref] {
			continue
		}
		seen[a.Ref] = true
		b, err := sel.MemberBinds(a)
		if err != nil {
			return err
		}
		for _, rel := range slices.Sorted(maps.Keys(b.Files)) {
			name, file := filepath.Base(a.Src), a.Src
			if rel != "" {
				name, file = rel, filepath.Join(a.Src, filepath.FromSlash(rel))
			}
			showFile(w, a.Ref+": "+name, file)
		}
	}
	return nil
}

// showFile prints one file for --show.
func showFile(w io.Writer, title, file string) {
	fmt.Fprintf(w, "\n--- %s\n", termtext.Escape(title))
	data, err := os.ReadFile(file)
	switch {
	case err != nil:
		fmt.Fprintf(w, "    (cannot be read: %s)\n", termtext.Escape(err.Error()))
		return
	case bytes.IndexByte(data, 0) >= 0 || !utf8.Valid(data):
		fmt.Fprintf(w, "    (binary file, %d bytes, not shown)\n", len(data))
		return
	}
	shown := data
	if len(shown) > showBytes {
		shown = shown[:showBytes]
	}
	lines := strings.SplitAfter(string(shown), "\n")
	if len(lines) > showLines {
		lines = lines[:showLines]
	}
	n := 0
	for _, l := range lines {
		if l == "" {
			continue
		}
		n += len(l)
		fmt.Fprintf(w, "    | %s\n", termtext.Escape(strings.TrimSuffix(l, "\n")))
	}
	if n < len(data) {
		fmt.Fprintf(w, "    (%d more bytes not shown)\n", len(data)-n)
	}
}

// review is everything plugin review shows. The text and the --json output
// are both printed from it, so the two cannot say different things.
type review struct {
	Package     plan.PackageIdentity `json:"package"`
	Version     string               `json:"version,omitempty"`
	Description string               `json:"description"`
	Source      string               `json:"source"`
	Path        string               `json:"path"`
	// Pin is, for a git source, the commit the review shows and where it
	// comes from.
	Pin       *store.GitPin `json:"pin,omitempty"`
	Valid     bool          `json:"valid"`
	Providers []string      `json:"providers"`
	// Table says, with --provider, which table of the provider the review
	// used and whether it matches the harness found.
	Table        string       `json:"table,omitempty"`
	Approvals    bool         `json:"approvals_shown"`     // only with --provider
	Reapprove    string       `json:"reapprove,omitempty"` // the approve command that renews every grant that changed
	Tools        []reviewTool `json:"tools"`
	Hooks        []reviewHook `json:"hooks"`
	Members      []reviewRef  `json:"members"`
	Requires     []reviewRef  `json:"requires"`
	Instructions []reviewRef  `json:"instructions"` // the members of kind instruction
}

type reviewTool struct {
	ID             string   `json:"id"`
	Availability   string   `json:"availability"`
	Runtime        string   `json:"runtime"`
	RuntimeVersion string   `json:"runtime_version"` // authored metadata, not checked
	Entry          string   `json:"entry"`
	Argv           []string `json:"argv"`
	Cwd            string   `json:"cwd"`
	Env            []string `json:"env"`
	Capabilities   []string `json:"capabilities"` // claims for review, not an OS sandbox
	Platforms      []string `json:"platforms"`
	// NotHere says why the tool cannot run on this system, where its
	// platforms exclude it; "" where it can.
	NotHere  string              `json:"not_here,omitempty"`
	Inputs   []plan.PlannedInput `json:"inputs"`
	Files    []reviewFile        `json:"files"`
	Approval *reviewApproval     `json:"approval,omitempty"`
}

type reviewFile struct {
	Path       string `json:"path"`
	SHA256     string `json:"sha256"`
	Size       int64  `json:"size"`
	Executable bool   `json:"executable"`
}

type reviewHook struct {
	ID              string           `json:"id"`
	Tool            string           `json:"tool"`
	Subject         string           `json:"subject"`
	Phase           string           `json:"phase"`
	Effect          string           `json:"effect"`
	Matcher         *engine.Matcher  `json:"matcher"` // null: the hook has no matcher
	Bindings        []engine.Binding `json:"bindings"`
	TimeoutMS       int              `json:"timeout_ms"`
	FailurePolicy   string           `json:"failure_policy"`
	ErrorVisibility string           `json:"error_visibility"`
	Requirement     string           `json:"requirement"`
	Fallback        string           `json:"fallback,omitempty"`
	// NotHere says why the hook cannot run on this system (its tool's
	// platforms exclude it) and what install does then; "" where it can.
	NotHere  string          `json:"not_here,omitempty"`
	Support  []reviewSupport `json:"support"`
	Approval *reviewApproval `json:"approval,omitempty"`
}

// reviewSupport is what one provider version does with a hook.
type reviewSupport struct {
	Provider         string `json:"provider"`
	Status           string `json:"status"`
	NativeEvent      string `json:"native_event,omitempty"`
	Reason           string `json:"reason,omitempty"`
	BlocksActivation bool   `json:"blocks_activation"`
}

// reviewRef is a member or requirement and what it resolves to.
type reviewRef struct {
	Ref         string         `json:"ref"`
	Kind        string         `json:"kind"`
	Requirement string         `json:"requirement"`
	Resolution  string         `json:"resolution"`
	Target      string         `json:"target,omitempty"`
	Reason      string         `json:"reason,omitempty"`
	Install     []reviewTarget `json:"install,omitempty"` // members only
	// Approval is, with --provider, the ledger's state for the grant of a
	// skill or agent install writes there.
	Approval *reviewApproval `json:"approval,omitempty"`
}

// reviewTarget is what install would do with a member on one provider.
type reviewTarget struct {
	Provider string `json:"provider"`
	Action   string `json:"action"` // installed, subagent, fallback, blocks, omitted, instruction (store.MemberActions)
	Text     string `json:"text"`
	// Powers are what the member's file makes the harness do by itself,
	// as the provider's table lists them (member_powers); Listed says
	// whether the table lists any for the member's kind.
	Powers []reviewPower `json:"powers,omitempty"`
	Listed bool          `json:"powers_listed"`
	// NoneShown is, where the table lists no power for the kind, the
	// evidence of a run that showed it has none (member_powers_none).
	NoneShown []string `json:"powers_none_shown,omitempty"`
}

// reviewPower is one use of a power of the table by a member's file.
type reviewPower struct {
	What string `json:"what"` // the front-matter key, or "inline command"
	File string `json:"file,omitempty"`
	Line int    `json:"line"`
	Text string `json:"text"` // the key's value, or the command
	Does string `json:"does"`
}

// powersOf is what the member of a can make t's harness do by itself.
func powersOf(t *providers.Table, a *store.MemberAction) ([]reviewPower, bool, error) {
	if a.Action != store.MemberSkill && a.Action != store.MemberSubagent && a.Action != store.MemberBlocks || a.Src == "" {
		return nil, false, nil
	}
	listed := false
	for _, p := range t.MemberPowers {
		listed = listed || p.Kind == engine.ParseRef(a.Ref).Kind
	}
	uses, err := store.MemberPowers(t, a)
	if err != nil {
		return nil, listed, err
	}
	var out []reviewPower
	for _, u := range uses {
		out = append(out, reviewPower{What: u.What(), File: u.File, Line: u.Line, Text: u.Text, Does: u.Power.Does})
	}
	return out, listed, nil
}

// noPowers is the evidence that a file of kind makes t's harness do
// nothing by itself, where a run showed it (member_powers_none), or nil.
func noPowers(t *providers.Table, kind string) []string {
	for _, n := range t.MemberPowersNone {
		if n.Kind == kind {
			return n.Evidence
		}
	}
	return nil
}

// writePowers prints what a member can make the harness of table do; none
// is the evidence that it has none, where a run showed it.
func writePowers(w io.Writer, indent, table, kind string, powers []reviewPower, listed bool, none []string) {
	switch {
	case !listed && len(none) > 0:
		fmt.Fprintf(w, "%son %s a %s's file makes the harness do nothing by itself (%s)\n", indent, table, kind, strings.Join(none, "; "))
		return
	case !listed:
		fmt.Fprintf(w, "%sthe %s table lists nothing a %s makes the harness do by itself (not probed yet)\n", indent, table, kind)
		return
	}
	for _, p := range powers {
		where := fmt.Sprintf("line %d", p.Line)
		if p.File != "" {
			where = p.File + " " + where
		}
		fmt.Fprintf(w, "%s%s: %s (%s): %s\n", indent, p.What, termtext.Escape(p.Text), termtext.Escape(where), p.Does)
	}
}

// String is the target as the text review shows it: a member install
// refuses or leaves out says so first.
func (t reviewTarget) String() string {
	switch t.Action {
	case store.MemberBlocks:
		return "blocks installation: " + t.Text
	case store.MemberOmitted:
		return "omitted: " + t.Text
	}
	return t.Text
}

// reviewApproval is the ledger's state for one grant.
type reviewApproval struct {
	State string `json:"state"` // approved, changed, not_approved, unknown
	Grant string `json:"grant"`
	Error string `json:"error,omitempty"`
}

// buildReview reads everything the review shows; it writes nothing.
func buildReview(s *store.Store, sel *store.Selection, tables []*providers.Table) (*review, error) {
	m := sel.Pkg.Manifest
	p := m.Plugin
	r := &review{
		Package:      sel.Identity,
		Version:      p.Version,
		Description:  p.Description,
		Source:       sel.Source.ID,
		Path:         filepath.Join(sel.Source.Path, sel.Pkg.Dir),
		Pin:          sel.Source.Git,
		Valid:        true,
		Approvals:    sel.Table != nil,
		Providers:    []string{},
		Tools:        []reviewTool{},
		Hooks:        []reviewHook{},
		Members:      []reviewRef{},
		Requires:     []reviewRef{},
		Instructions: []reviewRef{},
	}
	r.Package.ID = p.ID
	for _, t := range tables {
		r.Providers = append(r.Providers, t.Key())
	}

	// The grants' states, with --provider: the same answer approve and
	// install act on.
	var toolGrants, hookGrants map[string]store.GrantState
	if sel.Table != nil {
		var err error
		if toolGrants, hookGrants, err = s.GrantStates(sel, nil); err != nil {
			return nil, err
		}
	}
	for i := range m.Tools {
		t := &m.Tools[i]
		b, err := sel.ToolBinds(t)
		if err != nil {
			return nil, err
		}
		rt := reviewTool{
			ID: t.ID, Availability: t.Availability, Runtime: t.Runtime, RuntimeVersion: t.RuntimeVersion,
			Entry: t.Entry, Argv: nonNil(b.Argv), Cwd: t.Cwd, Env: nonNil(slices.Sorted(slices.Values(t.Env))),
			Capabilities: nonNil(slices.Sorted(slices.Values(t.Capabilities))), Platforms: nonNil(slices.Sorted(slices.Values(t.Platforms))),
			Inputs: b.Inputs, Files: []reviewFile{}, NotHere: store.NotHere(t.ID, t.Platforms),
		}
		if rt.Inputs == nil {
			rt.Inputs = []plan.PlannedInput{}
		}
		for _, f := range store.ToolFiles(t) {
			fd := b.Files[f]
			rt.Files = append(rt.Files, reviewFile{Path: f, SHA256: fd.SHA256, Size: fd.Size, Executable: fd.Executable})
		}
		if sel.Table != nil {
			rt.Approval = approvalOf(toolGrants[t.ID])
		}
		r.Tools = append(r.Tools, rt)
	}

	r.Hooks = reviewHooks(sel, tables, hookGrants)

	if sel.Table != nil {
		r.Reapprove = s.ReapproveCommand(sel)
	}

	refs := sel.References()
	acts := make([][]store.MemberAction, len(tables))
	for i, t := range tables {
		var err error
		if acts[i], err = s.MemberActions(sel, t, os.Getenv); err != nil {
			return nil, err
		}
	}
	var memberGrants map[string]store.GrantState
	if sel.Table != nil {
		var err error
		if memberGrants, err = s.MemberStates(sel, acts[0], nil); err != nil {
			return nil, err
		}
	}
	for n, mb := range p.Members {
		ref := engine.ParseRef(mb.Ref)
		rr := refOf(refFor(refs, fmt.Sprintf("plugin.members[%d].ref", n)), mb.Ref, ref.Kind, mb.Requirement)
		for i, t := range tables {
			a := acts[i][n]
			rt := reviewTarget{Provider: t.Key(), Action: a.Action, Text: a.Text}
			var err error
			if rt.Powers, rt.Listed, err = powersOf(t, &a); err != nil {
				return nil, fmt.Errorf("%s: %w", mb.Ref, err)
			}
			rt.NoneShown = noPowers(t, ref.Kind)
			rr.Install = append(rr.Install, rt)
		}
		if st, ok := memberGrants[store.MemberKey(mb.Ref)]; ok {
			rr.Approval = approvalOf(st)
		}
		r.Members = append(r.Members, rr)
		if ref.Kind == "instruction" {
			r.Instructions = append(r.Instructions, rr)
		}
	}
	for n, rq := range p.Requires {
		ref := engine.ParseRef(rq.Ref)
		r.Requires = append(r.Requires, refOf(refFor(refs, fmt.Sprintf("plugin.requires[%d].ref", n)), rq.Ref, ref.Kind, rq.Requirement))
	}
	return r, nil
}

func refOf(r engine.Reference, ref, kind, requirement string) reviewRef {
	return reviewRef{Ref: ref, Kind: kind, Requirement: requirement, Resolution: r.Resolution, Target: r.Target, Reason: r.Reason}
}

// writeText prints r for a person.
func (r *review) writeText(w io.Writer) {
	fmt.Fprintf(w, "package %s", r.Package)
	if r.Package.ID != "" {
		fmt.Fprintf(w, " (id %s", r.Package.ID)
		if r.Version != "" {
			fmt.Fprintf(w, ", version %s", termtext.Escape(r.Version))
		}
		fmt.Fprint(w, ")")
	}
	fmt.Fprintf(w, "\n  %s\n  source %s: %s\n", termtext.Escape(r.Description), r.Source, termtext.Escape(r.Path))
	if r.Pin != nil {
		fmt.Fprintf(w, "  commit %s of %s (%s)\n", r.Pin.Commit, termtext.Escape(r.Pin.URL), termtext.Escape(r.Pin.RefName()))
	}
	fmt.Fprintln(w, "  valid: yes")
	if !r.Approvals {
		fmt.Fprintln(w, "  approvals: name --provider to see them")
	}
	if r.Reapprove != "" {
		fmt.Fprintf(w, "  approvals: some changed since they were approved; approve them again with '%s'\n", r.Reapprove)
	}

	for i := range r.Tools {
		r.Tools[i].writeText(w)
	}
	for i := range r.Hooks {
		r.Hooks[i].writeText(w)
	}

	if len(r.Members) > 0 {
		fmt.Fprintln(w, "\nmembers")
	}
	for _, mb := range r.Members {
		fmt.Fprintf(w, "  %s (%s): %s\n", termtext.Escape(mb.Ref), mb.Requirement, termtext.Escape(mb.resolution()))
		for _, t := range mb.Install {
			fmt.Fprintf(w, "    on %s: %s\n", t.Provider, termtext.Escape(t.String()))
			if t.Action == store.MemberSkill || t.Action == store.MemberSubagent || t.Action == store.MemberBlocks && (t.Listed || len(t.Powers) > 0) {
				writePowers(w, "      ", t.Provider, mb.Kind, t.Powers, t.Listed, t.NoneShown)
			}
		}
		if mb.Approval != nil {
			fmt.Fprintf(w, "    approval: %s\n", termtext.Escape(mb.Approval.String()))
		}
	}
	if len(r.Requires) > 0 {
		fmt.Fprintln(w, "\nrequires")
	}
	for _, rq := range r.Requires {
		fmt.Fprintf(w, "  %s (%s): %s\n", termtext.Escape(rq.Ref), rq.Requirement, termtext.Escape(rq.resolution()))
	}
}

// reviewHooks is what the review shows of each hook of sel's package:
// what it does, its support on each of tables, and its grant's state
// (hookGrants, with --provider).
func reviewHooks(sel *store.Selection, tables []*providers.Table, hookGrants map[string]store.GrantState) []reviewHook {
	m := sel.Pkg.Manifest
	out := []reviewHook{}
	for i := range m.Hooks {
		h := &m.Hooks[i]
		rh := reviewHook{
			ID: h.ID, Tool: h.Tool, Subject: h.Subject, Phase: h.Phase, Effect: h.Effect,
			Matcher: h.Matcher, Bindings: h.Bindings, TimeoutMS: h.TimeoutMS,
			FailurePolicy: h.FailurePolicy, ErrorVisibility: h.ErrorVisibility,
			Requirement: h.Requirement, Fallback: h.Fallback, Support: []reviewSupport{},
		}
		if rh.Bindings == nil {
			rh.Bindings = []engine.Binding{}
		}
		if t := sel.Tool(h.Tool); t != nil {
			if why := store.NotHere(t.ID, t.Platforms); why != "" {
				does := h.Requirement + ", so install leaves it out here"
				if plan.UnmetBlocks[h.Requirement] {
					does = h.Requirement + ", so install refuses the package here"
				}
				rh.NotHere = "cannot run here: " + why + "; " + does
			}
		}
		for _, t := range tables {
			c := capOf(sel, t, h.ID)
			rh.Support = append(rh.Support, reviewSupport{
				Provider: t.Key(), Status: c.Status, NativeEvent: c.NativeEvent,
				Reason: c.Reason, BlocksActivation: c.BlocksActivation,
			})
		}
		if sel.Table != nil {
			rh.Approval = approvalOf(hookGrants[h.ID])
		}
		out = append(out, rh)
	}
	return out
}

// writeText prints the review of tool t for a person.
func (t *reviewTool) writeText(w io.Writer) {
	fmt.Fprintf(w, "\ntool %s (%s)\n", t.ID, t.Availability)
	rt := t.Runtime
	if t.RuntimeVersion != "" {
		rt += " " + termtext.Escape(t.RuntimeVersion) + " (authored metadata, not checked)"
	}
	fmt.Fprintf(w, "  runtime:      %s\n", rt)
	fmt.Fprintf(w, "  entry:        %s\n", termtext.Escape(t.Entry))
	fmt.Fprintf(w, "  argv:         %s\n", termtext.Escape(jsonText(t.Argv)))
	fmt.Fprintf(w, "  cwd:          %s (the staged, read-only tool directory)\n", t.Cwd)
	fmt.Fprintf(w, "  env:          %s\n", listOr(t.Env, "nothing passed through"))
	fmt.Fprintf(w, "  capabilities: %s (claims for review, not an OS sandbox)\n", listOr(t.Capabilities, "none claimed"))
	platforms := listOr(t.Platforms, "not declared")
	if t.NotHere != "" {
		platforms += " (this system is " + store.ThisSystem() + ": it cannot run here)"
	}
	fmt.Fprintf(w, "  platforms:    %s\n", platforms)
	if len(t.Inputs) == 0 {
		fmt.Fprintln(w, "  inputs:       none")
	} else {
		fmt.Fprintln(w, "  inputs:")
		for _, in := range t.Inputs {
			req := plan.RequirementOptional
			if in.Required {
				req = plan.RequirementRequired
			}
			fmt.Fprintf(w, "    %s %s %s\n", in.Name, in.Type, req)
		}
	}
	fmt.Fprintln(w, "  files:")
	for _, f := range t.Files {
		x := ""
		if f.Executable {
			x = " executable"
		}
		fmt.Fprintf(w, "    %s  sha256 %s  %d bytes%s\n", termtext.Escape(f.Path), f.SHA256, f.Size, x)
	}
	if t.Approval != nil {
		fmt.Fprintf(w, "  approval:     %s\n", termtext.Escape(t.Approval.String()))
	}
}

// writeText prints the review of hook h for a person.
func (h *reviewHook) writeText(w io.Writer) {
	req := h.Requirement
	if h.Fallback != "" {
		req += ", fallback " + h.Fallback
	}
	fmt.Fprintf(w, "\nhook %s (%s)\n", h.ID, req)
	fmt.Fprintf(w, "  tool:            %s\n", h.Tool)
	fmt.Fprintf(w, "  subject/phase:   %s/%s\n", h.Subject, h.Phase)
	fmt.Fprintf(w, "  effect:          %s\n", h.Effect)
	matcher := "none"
	if h.Matcher != nil {
		matcher = termtext.Escape(listOr(h.Matcher.ToolNames, "every covered call"))
	}
	fmt.Fprintf(w, "  matcher:         %s\n", matcher)
	if len(h.Bindings) == 0 {
		fmt.Fprintln(w, "  bindings:        none")
	} else {
		fmt.Fprintln(w, "  bindings:")
		for _, bd := range h.Bindings {
			fmt.Fprintf(w, "    %s <- %s\n", termtext.Escape(bd.Input), termtext.Escape(bd.Field))
		}
	}
	fmt.Fprintf(w, "  timeout:         %d ms\n", h.TimeoutMS)
	fmt.Fprintf(w, "  failure policy:  %s (errors visible to %s)\n", h.FailurePolicy, strings.ReplaceAll(h.ErrorVisibility, "_", " "))
	if h.NotHere != "" {
		fmt.Fprintf(w, "  this system:     %s\n", termtext.Escape(h.NotHere))
	}
	for _, c := range h.Support {
		line := c.Status
		if c.NativeEvent != "" {
			line += ", native event " + c.NativeEvent
		}
		if c.Reason != "" {
			line += ": " + c.Reason
		}
		if c.BlocksActivation {
			line += " (blocks activation)"
		}
		fmt.Fprintf(w, "  on %s: %s\n", c.Provider, termtext.Escape(line))
	}
	if h.Approval != nil {
		fmt.Fprintf(w, "  approval:        %s\n", termtext.Escape(h.Approval.String()))
	}
}

func capOf(sel *store.Selection, t *providers.Table, hook string) engine.HookCapability {
	if c, ok := sel.Loaded.Report.Capabilities.Lookup(sel.Pkg.Name, hook, t.Key()); ok {
		return c
	}
	return engine.HookCapability{Status: "unknown"}
}

func refFor(refs []engine.Reference, field string) engine.Reference {
	for _, r := range refs {
		if r.Field == field {
			return r
		}
	}
	return engine.Reference{Resolution: engine.Unresolved}
}

func (r reviewRef) resolution() string {
	if r.Resolution == engine.Resolved {
		return "resolves to " + r.Target
	}
	s := r.Resolution
	if r.Reason != "" {
		s += ": " + r.Reason
	}
	return s
}

// approvalOf is a grant's state as review shows it.
func approvalOf(st store.GrantState) *reviewApproval {
	a := &reviewApproval{State: st.State, Grant: st.ID}
	if st.Err != nil {
		a.Error = st.Err.Error()
	}
	return a
}

// String is the approval as the text review shows it.
func (a *reviewApproval) String() string {
	switch a.State {
	case store.GrantNotApproved:
		return "not approved"
	case store.GrantUnknown:
		return "unknown: " + a.Error
	case store.GrantChanged:
		return "approved before, but it changed since: approve it again (grant " + a.Grant + ")"
	}
	return "approved (grant " + a.Grant + ")"
}

func listOr(xs []string, none string) string {
	if len(xs) == 0 {
		return none
	}
	return strings.Join(slices.Sorted(slices.Values(xs)), ", ")
}

// nonNil is xs, or an empty list for nil, so that JSON shows [].
func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}
