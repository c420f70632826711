// Package dispatchtest installs hooks into a scratch dalo store the way
// install does (staged tool bytes, grant files, the dispatch plan), so that
// tests and benchmarks of dispatch can run real handlers without the
// review and install machinery.
package dispatchtest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"dalo/plan"
	"dalo/providers"
	"dalo/store"
)

// A Hook is one hook to install, with its tool's entry script.
type Hook struct {
	Package string // default "test:pkg"
	ID      string
	Subject string
	Phase   string
	Effect  string
	// Policy and Visibility default to report and user; TimeoutMS to 5000.
	Policy     string
	Visibility string
	TimeoutMS  int
	ToolNames  []string

	Runtime  string // default executable
	Entry    string // default "handler" ("handler.mjs", "handler.py" for node, python)
	Script   string // the entry's content
	Argv     []string
	Env      []string
	Inputs   []plan.PlannedInput
	Bindings []plan.PlannedBinding
}

// Install stages every hook's tool under home/staged, writes a grant file
// for its tool and for itself under home/grants, and writes the plan of
// provider (its dispatch index under home/plans, replacing any there),
// with the native protocol of each event from the newest provider table
// of that name, as install writes it.
func Install(home, provider string, events map[string][]Hook) (*plan.Plan, error) {
	ts, err := providers.Load()
	if err != nil {
		return nil, err
	}
	t, ok := ts.Newest(provider)
	if !ok {
		return nil, fmt.Errorf("no provider table %s", provider)
	}
	src, err := os.MkdirTemp("", "dispatchtest-src-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(src)
	// Installed as install records it, one package per Hook.Package; the
	// plan is then what install would write for it.
	in := &store.Installed{Provider: provider, Version: t.Version}
	pkgs := map[string]int{}
	for event, hooks := range events {
		for _, h := range hooks {
			ph, err := planned(src, h)
			if err != nil {
				return nil, err
			}
			i, ok := pkgs[ph.Package]
			if !ok {
				i = len(in.Packages)
				pkgs[ph.Package] = i
				in.Packages = append(in.Packages, store.InstalledPackage{Package: ph.Package})
			}
			in.Packages[i].Hooks = append(in.Packages[i].Hooks, store.InstalledHook{Event: event, Hook: *ph})
		}
	}
	p, err := store.PlanOf(t, in)
	if err != nil {
		return nil, err
	}
	if err := Seal(home, p); err != nil {
		return nil, err
	}
	// The lock every dispatch holds, which a real store's writer creates.
	if err := writeFile(filepath.Join(home, plan.DispatchLock), nil, 0o644); err != nil {
		return nil, err
	}
	return p, WritePlan(home, p)
}

// WritePlan makes p the current dispatch index of its provider under
// home/plans.
func WritePlan(home string, p *plan.Plan) error {
	dir := filepath.Join(home, "plans")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return plan.WriteIndex(dir, p, nil)
}

// planned writes h's entry into a source directory of its own under src
// and returns its hook as the plan holds it, its tool rooted there.
func planned(src string, h Hook) (*plan.PlannedHook, error) {
	if h.Package == "" {
		h.Package = "test:pkg"
	}
	if h.Policy == "" {
		h.Policy = plan.PolicyReport
	}
	if h.Visibility == "" {
		h.Visibility = plan.VisibilityUser
	}
	if h.TimeoutMS == 0 {
		h.TimeoutMS = 5000
	}
	if h.Runtime == "" {
		h.Runtime = plan.RuntimeExecutable
	}
	if h.Entry == "" {
		h.Entry = map[string]string{plan.RuntimeExecutable: "handler", plan.RuntimeNode: "handler.mjs", plan.RuntimePython: "handler.py"}[h.Runtime]
	}
	id := fmt.Sprintf("%x", sha256.Sum256([]byte(h.Package+"\x00"+h.ID)))[:16]
	root := filepath.Join(src, id)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(root, h.Entry), []byte(h.Script), 0o755); err != nil {
		return nil, err
	}
	return &plan.PlannedHook{
		Package: h.Package, Hook: h.ID, Subject: h.Subject, Phase: h.Phase, Effect: h.Effect,
		Requirement: plan.RequirementRequired, ToolNames: h.ToolNames, TimeoutMS: h.TimeoutMS,
		FailurePolicy: h.Policy, ErrorVisibility: h.Visibility, Bindings: h.Bindings,
		Tool: plan.PlannedTool{
			ID: h.ID, Root: root, Runtime: h.Runtime, Entry: h.Entry, Argv: h.Argv,
			Env: h.Env, Inputs: h.Inputs, Files: map[string]string{h.Entry: ""},
		},
	}, nil
}

// Seal makes every hook of p trusted as approve and install make it: the
// files its tool lists (Tool.Files, paths relative to Tool.Root, a source
// directory; their digests are computed here) are staged under
// home/staged/<tree digest>, a tool grant and a hook grant binding exactly
// what the hook's plan entry asks for are written under home/grants, and
// the hook's tool root and grant references are set to them. What the
// plan names stays as it is, so that a test can edit the plan or the
// grants afterwards, as an attacker would.
//
// Tests dispatch in parallel, in one process: a handler forked while a
// staged file is open for writing here holds that file open until its own
// exec, and an exec of the staged file meanwhile fails with "text file
// busy" (ETXTBSY). Every fork of the process holds syscall.ForkLock for
// writing; Seal stages with it held for reading, so that each file it
// writes is closed before the next fork.
func Seal(home string, p *plan.Plan) error {
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	s, err := store.Open(home)
	if err != nil {
		return err
	}
	now := time.Now().UTC().Format(time.RFC3339)
	for event, hooks := range p.Events {
		for i := range hooks {
			h := &hooks[i]
			t := &h.Tool
			src, name, ok := strings.Cut(h.Package, ":")
			if !ok {
				return fmt.Errorf("hook %s: package %q is not SOURCE:NAME", h.Hook, h.Package)
			}
			pkg := plan.PackageIdentity{Source: src, Name: name}
			files := map[string]plan.FileDigest{}
			for rel := range t.Files {
				d, err := digest(filepath.Join(t.Root, filepath.FromSlash(rel)))
				if err != nil {
					return err
				}
				files[rel] = d
				t.Files[rel] = d.SHA256
			}
			tb := &plan.ToolBinds{
				Package: pkg, Tool: t.ID, Runtime: t.Runtime, Entry: t.Entry,
				Argv: nonNil(t.Argv), Env: nonNil(t.Env), Inputs: t.Inputs,
				Capabilities: []string{}, Platforms: []string{}, Files: files,
			}
			if tb.Inputs == nil {
				tb.Inputs = []plan.PlannedInput{}
			}
			tg, err := plan.NewGrant("tool", p.Provider, pkg, t.ID, tb, now)
			if err != nil {
				return err
			}
			hb := &plan.HookBinds{
				Package: pkg, Provider: p.Provider, Hook: h.Hook, Tool: t.ID, ToolDigest: tg.Digest,
				Subject: h.Subject, Phase: h.Phase, NativeEvent: event, Effect: h.Effect,
				Requirement: h.Requirement, Matcher: h.ToolNames, Bindings: h.Bindings,
				TimeoutMS: h.TimeoutMS, FailurePolicy: h.FailurePolicy, ErrorVisibility: h.ErrorVisibility,
			}
			hg, err := plan.NewGrant("hook", p.Provider, pkg, h.Hook, hb, now)
			if err != nil {
				return err
			}
			root, err := s.Stage(t.Root, files)
			if err != nil {
				return err
			}
			t.Root = root
			for _, g := range []*plan.Grant{tg, hg} {
				if err := WriteGrant(home, g); err != nil {
					return err
				}
			}
			h.ToolGrant = plan.GrantRef{ID: tg.ID, Digest: tg.Digest}
			h.HookGrant = plan.GrantRef{ID: hg.ID, Digest: hg.Digest}
		}
	}
	return nil
}

// digest is what approval records of the file name.
func digest(name string) (plan.FileDigest, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return plan.FileDigest{}, err
	}
	fi, err := os.Stat(name)
	if err != nil {
		return plan.FileDigest{}, err
	}
	sum := sha256.Sum256(data)
	return plan.FileDigest{SHA256: hex.EncodeToString(sum[:]), Size: int64(len(data)), Executable: fi.Mode().Perm()&0o100 != 0}, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// WriteGrant writes g to the ledger under home, as approval does (without
// the fsync a scratch store does not need).
func WriteGrant(home string, g *plan.Grant) error {
	if err := os.MkdirAll(filepath.Join(home, "grants"), 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(g, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(filepath.Join(home, "grants", g.ID+".json"), data, 0o644)
}

// writeFile replaces name by data as the store does, so that a dispatch
// running meanwhile (a benchmark, a parallel test) never reads half a file.
func writeFile(name string, data []byte, perm os.FileMode) error {
	return plan.WriteFile(name, "."+filepath.Base(name), data, perm, nil)
}

// Many installs n packages of Claude hooks, each with one hook on
// SessionStart, UserPromptSubmit, PreToolUse, PostToolUse and Stop, whose
// handler allows (or, off PreToolUse, is never reached in a benchmark).
// Only package 0's PreToolUse hook matches Bash; the others match Edit, so
// a Bash PreToolUse runs exactly one handler however many are installed:
// what benchmarks of dispatch's cost as packages grow need.
func Many(home string, n int) (*plan.Plan, error) {
	const handler = "#!/bin/sh\nprintf '{\"kind\":\"allow\"}'\n"
	rows := []struct{ event, subject, phase, effect string }{
		{"SessionStart", plan.SubjectSession, plan.PhaseStart, plan.EffectAddContext},
		{"UserPromptSubmit", plan.SubjectPrompt, plan.PhaseBefore, plan.EffectAddContext},
		{"PreToolUse", plan.SubjectToolCall, plan.PhaseBefore, plan.EffectGate},
		{"PostToolUse", plan.SubjectToolCall, plan.PhaseAfter, plan.EffectAddContext},
		{"Stop", plan.SubjectWorkflow, plan.PhaseStop, plan.EffectContinueWorkflow},
	}
	events := map[string][]Hook{}
	for i := 0; i < n; i++ {
		for _, r := range rows {
			h := Hook{
				Package: fmt.Sprintf("bench:pkg-%04d", i), ID: r.event, Subject: r.subject, Phase: r.phase, Effect: r.effect,
				Script: handler, Env: []string{"HOME"},
			}
			if plan.Matchers[r.subject][r.phase] {
				h.ToolNames = []string{"Edit"}
				if i == 0 {
					h.ToolNames = []string{"Bash"}
				}
			}
			events[r.event] = append(events[r.event], h)
		}
	}
	return Install(home, "claude", events)
}
