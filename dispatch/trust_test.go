package dispatch_test

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"dalo/dispatch/dispatchtest"
	"dalo/plan"
)

// writable makes every directory under home writable again, so that the
// test's cleanup can remove the read-only staged trees.
func writable(home string) {
	filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o755)
		}
		return nil
	})
}

// regrant replaces grant id in the ledger by one binding what edit makes
// of what it binds, with its digest, as approving again does, and returns
// the new grant's digest.
func regrant(home, id string, edit func(b any)) string {
	name := filepath.Join(home, "grants", id+".json")
	var g plan.Grant
	data, err := os.ReadFile(name)
	if err == nil {
		err = json.Unmarshal(data, &g)
	}
	if err != nil {
		panic(err)
	}
	b, err := g.Decode()
	if err != nil {
		panic(err)
	}
	edit(b)
	pkg, _, _ := strings.Cut(g.Package, ":")
	ng, err := plan.NewGrant(g.Kind, g.Provider, plan.PackageIdentity{Source: pkg, Name: strings.TrimPrefix(g.Package, pkg+":")}, g.Item, b, g.ApprovedAt)
	if err != nil {
		panic(err)
	}
	if err := dispatchtest.WriteGrant(home, ng); err != nil {
		panic(err)
	}
	return ng.Digest
}

// editIndex applies edit to every hook of the current index generation of
// provider, in place, as someone editing the files under
// $DALO_HOME/plans/<provider>.d/g-*/ by hand would.
func editIndex(home, provider string, edit func(h *plan.PlannedHook)) {
	dir := filepath.Join(home, "plans", provider+".d")
	gen, err := os.Readlink(filepath.Join(dir, plan.Pointer))
	if err != nil {
		panic(err)
	}
	err = filepath.WalkDir(filepath.Join(dir, gen), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var file map[string]json.RawMessage
		if err := json.Unmarshal(data, &file); err != nil {
			return err
		}
		var hooks []plan.PlannedHook
		if err := json.Unmarshal(file["hooks"], &hooks); err != nil {
			return err
		}
		for i := range hooks {
			edit(&hooks[i])
		}
		if file["hooks"], err = json.Marshal(hooks); err != nil {
			return err
		}
		if data, err = json.Marshal(file); err != nil {
			return err
		}
		return os.WriteFile(p, data, 0o644)
	})
	if err != nil {
		panic(err)
	}
}

// editIndexJSON edits every file of the current index generation of
// provider under home as JSON, for what no field of the plan types holds.
func editIndexJSON(home, provider string, edit func(file map[string]any)) {
	dir := filepath.Join(home, "plans", provider+".d")
	gen, err := os.Readlink(filepath.Join(dir, plan.Pointer))
	if err != nil {
		panic(err)
	}
	err = filepath.WalkDir(filepath.Join(dir, gen), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var file map[string]any
		if err := json.Unmarshal(data, &file); err != nil {
			return err
		}
		edit(file)
		if data, err = json.Marshal(file); err != nil {
			return err
		}
		return os.WriteFile(p, data, 0o644)
	})
	if err != nil {
		panic(err)
	}
}

// plant writes a file into the staged tree of tool, read-only as it is.
func plant(tool plan.PlannedTool, rel, content string) {
	name := filepath.Join(tool.Root, filepath.FromSlash(rel))
	os.Chmod(tool.Root, 0o755)
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		panic(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		panic(err)
	}
	os.Chmod(tool.Root, 0o555)
}

// TestTrustTampering reproduces, one case each, every way the audit found
// to make dispatch run what no grant approved by editing the plan index,
// the ledger or the staged tree by hand. Each must fail the fail_closed
// gate as its grant binds it (a deny, with the diagnostic) without running
// the handler, whatever policy the edited plan claims.
func TestTrustTampering(t *testing.T) {
	for _, c := range []struct {
		name   string
		change func(home string, p *plan.Plan)
		diag   string
	}{
		{"argv", func(home string, p *plan.Plan) {
			editIndex(home, "claude", func(h *plan.PlannedHook) { h.Tool.Argv = []string{"--unreviewed"} })
		}, "the plan's argv differs from what tool grant claude+test+pkg+tool+gate binds; run 'dalo plugin install' again"},
		{"env", func(home string, p *plan.Plan) {
			editIndex(home, "claude", func(h *plan.PlannedHook) { h.Tool.Env = append(h.Tool.Env, "AWS_SECRET_ACCESS_KEY") })
		}, "the plan's env differs from what tool grant"},
		{"file-dropped-then-edited", func(home string, p *plan.Plan) {
			editIndex(home, "claude", func(h *plan.PlannedHook) { h.Tool.Files = map[string]string{} })
			tool := p.Events["PreToolUse"][0].Tool
			os.Chmod(filepath.Join(tool.Root, tool.Entry), 0o755)
			os.WriteFile(filepath.Join(tool.Root, tool.Entry), []byte(result(`{"kind":"allow"}`)+"# edited\n"), 0o755)
		}, "the plan's files differs from what tool grant"},
		{"root-outside-the-store", func(home string, p *plan.Plan) {
			elsewhere := filepath.Join(filepath.Dir(home), filepath.Base(home)+"-elsewhere")
			tool := p.Events["PreToolUse"][0].Tool
			os.MkdirAll(elsewhere, 0o755)
			data, _ := os.ReadFile(filepath.Join(tool.Root, tool.Entry))
			os.WriteFile(filepath.Join(elsewhere, tool.Entry), data, 0o555)
			editIndex(home, "claude", func(h *plan.PlannedHook) { h.Tool.Root = elsewhere })
		}, "the plan's tool root"},
		{"matcher", func(home string, p *plan.Plan) {
			editIndex(home, "claude", func(h *plan.PlannedHook) { h.ToolNames = []string{"NoSuchTool"} })
		}, "the plan's matcher (tool_names) differs from what hook grant claude+test+pkg+hook+gate binds"},
		{"failure-policy", func(home string, p *plan.Plan) {
			editIndex(home, "claude", func(h *plan.PlannedHook) { h.FailurePolicy = "fail_open" })
		}, "the plan's failure_policy differs"},
		{"timeout", func(home string, p *plan.Plan) {
			editIndex(home, "claude", func(h *plan.PlannedHook) { h.TimeoutMS = 1 << 30 })
		}, "the plan's timeout_ms differs"},
		{"hook-grant-repointed", func(home string, p *plan.Plan) {
			editIndex(home, "claude", func(h *plan.PlannedHook) { h.HookGrant = h.ToolGrant })
		}, `the plan's hook_grant names "claude+test+pkg+tool+gate", not claude+test+pkg+hook+gate`},
		{"grant-binds-edited", func(home string, p *plan.Plan) {
			name := filepath.Join(home, "grants", p.Events["PreToolUse"][0].ToolGrant.ID+".json")
			data, _ := os.ReadFile(name)
			os.WriteFile(name, []byte(strings.Replace(string(data), `"argv": []`, `"argv": ["--unreviewed"]`, 1)), 0o644)
			editIndex(home, "claude", func(h *plan.PlannedHook) { h.Tool.Argv = []string{"--unreviewed"} })
		}, "was edited since it was approved: digest"},
		{"hook-grant-binds-edited", func(home string, p *plan.Plan) {
			name := filepath.Join(home, "grants", p.Events["PreToolUse"][0].HookGrant.ID+".json")
			data, _ := os.ReadFile(name)
			os.WriteFile(name, []byte(strings.Replace(string(data), `"timeout_ms": 5000`, `"timeout_ms": 1073741824`, 1)), 0o644)
			editIndex(home, "claude", func(h *plan.PlannedHook) { h.TimeoutMS = 1 << 30 })
		}, "was edited since it was approved"},
		// The same size, one byte changed: the digest, not the size,
		// tells the file approved from another.
		{"same-size-edit", func(home string, p *plan.Plan) {
			tool := p.Events["PreToolUse"][0].Tool
			name := filepath.Join(tool.Root, tool.Entry)
			fi, err := os.Stat(name)
			if err != nil {
				panic(err)
			}
			data, _ := os.ReadFile(name)
			data[len(data)-1] = ' '
			os.Chmod(name, 0o755)
			if err := os.WriteFile(name, data, 0o755); err != nil {
				panic(err)
			}
			os.Chmod(name, fi.Mode().Perm())
		}, "/handler has sha256"},
		// The tool approved again (another argv), the plan edited to
		// name it, the hook's grant still binding the tool as it was:
		// the hook was approved with another tool than it would run.
		{"tool-regranted-under-hook", func(home string, p *plan.Plan) {
			digest := regrant(home, p.Events["PreToolUse"][0].ToolGrant.ID, func(b any) {
				b.(*plan.ToolBinds).Argv = []string{"--approved-again"}
			})
			editIndex(home, "claude", func(h *plan.PlannedHook) {
				h.Tool.Argv, h.ToolGrant.Digest = []string{"--approved-again"}, digest
			})
		}, "hook grant claude+test+pkg+hook+gate binds tool gate with digest"},
		{"extra-module", func(home string, p *plan.Plan) {
			plant(p.Events["PreToolUse"][0].Tool, "json.py", "import os\n")
		}, "holds json.py, which is not one of its approved files"},
		{"pycache", func(home string, p *plan.Plan) {
			plant(p.Events["PreToolUse"][0].Tool, "__pycache__/handler.cpython-312.pyc", "\x00")
		}, "holds the directory __pycache__, in which no approved file is"},
		{"extra-symlink", func(home string, p *plan.Plan) {
			tool := p.Events["PreToolUse"][0].Tool
			os.Chmod(tool.Root, 0o755)
			os.Symlink("/etc/passwd", filepath.Join(tool.Root, "lib"))
			os.Chmod(tool.Root, 0o555)
		}, "holds lib, a symlink, not one of its approved files"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			marker := filepath.Join(t.TempDir(), "ran")
			h := dispatchtest.Hook{
				ID: "gate", Subject: "tool_call", Phase: "before", Effect: "gate", Policy: "fail_closed",
				ToolNames: []string{"Bash"},
				Script:    "#!/bin/sh\n: > " + marker + "\nprintf '{\"kind\":\"allow\"}'\n",
			}
			out := dispatchEvent(t, "claude", "PreToolUse", mustJSON(recorded(t, "claude", "PreToolUse")), []dispatchtest.Hook{h}, c.change)
			n := decode(t, out)
			if n.HookSpecificOutput.PermissionDecision != "deny" {
				t.Errorf("permissionDecision %q, want deny (fail_closed as granted)\n%s", n.HookSpecificOutput.PermissionDecision, out.Stdout)
			}
			if !strings.Contains(n.SystemMessage, "not run: ") || !strings.Contains(n.SystemMessage, c.diag) {
				t.Errorf("systemMessage %q lacks %q", n.SystemMessage, c.diag)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("the handler ran")
			}
		})
	}
}

// TestPlanNamesNoRules: the rules dispatch applies are built into it,
// and an index that names them (as plans of schema 5 did: the limits,
// result shapes, fail_closed actions, result kinds and interpreters) is
// read as if it did not: a plan cannot lower a limit, admit another kind,
// turn fail_closed off or run another interpreter.
func TestPlanNamesNoRules(t *testing.T) {
	names := func(home string, p *plan.Plan) {
		editIndexJSON(home, "claude", func(file map[string]any) {
			file["limits"] = map[string]any{"response_bytes": 1, "result_text_bytes": 1, "rewritten_input_bytes": 1}
			file["rules"] = map[string]any{"results": map[string]any{"rewrite_input": map[string]any{}}, "fail_closed": map[string]any{}}
			for _, h := range file["hooks"].([]any) {
				h := h.(map[string]any)
				h["result_kinds"] = []string{"abstain", "allow", "deny", "rewrite_input"}
				tool := h["tool"].(map[string]any)
				tool["interpreter"], tool["interpreter_args"] = "sh", []string{"-c", `printf '{"kind":"allow"}'`}
			}
		})
	}
	for _, c := range []struct{ name, result, reason string }{
		// The handler's own answer, within the rules' limits, run as the
		// rules' runtime runs it.
		{"deny", `{"kind":"deny","reason":"Ran as approved."}`, "Ran as approved."},
		// A kind the effect does not admit is malformed, and the hook
		// fails closed.
		{"rewrite", `{"kind":"rewrite_input","input":{"command":"rm -rf /"}}`, "does not match the declared effect"},
	} {
		h := dispatchtest.Hook{ID: "gate", Subject: "tool_call", Phase: "before", Effect: "gate", Policy: "fail_closed",
			Visibility: "model_and_user", Script: "#!/bin/sh\nprintf '%s' '" + c.result + "'\n"}
		out := dispatchEvent(t, "claude", "PreToolUse", mustJSON(recorded(t, "claude", "PreToolUse")), []dispatchtest.Hook{h}, names)
		n := decode(t, out)
		hso := n.HookSpecificOutput
		if hso.PermissionDecision != "deny" || !strings.Contains(hso.PermissionDecisionReason, c.reason) || hso.UpdatedInput != nil {
			t.Errorf("%s: %s, want a deny saying %q", c.name, out.Stdout, c.reason)
		}
	}
}

// TestTrustIntact is the control of TestTrustTampering: the same gate,
// untouched, runs and allows, and runs again after install's grants were
// read back whole.
func TestTrustIntact(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	h := dispatchtest.Hook{
		ID: "gate", Subject: "tool_call", Phase: "before", Effect: "gate", Policy: "fail_closed",
		ToolNames: []string{"Bash"}, Argv: []string{"x"}, Env: []string{"PATH"},
		Script: "#!/bin/sh\n: > " + marker + "\nprintf '{\"kind\":\"deny\",\"reason\":\"ran\"}'\n",
	}
	out := dispatchEvent(t, "claude", "PreToolUse", mustJSON(recorded(t, "claude", "PreToolUse")), []dispatchtest.Hook{h}, nil)
	n := decode(t, out)
	if n.HookSpecificOutput.PermissionDecisionReason != "[test:pkg/gate] ran" || n.SystemMessage != "" {
		t.Errorf("untouched gate: %s", out.Stdout)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the handler did not run: %v", err)
	}
}

// TestPendingGrants checks the one place dispatch reads a grant outside
// the ledger: a grant an update wrote (plan.PendingDir) before moving it
// into the ledger. It is honoured only when the ledger's grant of that id
// is not the one the plan names and it is, whole.
func TestPendingGrants(t *testing.T) {
	pend := func(home, id string) string {
		dir := filepath.Join(home, plan.PendingDir)
		os.MkdirAll(dir, 0o700)
		data, err := os.ReadFile(filepath.Join(home, "grants", id+".json"))
		if err != nil {
			panic(err)
		}
		name := filepath.Join(dir, plan.GrantFile(id))
		if err := os.WriteFile(name, data, 0o600); err != nil {
			panic(err)
		}
		return name
	}
	for _, c := range []struct {
		name   string
		change func(home string, p *plan.Plan)
		runs   bool
		diag   string
	}{
		{"both-pending", func(home string, p *plan.Plan) {
			h := p.Events["PreToolUse"][0]
			for _, id := range []string{h.ToolGrant.ID, h.HookGrant.ID} {
				pend(home, id)
				os.Remove(filepath.Join(home, "grants", id+".json"))
			}
		}, true, ""},
		{"ledger-holds-another", func(home string, p *plan.Plan) {
			id := p.Events["PreToolUse"][0].HookGrant.ID
			pend(home, id)
			regrant(home, id, func(b any) { b.(*plan.HookBinds).TimeoutMS = 9000 })
		}, true, ""},
		{"pending-holds-another", func(home string, p *plan.Plan) {
			id := p.Events["PreToolUse"][0].HookGrant.ID
			regrant(home, id, func(b any) { b.(*plan.HookBinds).TimeoutMS = 9000 })
			pend(home, id)
			os.Remove(filepath.Join(home, "grants", id+".json"))
		}, false, "hook grant: claude+test+pkg+hook+gate is revoked"},
		{"pending-edited", func(home string, p *plan.Plan) {
			id := p.Events["PreToolUse"][0].HookGrant.ID
			name := pend(home, id)
			os.Remove(filepath.Join(home, "grants", id+".json"))
			data, _ := os.ReadFile(name)
			os.WriteFile(name, []byte(strings.Replace(string(data), `"timeout_ms": 5000`, `"timeout_ms": 5001`, 1)), 0o600)
		}, false, "is revoked"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			marker := filepath.Join(t.TempDir(), "ran")
			h := dispatchtest.Hook{
				ID: "gate", Subject: "tool_call", Phase: "before", Effect: "gate", Policy: "fail_closed",
				ToolNames: []string{"Bash"},
				Script:    "#!/bin/sh\n: > " + marker + "\nprintf '{\"kind\":\"allow\"}'\n",
			}
			out := dispatchEvent(t, "claude", "PreToolUse", mustJSON(recorded(t, "claude", "PreToolUse")), []dispatchtest.Hook{h}, c.change)
			n := decode(t, out)
			_, err := os.Stat(marker)
			if ran := err == nil; ran != c.runs {
				t.Errorf("the handler ran: %v, want %v\n%s", ran, c.runs, out.Stdout)
			}
			if !c.runs && (n.HookSpecificOutput.PermissionDecision != "deny" || !strings.Contains(n.SystemMessage, c.diag)) {
				t.Errorf("want a deny with %q: %s", c.diag, out.Stdout)
			}
		})
	}
}

// moveBucket moves the hooks of provider's event bucket of tool from into
// the bucket of tool to, in the current index generation under home, as
// someone editing the plan by hand would: their matchers still name from.
func moveBucket(home, provider, event, from, to string) {
	dir := filepath.Join(home, "plans", provider+".d")
	gen, err := os.Readlink(filepath.Join(dir, plan.Pointer))
	if err != nil {
		panic(err)
	}
	sub := filepath.Join(dir, gen, event)
	var b map[string]any
	data, err := os.ReadFile(filepath.Join(sub, from+".json"))
	if err == nil {
		err = json.Unmarshal(data, &b)
	}
	if err != nil {
		panic(err)
	}
	b["tool"] = to
	data, _ = json.Marshal(b)
	if err := os.WriteFile(filepath.Join(sub, to+".json"), data, 0o644); err != nil {
		panic(err)
	}
	os.Remove(filepath.Join(sub, from+".json"))
	editIndexJSON(home, provider, func(file map[string]any) {
		if file["event"] == event {
			file["tools"] = []string{to}
		}
	})
}

// TestMatcherFailsSafe: a hook with a matcher runs only for a tool its
// matcher names, even from a bucket edited to hold it, and fails under
// its policy, never skipped, when the payload names no tool.
func TestMatcherFailsSafe(t *testing.T) {
	for _, c := range []struct {
		name    string
		tools   []string
		payload func(m map[string]any)
		change  func(home string, p *plan.Plan)
		diag    string // "": skipped, no answer
	}{
		{"no-tool-name", []string{"Bash"}, func(m map[string]any) { delete(m, "tool_name") }, nil,
			"not run: missing runtime binding: the native payload has no tool.name for the matcher"},
		{"bucket-edited", []string{"Write"}, nil, func(home string, p *plan.Plan) {
			moveBucket(home, "claude", "PreToolUse", "Write", "Bash")
		}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			marker := filepath.Join(t.TempDir(), "ran")
			h := dispatchtest.Hook{ID: "gate", Subject: "tool_call", Phase: "before", Effect: "gate", Policy: "fail_closed",
				ToolNames: c.tools, Script: "#!/bin/sh\n: > " + marker + "\nprintf '{\"kind\":\"deny\",\"reason\":\"ran\"}'\n"}
			m := recorded(t, "claude", "PreToolUse")
			if c.payload != nil {
				c.payload(m)
			}
			out := dispatchEvent(t, "claude", "PreToolUse", mustJSON(m), []dispatchtest.Hook{h}, c.change)
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("the handler ran")
			}
			n := decode(t, out)
			if c.diag == "" {
				if len(out.Stdout)+len(out.Stderr) != 0 || out.Exit != 0 {
					t.Errorf("a skipped hook answered: exit %d, %s%s", out.Exit, out.Stdout, out.Stderr)
				}
				return
			}
			if n.HookSpecificOutput.PermissionDecision != "deny" || !strings.Contains(n.SystemMessage, c.diag) {
				t.Errorf("%+v, want fail_closed's deny with %q", n, c.diag)
			}
		})
	}
}

// TestPlanTimeoutZero: a hook whose plan and grant hold timeout_ms 0 (no
// validated package has one) is not run, rather than started and killed
// at once.
func TestPlanTimeoutZero(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "ran")
	h := dispatchtest.Hook{ID: "gate", Subject: "tool_call", Phase: "before", Effect: "gate", Policy: "fail_closed",
		Script: "#!/bin/sh\n: > " + marker + "\nprintf '{\"kind\":\"allow\"}'\n"}
	out := dispatchEvent(t, "claude", "PreToolUse", mustJSON(recorded(t, "claude", "PreToolUse")), []dispatchtest.Hook{h}, func(home string, p *plan.Plan) {
		digest := regrant(home, p.Events["PreToolUse"][0].HookGrant.ID, func(b any) { b.(*plan.HookBinds).TimeoutMS = 0 })
		editIndex(home, "claude", func(h *plan.PlannedHook) { h.TimeoutMS, h.HookGrant.Digest = 0, digest })
	})
	n := decode(t, out)
	if n.HookSpecificOutput.PermissionDecision != "deny" || !strings.Contains(n.SystemMessage, "not run: the plan gives timeout_ms 0") {
		t.Errorf("%+v, want fail_closed's deny naming timeout_ms 0", n)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the handler ran")
	}
}
