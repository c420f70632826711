package scaffold

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"dalo/engine"
	"dalo/plan"
	"dalo/providers"
)

// admitted returns every (subject, phase, effect) the rules admit: a
// provider table covers each of them (#Provider checks it).
func admitted(t *testing.T) []HookSpec {
	t.Helper()
	ts, err := providers.Load()
	if err != nil {
		t.Fatal(err)
	}
	tb, ok := ts.Newest("claude")
	if !ok {
		t.Fatal("no claude table")
	}
	var out []HookSpec
	for s, phases := range tb.Rows {
		for p, row := range phases {
			for e := range row.Effects {
				out = append(out, HookSpec{s, p, e})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	if len(out) < 10 {
		t.Fatalf("only %d combinations", len(out))
	}
	return out
}

// TestNewPluginValidates: a package with every member kind, a tool of
// its own and a hook for every combination the rules admit validates as
// written, and every tool's script answers a result its hook's effect
// admits (plan.ResultKinds, from #ResultKinds).
func TestNewPluginValidates(t *testing.T) {
	r, err := engine.LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	hooks := admitted(t)
	spec := PluginSpec{Name: "every-hook", Skill: true, Instruction: true, Agent: true, Tools: []string{"helper"}, Hooks: hooks}
	ts, err := providers.Load()
	if err != nil {
		t.Fatal(err)
	}
	tree, err := NewPlugin(r, ts, spec)
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	staged, err := tree.Stage(src)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := engine.Validate(staged.Dir(), engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Valid || len(rep.Diagnostics) > 0 {
		for _, d := range rep.Diagnostics {
			t.Error(d)
		}
		t.Fatal("the new package does not validate")
	}
	if got := len(rep.Packages[0].Hooks); got != len(hooks) {
		t.Fatalf("%d hooks, want %d", got, len(hooks))
	}
	if err := staged.Commit(); err != nil {
		t.Fatal(err)
	}
	for _, h := range append([]*HookSpec{nil}, ptrs(hooks)...) {
		id := "helper"
		kinds := []string{"abstain"}
		if h != nil {
			id, kinds = h.ID(), plan.ResultKinds[h.Effect]
		}
		cmd := exec.Command(filepath.Join(src, "plugins/every-hook", id+".sh"))
		cmd.Env = []string{}
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		var res map[string]any
		dec := json.NewDecoder(strings.NewReader(string(out)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&res); err != nil {
			t.Fatalf("%s: %s is not JSON: %v", id, out, err)
		}
		kind, _ := res["kind"].(string)
		if !slices.Contains(kinds, kind) {
			t.Errorf("%s answers %s, not one of %v", id, out, kinds)
		}
		for k, v := range res {
			if s, ok := v.(string); k != "kind" && (!ok || strings.TrimSpace(s) == "") {
				t.Errorf("%s: %s: %v is no text", id, k, v)
			}
		}
	}
}

func ptrs(hs []HookSpec) []*HookSpec {
	out := make([]*HookSpec, len(hs))
	for i := range hs {
		out[i] = &hs[i]
	}
	return out
}

// TestDerivedProse: the limits and runtimes a new manifest's comments
// state are the rules' (plan.DraftLimits, plan.Runtimes), whatever they
// are, and the manifest states the rules' own.
func TestDerivedProse(t *testing.T) {
	for _, c := range []struct {
		runtimes map[string]plan.Runtime
		want     string
	}{
		{plan.Runtimes, "executable (the entry runs itself), node or python"},
		{map[string]plan.Runtime{"deno": {Interpreter: "deno"}, "binary": {}}, "binary (the entry runs itself) or deno"},
		{map[string]plan.Runtime{"python": {Interpreter: "python3"}}, "python"},
	} {
		if got := runtimeChoices(c.runtimes); got != c.want {
			t.Errorf("runtimeChoices(%v) = %q, want %q", c.runtimes, got, c.want)
		}
	}
	if got, want := timeoutRange(plan.Limits{TimeoutMinMS: 7, TimeoutMaxMS: 9000}), "from 7 to 9000"; got != want {
		t.Errorf("timeoutRange = %q, want %q", got, want)
	}
	ts, err := providers.Load()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	h := HookSpec{"prompt", "before", "gate"}
	writeHeader(&b, "p")
	writeTool(&b, h.ID(), h.String())
	writeHook(&b, ts, h)
	m := b.String()
	lim := plan.DraftLimits
	for _, want := range []string{
		fmt.Sprintf("at most %d characters", lim.IDChars),
		fmt.Sprintf("from %d to %d", lim.TimeoutMinMS, lim.TimeoutMaxMS),
		"# " + runtimeChoices(plan.Runtimes) + ".\n",
	} {
		if !strings.Contains(m, want) {
			t.Errorf("the manifest does not say %q:\n%s", want, m)
		}
	}
}

// TestPolicyComment: the comment above failure_policy names the policies
// the rules admit besides report, and what fail_closed does.
func TestPolicyComment(t *testing.T) {
	for _, c := range []struct{ effect, want string }{
		{"gate", "also admits for gate: fail_open, fail_closed.\n# fail_closed makes the hook fail closed: a failure denies the action.\n"},
		{"continue_workflow", "fail_closed makes a failure ask for another workflow pass.\n"},
		{"observe", "# It is the only policy the draft admits for observe.\n"},
		{"add_context", "also admits for add_context: fail_open.\n"},
	} {
		if got := policyComment(c.effect); !strings.HasSuffix(got, c.want) {
			t.Errorf("%s: %q does not end in %q", c.effect, got, c.want)
		}
	}
}

func TestParseHook(t *testing.T) {
	for _, c := range []struct {
		in   string
		want HookSpec
		err  bool
	}{
		{in: "tool_call/before:gate", want: HookSpec{"tool_call", "before", "gate"}},
		{in: "prompt/before:add_context", want: HookSpec{"prompt", "before", "add_context"}},
		{in: "tool_call/before", err: true},
		{in: "tool_call:gate", err: true},
		{in: "/before:gate", err: true},
		{in: "tool_call/:gate", err: true},
		{in: "tool_call/before:", err: true},
	} {
		got, err := ParseHook(c.in)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("ParseHook(%q) = %v, %v", c.in, got, err)
		}
	}
	if id := (HookSpec{"tool_call", "before", "rewrite_input"}).ID(); id != "tool-call-before-rewrite-input" {
		t.Errorf("ID = %s", id)
	}
}

// TestNewPluginDuplicate: two hooks with one id are refused before
// anything is written.
func TestNewPluginDuplicate(t *testing.T) {
	r, err := engine.LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	ts, err := providers.Load()
	if err != nil {
		t.Fatal(err)
	}
	h := HookSpec{"tool_call", "before", "gate"}
	if _, err := NewPlugin(r, ts, PluginSpec{Name: "x", Hooks: []HookSpec{h, h}}); err == nil {
		t.Error("two equal hooks accepted")
	}
	if _, err := NewPlugin(r, ts, PluginSpec{Name: "x", Tools: []string{h.ID()}, Hooks: []HookSpec{h}}); err == nil {
		t.Error("a tool and a hook with one id accepted")
	}
}

// TestInit makes a source, then finds nothing to make in it, and refuses
// a file where a directory goes.
func TestInit(t *testing.T) {
	r, err := engine.LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "src")
	created, err := Init(r, dir, []byte("{}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".", "agents", "instructions", "plugins", "skills", SchemaFile}
	if !slices.Equal(created, want) {
		t.Errorf("created %v, want %v", created, want)
	}
	if created, err := Init(r, dir, []byte("{}\n")); err != nil || len(created) != 0 {
		t.Errorf("second Init: %v, %v", created, err)
	}
	if err := os.Remove(filepath.Join(dir, "agents")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "agents"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Init(r, dir, []byte("{}\n")); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Errorf("a file in the way: %v", err)
	}
}

// TestComment: what TOML does not admit in a comment is escaped.
func TestComment(t *testing.T) {
	if got := Comment("a\nb\x1bc"); got != "# a b\\x1bc\n" {
		t.Errorf("Comment = %q", got)
	}
}
