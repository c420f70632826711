package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"dalo/engine"
	"dalo/providers"
	"dalo/store"
)

const pluginReviewDoc = `Plugin review validates a package of a registered source and shows
everything to read before trusting it: each tool's files with sha256 and
size, runtime, argv, env, capabilities, platforms, cwd and inputs; each hook
with its subject, phase, effect, matcher, bindings, timeout, failure policy
and its support on the provider; members and what they resolve to; and
where instructions would apply. It writes nothing and grants nothing.

Without --provider it shows hook support on every known provider version.

Exit status: 0 reviewed; 1 invalid package or store error; 2 bad usage.

Examples:
  dalo plugin review company:design-review
  dalo plugin review company:design-review --provider codex
`

func init() {
	register(&command{
		name: "plugin review", usage: "SOURCE:NAME [--provider P]", short: "show what trusting a package means",
		doc: pluginReviewDoc,
		flags: func(fs *pflag.FlagSet) {
			fs.String("provider", "", "show hook support and approvals on this provider (NAME or NAME@VERSION)")
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
	if err := printReview(e.stdout, s, sel, tables); err != nil {
		return fail(e, cmd, err)
	}
	return exitOK
}

func printReview(w io.Writer, s *store.Store, sel *store.Selection, tables []*providers.Table) error {
	m := sel.Pkg.Manifest
	p := m.Plugin
	fmt.Fprintf(w, "package %s", sel.Identity)
	if p.ID != "" {
		fmt.Fprintf(w, " (id %s", p.ID)
		if p.Version != "" {
			fmt.Fprintf(w, ", version %s", p.Version)
		}
		fmt.Fprint(w, ")")
	}
	fmt.Fprintf(w, "\n  %s\n  source %s: %s\n  valid: yes\n", p.Description, sel.Source.ID, filepath.Join(sel.Source.Path, sel.Pkg.Dir))
	if sel.Table == nil {
		fmt.Fprintln(w, "  approvals: name --provider to see them")
	}

	toolDigests := map[string]string{}
	for i := range m.Tools {
		t := &m.Tools[i]
		b, err := sel.ToolBinds(t)
		if err != nil {
			return err
		}
		d, _ := store.Digest(b)
		toolDigests[t.ID] = d
		fmt.Fprintf(w, "\ntool %s (%s)\n", t.ID, t.Availability)
		rt := t.Runtime
		if t.RuntimeVersion != "" {
			rt += " " + t.RuntimeVersion + " (authored metadata, not checked)"
		}
		fmt.Fprintf(w, "  runtime:      %s\n", rt)
		fmt.Fprintf(w, "  entry:        %s\n", t.Entry)
		fmt.Fprintf(w, "  argv:         %s\n", jsonText(b.Argv))
		fmt.Fprintf(w, "  cwd:          %s (the staged, read-only tool directory)\n", t.Cwd)
		fmt.Fprintf(w, "  env:          %s\n", listOr(t.Env, "nothing passed through"))
		fmt.Fprintf(w, "  capabilities: %s (claims for review, not an OS sandbox)\n", listOr(t.Capabilities, "none claimed"))
		fmt.Fprintf(w, "  platforms:    %s\n", listOr(t.Platforms, "not declared"))
		if len(b.Inputs) == 0 {
			fmt.Fprintln(w, "  inputs:       none")
		} else {
			fmt.Fprintln(w, "  inputs:")
			for _, in := range b.Inputs {
				req := "optional"
				if in.Required {
					req = "required"
				}
				fmt.Fprintf(w, "    %s %s %s\n", in.Name, in.Type, req)
			}
		}
		fmt.Fprintln(w, "  files:")
		for _, f := range store.ToolFiles(t) {
			fd := b.Files[f]
			x := ""
			if fd.Executable {
				x = " executable"
			}
			fmt.Fprintf(w, "    %s  sha256 %s  %d bytes%s\n", f, fd.SHA256, fd.Size, x)
		}
		if sel.Table != nil {
			fmt.Fprintf(w, "  approval:     %s\n", approvalState(s, store.GrantID(sel.Table.Name, sel.Identity, "tool", t.ID), d))
		}
	}

	for i := range m.Hooks {
		h := &m.Hooks[i]
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
			matcher = listOr(h.Matcher.ToolNames, "every covered call")
		}
		fmt.Fprintf(w, "  matcher:         %s\n", matcher)
		if len(h.Bindings) == 0 {
			fmt.Fprintln(w, "  bindings:        none")
		} else {
			fmt.Fprintln(w, "  bindings:")
			for _, bd := range h.Bindings {
				fmt.Fprintf(w, "    %s <- %s\n", bd.Input, bd.Field)
			}
		}
		fmt.Fprintf(w, "  timeout:         %d ms\n", h.TimeoutMS)
		fmt.Fprintf(w, "  failure policy:  %s (errors visible to %s)\n", h.FailurePolicy, strings.ReplaceAll(h.ErrorVisibility, "_", " "))
		for _, t := range tables {
			c := capOf(sel, t, h.ID)
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
			fmt.Fprintf(w, "  on %s: %s\n", t.Key(), line)
		}
		if sel.Table != nil {
			hb, err := sel.HookBinds(h, toolDigests[h.Tool])
			if err != nil {
				return err
			}
			d, _ := store.Digest(hb)
			fmt.Fprintf(w, "  approval:        %s\n", approvalState(s, store.GrantID(sel.Table.Name, sel.Identity, "hook", h.ID), d))
		}
	}

	refs := sel.References()
	if len(p.Members) > 0 {
		fmt.Fprintln(w, "\nmembers")
	}
	for n, mb := range p.Members {
		r := refFor(refs, fmt.Sprintf("plugin.members[%d].ref", n))
		fmt.Fprintf(w, "  %s (%s): %s\n", mb.Ref, mb.Requirement, resolution(r))
		ref := engine.ParseRef(mb.Ref)
		for _, t := range tables {
			fmt.Fprintf(w, "    on %s: %s\n", t.Key(), memberTarget(t, ref, mb))
		}
	}
	if len(p.Requires) > 0 {
		fmt.Fprintln(w, "\nrequires")
	}
	for n, rq := range p.Requires {
		r := refFor(refs, fmt.Sprintf("plugin.requires[%d].ref", n))
		fmt.Fprintf(w, "  %s (%s): %s\n", rq.Ref, rq.Requirement, resolution(r))
	}
	return nil
}

func capOf(sel *store.Selection, t *providers.Table, hook string) engine.HookCapability {
	for _, c := range sel.Loaded.Report.Capabilities[t.Key()] {
		if c.Package == sel.Pkg.Name && c.Hook == hook {
			return c
		}
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

func resolution(r engine.Reference) string {
	if r.Resolution == engine.Resolved {
		return "resolves to " + r.Target
	}
	s := r.Resolution
	if r.Reason != "" {
		s += ": " + r.Reason
	}
	return s
}

// memberTarget says where install would put a member on t.
func memberTarget(t *providers.Table, ref engine.Ref, mb engine.Member) string {
	switch ref.Kind {
	case "skill":
		if len(t.Config.Skills) > 0 {
			return "installed to " + strings.Replace(t.Display(t.Config.Skills[0]), "<name>", ref.Selector, 1)
		}
	case "agent":
		if t.Config.Agents.Status == providers.Supported && t.Config.Agents.Location != nil {
			return "installed as a subagent to " + strings.Replace(t.Display(*t.Config.Agents.Location), "<name>", ref.Selector, 1)
		}
		if mb.Fallback != nil {
			return "cannot be installed as an agent; its inline fallback " + mb.Fallback.Skill + " is installed instead, without the agent's isolation or permissions"
		}
		if mb.Requirement == "required" {
			return "cannot be installed as an agent and has no fallback: blocks installation"
		}
		return "cannot be installed as an agent and has no fallback: omitted"
	case "instruction":
		return "not written by install; 'dalo instruction' can enable it in " + t.Display(t.Config.Instructions) + " or a project file you choose"
	}
	return "not installed"
}

// approvalState says whether the ledger holds grant id with digest d.
func approvalState(s *store.Store, id, d string) string {
	g, err := s.Grant(id)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "not approved"
	case err != nil:
		return "unknown: " + err.Error()
	case g.Digest != d:
		return "approved before, but it changed since: approve it again (grant " + id + ")"
	}
	return "approved (grant " + id + ")"
}

func listOr(xs []string, none string) string {
	if len(xs) == 0 {
		return none
	}
	ys := append([]string(nil), xs...)
	sort.Strings(ys)
	return strings.Join(ys, ", ")
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
