//go:build unix

package live

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"dalo/internal/fakemodel"
	"dalo/internal/scenario"
)

// The Codex matrix kit: a third author source, one hook per claim of the
// codex@0.147.0 table that the live and probe kits leave to a recording, a
// finding or documentation (issue 6): every payload field bound on every
// event, outputs that print nothing on each row, failures shown to the user
// only on each row, and Codex's native apply_patch tool. Its tests install it
// alone. Every handler records its bound inputs (one line a run, the
// arguments tab-separated) and its stdin in $LIVE_OUT, then fails when its
// stdin holds its crash word ("*" for every run), or answers its kind.
const (
	mxcID        = scenario.CodexMatrixID
	mxcPkg       = scenario.CodexMatrixPkg
	mxcFinal     = scenario.CodexMatrixFinal
	mxcPatchDeny = scenario.CodexPatchDeny
)

// An mxcHook is one hook of the matrix kit and its handler (policy report,
// visibility user and a 5 s timeout unless set): inputs are
// name=type=field, each passed as an argument in order; crash is the word
// on stdin that makes the handler exit with status exit; answer is the
// result kind it answers otherwise ("deny" with mxcPatchDeny as reason
// when stdin holds "mxc-denied").
type mxcHook struct {
	id, subject, phase, effect, policy, visibility, tools string
	inputs                                                []string
	crash                                                 string
	exit                                                  int
	answer                                                string
	timeoutMS                                             int
	// sleep makes the handler sleep that many seconds between writing
	// <id>.begin and <id>.end.
	sleep int
}

// mxcPatchHooks match Codex's native apply_patch tool, or only Bash; the
// SessionEnd hook outlives Codex's 3 s cut.
var mxcPatchHooks = []mxcHook{
	{id: "patch-gate", subject: "tool_call", phase: "before", effect: "gate", policy: "fail_closed", visibility: "user", tools: "apply_patch",
		inputs: []string{"tool=string=tool.name", "call=string=tool.call_id"}, answer: "deny"},
	{id: "patch-after", subject: "tool_call", phase: "after", effect: "observe", tools: "apply_patch",
		inputs: []string{"tool=string=tool.name", "call=string=tool.call_id"}, answer: "observe"},
	{id: "bash-pre", subject: "tool_call", phase: "before", effect: "observe", tools: "Bash", answer: "observe"},
	{id: "bash-post", subject: "tool_call", phase: "after", effect: "observe", tools: "Bash", answer: "observe"},
	{id: "end-slow", subject: "session", phase: "end", effect: "observe", answer: "observe", timeoutMS: 10000, sleep: 6},
}

// mxcFiles returns the matrix kit's author source with hooks
// (scenario.CodexMatrixFiles).
func mxcFiles(hooks ...mxcHook) map[string]string {
	var mh []scenario.CodexMatrixHook
	for _, h := range hooks {
		mh = append(mh, scenario.CodexMatrixHook{ID: h.id, Subject: h.subject, Phase: h.phase, Effect: h.effect,
			Policy: h.policy, Visibility: h.visibility, Tools: h.tools, Inputs: h.inputs, Crash: h.crash, Exit: h.exit,
			Answer: h.answer, TimeoutMS: h.timeoutMS, Sleep: h.sleep})
	}
	return scenario.CodexMatrixFiles(mh...)
}

// mxcRuns returns the bound inputs of each run of hook id, in order.
func (w *world) mxcRuns(id string) [][]string {
	return (&scenario.World{Out: w.out}).CodexMatrixRuns(id)
}

// mxcPatchModel returns a model of the harness's own catalog (codex debug
// models) to which Codex offers its native apply_patch as a freeform tool,
// with no tool mode of its own: the catalog changes from version to version
// (gpt-5.4 in 0.147.0's, gone from 0.171.0's; gpt-5.5 in both).
func (w *world) mxcPatchModel() string {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), daloTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, harness(w.t, "codex"), "debug", "models")
	cmd.Dir = w.work
	cmd.Env = w.Env
	out, err := cmd.Output()
	var catalog struct {
		Models []struct {
			Slug       string `json:"slug"`
			ApplyPatch string `json:"apply_patch_tool_type"`
			ToolMode   string `json:"tool_mode"`
		} `json:"models"`
	}
	if err != nil || json.Unmarshal(out, &catalog) != nil {
		w.t.Fatalf("codex debug models: %v\n%s", err, clip(string(out)))
	}
	for _, m := range catalog.Models {
		if m.ApplyPatch == "freeform" && m.ToolMode == "" {
			return m.Slug
		}
	}
	w.t.Fatalf("codex debug models: no model with a freeform apply_patch and no tool mode\n%s", clip(string(out)))
	return ""
}

// mxcModel points the world's Codex at model, keeping the fake provider:
// the tools Codex offers depend on the model it recognises.
func (w *world) mxcModel(model string) {
	w.writeFile(filepath.Join(w.home, ".codex", "config.toml"), fmt.Sprintf(`model = %q
model_provider = "fake"

[model_providers.fake]
name = "fake"
base_url = "%s/v1"
wire_api = "responses"
`, model, w.server.URL))
}

// mxcSessionEndTimeout sets the timeout of the SessionEnd entries in
// Codex's hooks.json to seconds, as a user editing the file would.
func (w *world) mxcSessionEndTimeout(seconds int) {
	w.t.Helper()
	w.reviewAll = true // the user reviews their edit of dalo's entry in /hooks
	path := filepath.Join(w.home, ".codex", "hooks.json")
	b, err := os.ReadFile(path)
	if err != nil {
		w.t.Fatal(err)
	}
	var doc struct {
		Hooks map[string][]struct {
			Hooks []map[string]any `json:"hooks"`
		} `json:"hooks"`
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &doc); err != nil || json.Unmarshal(b, &raw) != nil || len(doc.Hooks["SessionEnd"]) == 0 {
		w.t.Fatalf("%s: no SessionEnd entry (%v):\n%s", path, err, b)
	}
	for _, e := range doc.Hooks["SessionEnd"] {
		for _, h := range e.Hooks {
			h["timeout"] = seconds
		}
	}
	raw["hooks"].(map[string]any)["SessionEnd"] = doc.Hooks["SessionEnd"]
	out, err := json.MarshalIndent(raw, "", "  ")
	if err != nil {
		w.t.Fatal(err)
	}
	w.writeFile(path, string(out))
}

// TestMatrixCodex drives Codex 0.147.0 through the claims of its table that
// rested on a recording, a finding or documentation only.
func TestMatrixCodex(t *testing.T) {
	t.Parallel()
	harness(t, "codex")

	// fields_and_nothing and user_failures are scenarios
	// (scenario.CodexMatrixFiles), which dalo providers verify runs too.
	for _, c := range []struct{ name, scenario string }{
		{"fields_and_nothing", "codex-fields-nothing"},
		{"user_failures", "codex-user-failures"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			play(t, "codex", c.scenario)
		})
	}

	t.Run("apply_patch", mxcApplyPatch)
	t.Run("mcp_tool", mxcMCPTool)
}

// mxcApplyPatch (apply_patch): a codex exec session with a model Codex knows
// (mxcPatchModel), to which it offers its native apply_patch tool (a
// freeform tool; to the unknown "gpt-5" it offers none, finding 32). Two patches: a gate
// matching apply_patch runs on each with tool.name apply_patch and
// denies the one adding mxc-denied.txt; an after hook matching
// apply_patch runs on the applied one; hooks matching only Bash run on
// neither. Its SessionEnd hook sleeps past Codex's 3 s cut: Codex warns
// it clamps the timeout, and the handler is stopped before it ends.
func mxcApplyPatch(t *testing.T) {
	t.Parallel()
	patch := func(name string) string {
		return "*** Begin Patch\n*** Add File: " + name + "\n+patched\n*** End Patch\n"
	}
	w := newWorld(t, "codex", fakemodel.Script{
		{Tool: "apply_patch", Input: patch("mxc-denied.txt")},
		{Tool: "apply_patch", Input: patch("mxc-patched.txt")},
		fakemodel.Say("Done."),
	})
	model := w.mxcPatchModel()
	w.mxcModel(model)
	w.installSource(mxcID, mxcPkg, mxcFiles(mxcPatchHooks...))
	// dalo writes the SessionEnd entry's timeout already cut to the
	// clamp; the user raises it to see Codex cut it.
	w.mxcSessionEndTimeout(10)
	s := w.run("Apply the patches you are given.")
	ended := time.Now()

	var tools []string
	for _, tl := range w.server.Requests()[0].JSON["tools"].([]any) {
		m, _ := tl.(map[string]any)
		tools = append(tools, fmt.Sprint(m["type"], ":", m["name"]))
	}
	sort.Strings(tools)
	t.Logf("tools offered to %s: %v", model, tools)
	if !slices.Contains(tools, "custom:apply_patch") {
		w.failf(s, "Codex offered %s no freeform apply_patch tool: %v", model, tools)
	}

	want := [][]string{{"apply_patch", callID("codex", 0)}, {"apply_patch", callID("codex", 1)}}
	if got := w.mxcRuns("patch-gate"); fmt.Sprint(got) != fmt.Sprint(want) {
		w.failf(s, "apply_patch gate: bound tool.name, tool.call_id per run = %q, want %q", got, want)
	}
	if w.exists("mxc-denied.txt") || !w.exists("mxc-patched.txt") {
		w.failf(s, "denied patch applied = %v, allowed patch applied = %v; want false, true", w.exists("mxc-denied.txt"), w.exists("mxc-patched.txt"))
	}
	if !w.server.Contains(mxcPatchDeny) {
		w.failf(s, "the deny reason %s did not reach the model", mxcPatchDeny)
	}
	if got := w.mxcRuns("patch-after"); fmt.Sprint(got) != fmt.Sprint(want[1:]) {
		w.failf(s, "apply_patch after hook: bound tool.name, tool.call_id per run = %q, want %q", got, want[1:])
	}
	if pre, post := w.output("bash-pre.argv"), w.output("bash-post.argv"); pre != "" || post != "" {
		w.failf(s, "hooks matching only Bash ran on apply_patch calls: before %q, after %q", pre, post)
	}

	// timeout.clamps.SessionEnd: Codex cut the 10 s SessionEnd hook to
	// 3 s; the handler began and was stopped before its 6 s sleep ended.
	if !strings.Contains(s.stderr, "clamping SessionEnd hook timeout to 3s") {
		w.failf(s, "Codex did not warn that it clamps the SessionEnd hook timeout to 3s")
	}
	// Timed from when the handler began (its begin file), not from
	// the session's start, so that a loaded machine's slower turns
	// cannot fail it: cut at 3 s, the session ended before the
	// handler's 6 s sleep would have, and the handler never ended.
	begin, err := os.Stat(filepath.Join(w.out, "end-slow.begin"))
	if err != nil {
		w.failf(s, "the SessionEnd handler did not run: %v", err)
		return
	}
	if d := ended.Sub(begin.ModTime()); d >= 6*time.Second {
		w.failf(s, "the session ended %v after the SessionEnd handler began, want it cut at 3 s", d.Round(time.Millisecond))
	}
	time.Sleep(time.Until(begin.ModTime().Add(7 * time.Second)))
	if w.output("end-slow.end") != "" {
		w.failf(s, "the SessionEnd handler ran past Codex's 3 s cut to its end")
	}
}

// mxcMCPTool (mcp_tool): a codex exec session with a user's MCP server (cmsrv)
// whose tool the model calls. A gate whose matcher names the tool as
// hooks see it (mcp__cmsrv__probe, the table's pattern
// mcp__<server>__<tool>) runs on that call given that name, and
// abstains, so the tool runs and its answer reaches the model; an after
// hook naming it runs after it. Only where the table under test admits
// the name (tool_patterns).
func mxcMCPTool(t *testing.T) {
	t.Parallel()
	const tool = "mcp__cmsrv__probe"
	if tb := tableUnder(t, "codex"); !tb.KnowsTool(tool) {
		t.Skipf("%s admits no MCP tool name in a matcher", tb.Key())
	}
	w := newWorld(t, "codex", fakemodel.Script{
		{Tool: "probe", Namespace: "mcp__cmsrv", Input: map[string]any{"text": "mxc-mcp-call"}},
		fakemodel.Say(mxcFinal),
	})
	w.codexMCPServer()
	w.installSource(mxcID, mxcPkg, mxcFiles(
		mxcHook{id: "mcp-gate", subject: "tool_call", phase: "before", effect: "gate", policy: "fail_closed", tools: tool,
			inputs: []string{"tool=string=tool.name", "call=string=tool.call_id"}, answer: "abstain"},
		mxcHook{id: "mcp-after", subject: "tool_call", phase: "after", effect: "observe", tools: tool,
			inputs: []string{"tool=string=tool.name"}, answer: "observe"},
		mxcHook{id: "bash-pre", subject: "tool_call", phase: "before", effect: "observe", tools: "Bash", answer: "observe"}))
	s := w.run("Call the probe tool, mxc-mcp.")
	if got, want := w.mxcRuns("mcp-gate"), [][]string{{tool, callID("codex", 0)}}; fmt.Sprint(got) != fmt.Sprint(want) {
		w.failf(s, "MCP gate: bound tool.name, tool.call_id per run = %q, want %q", got, want)
	}
	if got := w.mxcRuns("mcp-after"); fmt.Sprint(got) != fmt.Sprint([][]string{{tool}}) {
		w.failf(s, "MCP after hook: bound tool.name per run = %q, want one run given %s", got, tool)
	}
	if got := w.output("bash-pre.argv"); got != "" {
		w.failf(s, "a hook matching only Bash ran on the MCP call: %q", got)
	}
	if got := toolOutput(w.server, callID("codex", 0)); !strings.Contains(got, cmMCPOut+" mxc-mcp-call") {
		w.failf(s, "the MCP tool's answer did not reach the model: %q", got)
	}
}
