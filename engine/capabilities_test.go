package engine

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"

	"dalo/bench/sourcegen"
	defs "dalo/cue"
	"dalo/providers"
)

func TestResolveProviders(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
		err  string
	}{
		{nil, "", ""},
		{[]string{"claude"}, "claude@2.1.332", ""},
		{[]string{"codex@0.147.0", "claude@2.1.233", "codex@0.147.0"}, "codex@0.147.0 claude@2.1.233", ""},
		{[]string{"codex@0.147.0", "claude@2.1.233", "codex"}, "codex@0.147.0 claude@2.1.233 codex@0.171.0", ""},
		{[]string{"claude@2.1.234"}, "", "unknown provider claude@2.1.234; known: claude@2.1.233, claude@2.1.332, codex@0.147.0, codex@0.171.0, copilot@1.0.102, gemini@0.61.0, qwen@0.24.4"},
		{[]string{"cursor"}, "", "unknown provider cursor; known: claude@2.1.233, claude@2.1.332, codex@0.147.0, codex@0.171.0, copilot@1.0.102, gemini@0.61.0, qwen@0.24.4"},
	} {
		got, err := ResolveProviders(tc.args)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("ResolveProviders(%v) error = %v, want %q", tc.args, err, tc.err)
			}
			continue
		}
		if err != nil || strings.Join(got, " ") != tc.want {
			t.Errorf("ResolveProviders(%v) = %v, %v, want %s", tc.args, got, err, tc.want)
		}
	}
}

// hookTOML is one [[hook]] of the test package; fields left empty take a
// valid default.
type hookTOML struct {
	id, subject, phase, effect, requirement, policy, visibility, matcher string
	timeout                                                              int
}

// hooksHead is the test package's manifest up to its tool's inputs: one
// node tool t with an empty argv.
const hooksHead = "schema_version = 1\n\n[plugin]\nname = \"p\"\ndescription = \"Hooks.\"\n\n" +
	"[[tool]]\nschema_version = 1\nid = \"t\"\nentry = \"t.mjs\"\nruntime = \"node\"\nargv = []\ncwd = \"tool_root\"\navailability = \"required\"\n"

// writeHooksSource writes a source of one package p whose manifest is
// manifest, with its tool's entry t.mjs, and returns its root.
func writeHooksSource(t testing.TB, manifest string) string {
	t.Helper()
	root := t.TempDir()
	pkg := filepath.Join(root, "plugins", "p")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"PLUGIN.toml": manifest, "t.mjs": "\n"} {
		if err := os.WriteFile(filepath.Join(pkg, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func writeHooks(t testing.TB, hooks []hookTOML) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(hooksHead)
	for _, h := range hooks {
		if h.policy == "" {
			h.policy = "report"
		}
		if h.visibility == "" {
			h.visibility = "user"
		}
		if h.timeout == 0 {
			h.timeout = 1000
		}
		b.WriteString("\n[[hook]]\nschema_version = 1\nid = \"" + h.id + "\"\ntool = \"t\"\n")
		b.WriteString("subject = \"" + h.subject + "\"\nphase = \"" + h.phase + "\"\neffect = \"" + h.effect + "\"\n")
		b.WriteString("requirement = \"" + h.requirement + "\"\n")
		if h.requirement == "optional" {
			b.WriteString("fallback = \"omit\"\n")
		}
		b.WriteString("timeout_ms = " + strconv.Itoa(h.timeout) + "\nfailure_policy = \"" + h.policy + "\"\nretry = \"never\"\n")
		b.WriteString("error_visibility = \"" + h.visibility + "\"\nblocking_scope = \"matched_event\"\n")
		if h.matcher != "" {
			b.WriteString("matcher = { tool_names = " + h.matcher + " }\n")
		}
	}
	return writeHooksSource(t, b.String())
}

// Every unsupported combination the draft names, on both providers, and
// what a provider does with an optional hook it cannot honour.
func TestProviderCapabilities(t *testing.T) {
	src := writeHooks(t, []hookTOML{
		{id: "end-model", subject: "session", phase: "end", effect: "observe", requirement: "required", visibility: "model_and_user"},
		{id: "end-user", subject: "session", phase: "end", effect: "observe", requirement: "required"},
		{id: "stop-report-model", subject: "workflow", phase: "stop", effect: "observe", requirement: "required", visibility: "model_and_user"},
		{id: "stop-open-model", subject: "workflow", phase: "stop", effect: "continue_workflow", requirement: "required", policy: "fail_open", visibility: "model_and_user"},
		{id: "stop-closed-model", subject: "workflow", phase: "stop", effect: "continue_workflow", requirement: "required", policy: "fail_closed", visibility: "model_and_user"},
		{id: "replace", subject: "tool_call", phase: "after", effect: "replace_output", requirement: "required"},
		{id: "failure", subject: "tool_call", phase: "failure", effect: "add_context", requirement: "optional"},
		{id: "rewrite", subject: "tool_call", phase: "before", effect: "rewrite_input", requirement: "required", policy: "fail_closed"},
	})
	rep, err := Validate(src, Options{Providers: pinned})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Valid {
		t.Fatalf("unsupported hooks must not make the source invalid: %v", rep.Diagnostics)
	}
	type want struct{ status, event, reason string }
	wants := map[string]map[string]want{
		"claude@2.1.233": {
			"end-model":         {"unsupported", "", "Claude Code sends nothing to the model after SessionEnd"},
			"end-user":          {"supported", "SessionEnd", ""},
			"stop-report-model": {"unsupported", "", "Claude Code's Stop resumes the turn"},
			"stop-open-model":   {"unsupported", "", "cannot promise model_and_user delivery"},
			"stop-closed-model": {"supported", "Stop", ""},
			"replace":           {"supported", "PostToolUse", ""},
			"failure":           {"supported", "PostToolUseFailure", ""},
			"rewrite":           {"supported", "PreToolUse", ""},
		},
		"codex@0.147.0": {
			"end-model":         {"unsupported", "", "Codex sends nothing to the model after SessionEnd"},
			"end-user":          {"supported", "SessionEnd", ""},
			"stop-report-model": {"unsupported", "", "Codex's Stop output has no model context"},
			"stop-open-model":   {"unsupported", "", "cannot promise model_and_user delivery"},
			"stop-closed-model": {"supported", "Stop", ""},
			"replace":           {"unsupported", "", "Codex 0.147.0 ignores updatedToolOutput"},
			"failure":           {"omitted", "", "Codex 0.147.0 has no tool-failure event"},
			"rewrite":           {"supported", "PreToolUse", ""},
		},
	}
	if len(rep.Capabilities.Providers) != len(wants) {
		t.Fatalf("providers = %d, want %d", len(rep.Capabilities.Providers), len(wants))
	}
	for prov, hooks := range wants {
		caps := rep.Capabilities.Of(prov)
		if len(caps) != len(hooks) {
			t.Fatalf("%s: %d hooks, want %d", prov, len(caps), len(hooks))
		}
		for _, c := range caps {
			w := hooks[c.Hook]
			if c.Status != w.status || c.NativeEvent != w.event || !strings.Contains(c.Reason, w.reason) || (w.reason == "") != (c.Reason == "") {
				t.Errorf("%s %s: %+v, want %+v", prov, c.Hook, c, w)
			}
			if blocks := c.Status == "unsupported" && c.Requirement == "required"; c.BlocksActivation != blocks {
				t.Errorf("%s %s: blocks_activation = %t, want %t", prov, c.Hook, c.BlocksActivation, blocks)
			}
		}
	}

	rep, err = Validate(src, Options{Providers: []string{"codex@0.147.0"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.Capabilities.Providers; !slices.Equal(got, []string{"codex@0.147.0"}) {
		t.Errorf("--provider codex@0.147.0 reported providers %v", got)
	}
}

// TestProviderFindings: a matcher name no selected provider knows is a
// warning, and so is a provider that knows none of a hook's names (the
// hook never runs there); a name one provider knows and another does not
// is what a portable hook lists, and no warning. A provider's cut of the
// timeout is a warning too.
func TestProviderFindings(t *testing.T) {
	src := writeHooks(t, []hookTOML{
		{id: "gate", subject: "tool_call", phase: "before", effect: "gate", requirement: "required", matcher: `["Bash", "Edit", "apply_patch", "Nope"]`},
		{id: "end", subject: "session", phase: "end", effect: "observe", requirement: "required", timeout: 5000},
		{id: "edits", subject: "tool_call", phase: "before", effect: "gate", requirement: "required", matcher: `["Edit", "Write"]`},
	})
	for _, tc := range []struct {
		providers []string
		want      []string
	}{
		{pinned, []string{
			"plugins/p/PLUGIN.toml:29:58: warning W101 hook[0].matcher.tool_names[3]: no provider table has a native tool Nope, so this name matches nothing on any harness dalo knows",
			"plugins/p/PLUGIN.toml:39:14: warning W102 hook[1].timeout_ms: codex@0.147.0 cuts SessionEnd hook timeouts to 3000 ms; this hook asks for 5000 ms",
			"plugins/p/PLUGIN.toml:58:27: warning W101 hook[2].matcher.tool_names: codex@0.147.0 has none of these native tools, so this hook never runs there; its tools: Bash, apply_patch",
		}},
		// One provider selected: a name another harness knows is still no
		// warning (the hook is portable); a typo is.
		{[]string{"claude@2.1.233"}, []string{
			"plugins/p/PLUGIN.toml:29:58: warning W101 hook[0].matcher.tool_names[3]: no provider table has a native tool Nope",
		}},
		{[]string{"codex@0.147.0"}, []string{
			"plugins/p/PLUGIN.toml:29:58: warning W101 hook[0].matcher.tool_names[3]: no provider table has a native tool Nope",
			"plugins/p/PLUGIN.toml:39:14: warning W102",
			"plugins/p/PLUGIN.toml:58:27: warning W101 hook[2].matcher.tool_names: codex@0.147.0 has none of these native tools",
		}},
	} {
		rep, err := Validate(src, Options{Providers: tc.providers})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Valid {
			t.Errorf("warnings made the source invalid")
		}
		var got []string
		for _, d := range rep.Diagnostics {
			got = append(got, d.String())
		}
		if len(got) != len(tc.want) {
			t.Errorf("providers %v: diagnostics:\n%s\nwant %d", tc.providers, strings.Join(got, "\n"), len(tc.want))
			continue
		}
		for _, w := range tc.want {
			found := false
			for _, g := range got {
				found = found || strings.HasPrefix(g, w)
			}
			if !found {
				t.Errorf("providers %v: no diagnostic %q in\n%s", tc.providers, w, strings.Join(got, "\n"))
			}
		}
	}
}

// TestProviderFindingsOnce: capabilities computed again for the same
// packages add no provider finding twice.
func TestProviderFindingsOnce(t *testing.T) {
	src := writeHooks(t, []hookTOML{
		{id: "gate", subject: "tool_call", phase: "before", effect: "gate", requirement: "required", matcher: `["Bash", "Nope"]`},
		{id: "end", subject: "session", phase: "end", effect: "observe", requirement: "required", timeout: 5000},
	})
	s, err := Load(src, Options{Providers: pinned})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := providers.Load()
	if err != nil {
		t.Fatal(err)
	}
	var counts []int
	for range 2 {
		if _, err := CapabilitiesWith(ts, s.Packages, pinned); err != nil {
			t.Fatal(err)
		}
		counts = append(counts, len(s.Packages[0].diags.diags))
	}
	// Load computed them once already: W101 for Nope, which no provider
	// knows, and W102 for Codex's SessionEnd cut.
	if counts[0] != 2 || counts[1] != 2 {
		t.Errorf("package diagnostics after each CapabilitiesWith: %v, want 2 each:\n%v", counts, s.Packages[0].diags.diags)
	}
}

// The capability decision is a CUE rule asked once per distinct question:
// on a source of 1,000 packages of 3 hooks each it must add well under a
// second to validation, even with a cold memo.
// TestCapabilitiesCoverEveryHook checks that a large source gets an answer
// for every hook on every provider. Its cost is measured by
// BenchmarkCapabilities, never by a timed test.
func TestCapabilitiesCoverEveryHook(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 1,000 packages")
	}
	dir := filepath.Join(t.TempDir(), "source")
	if err := sourcegen.Write(dir, 1000, 0); err != nil {
		t.Fatal(err)
	}
	s, err := Load(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	hooks := 0
	for _, p := range s.Packages {
		hooks += len(p.Manifest.Hooks)
	}
	ts, err := providers.LoadFS(os.DirFS("../providers"))
	if err != nil {
		t.Fatal(err)
	}
	caps, err := CapabilitiesWith(ts, s.Packages, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(caps.Of("claude@2.1.233")) != hooks || len(caps.Of("codex@0.147.0")) != hooks {
		t.Fatalf("capabilities cover %d and %d hooks, want %d", len(caps.Of("claude@2.1.233")), len(caps.Of("codex@0.147.0")), hooks)
	}
}

// BenchmarkCapabilities measures loading the provider tables from CUE and
// answering every hook of a 1,000-package source on both providers.
func BenchmarkCapabilities(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "source")
	if err := sourcegen.Write(dir, 1000, 0); err != nil {
		b.Fatal(err)
	}
	s, err := Load(dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	// From CUE: the tables as the CUE files state them, loaded each time.
	b.Run("cue", func(b *testing.B) {
		for b.Loop() {
			ts, err := providers.LoadFS(os.DirFS("../providers"))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := CapabilitiesWith(ts, s.Packages, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
	// Compiled: what validation asks, of the tables loaded once.
	b.Run("compiled", func(b *testing.B) {
		ts, err := providers.Load()
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			for _, p := range s.Packages {
				p.diags.diags = slices.DeleteFunc(p.diags.diags, func(d Diagnostic) bool { return d.Code == "W101" || d.Code == "W102" })
			}
			if _, err := CapabilitiesWith(ts, s.Packages, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestInvalidHooksHaveNoCapability proves that a hook with an error of its
// own (a combination the table does not admit) is left out of every
// provider's answers, while the valid hooks of the same package are in.
func TestInvalidHooksHaveNoCapability(t *testing.T) {
	src := writeHooks(t, []hookTOML{
		{id: "ok", subject: "prompt", phase: "before", effect: "add_context", requirement: "required"},
		{id: "e030", subject: "prompt", phase: "after", effect: "observe", requirement: "required"},
		{id: "e031", subject: "tool_call", phase: "after", effect: "gate", requirement: "required"},
		{id: "e032", subject: "session", phase: "start", effect: "observe", requirement: "required", policy: "fail_closed"},
	})
	rep, err := Validate(src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, code := range []string{"E030", "E031", "E032"} {
		if !hasCode(rep, code) {
			t.Errorf("no %s: %v", code, rep.Diagnostics)
		}
	}
	for _, key := range rep.Capabilities.Providers {
		var hooks []string
		for _, c := range rep.Capabilities.Of(key) {
			hooks = append(hooks, c.Hook)
		}
		if len(hooks) != 1 || hooks[0] != "ok" {
			t.Errorf("%s answers for hooks %v, want [ok]", key, hooks)
		}
	}
}

// TestHookErrorsReadOnce: which hooks have errors of their own, and so no
// answers, is read from the package's diagnostics in one pass, however
// many hooks and errors it has; the hooks without are answered, and a
// hook whose index only begins like another's (hook[1] and hook[10]) is
// not taken for it.
func TestHookErrorsReadOnce(t *testing.T) {
	var b strings.Builder
	b.WriteString("schema_version = 1\n\n[plugin]\nname = \"p\"\ndescription = \"Hooks.\"\n\n")
	b.WriteString("[[tool]]\nschema_version = 1\nid = \"t\"\nentry = \"t.mjs\"\nruntime = \"node\"\nargv = []\ncwd = \"tool_root\"\navailability = \"required\"\n")
	for _, in := range []string{"a", "b", "c"} {
		b.WriteString("\n[[tool.inputs]]\nname = \"" + in + "\"\ntype = \"string\"\nrequired = true\n")
	}
	const hooks = 12
	for i := range hooks {
		b.WriteString("\n[[hook]]\nschema_version = 1\nid = \"h" + strconv.Itoa(i) + "\"\ntool = \"t\"\nsubject = \"prompt\"\nphase = \"before\"\neffect = \"add_context\"\nrequirement = \"required\"\n")
		b.WriteString("timeout_ms = 1000\nfailure_policy = \"report\"\nretry = \"never\"\nerror_visibility = \"user\"\nblocking_scope = \"matched_event\"\n")
		if i == 1 || i == 11 {
			b.WriteString("bindings = [{ input = \"a\", field = \"session.id\" }, { input = \"b\", field = \"session.id\" }, { input = \"c\", field = \"prompt.text\" }]\n")
		}
	}
	src := writeHooksSource(t, b.String())
	before := diagnosticsScanned.Load()
	rep, err := Validate(src, Options{Providers: pinned})
	if err != nil {
		t.Fatal(err)
	}
	if n := diagnosticsScanned.Load() - before; n > int64(len(rep.Diagnostics)) {
		t.Errorf("%d diagnostics read to find the hooks in error, want at most the %d there are", n, len(rep.Diagnostics))
	}
	var e041 int
	for _, d := range rep.Diagnostics {
		if d.Code == "E041" {
			e041++
		}
	}
	if e041 != 3*(hooks-2) {
		t.Errorf("%d E041, want %d: %v", e041, 3*(hooks-2), rep.Diagnostics)
	}
	for _, key := range rep.Capabilities.Providers {
		var answered []string
		for _, c := range rep.Capabilities.Of(key) {
			answered = append(answered, c.Hook)
		}
		if !slices.Equal(answered, []string{"h1", "h11"}) {
			t.Errorf("%s answers for hooks %v, want [h1 h11]", key, answered)
		}
	}
}

// pinned are the tables these tests expect answers of, named, so that a
// table added for a newer version changes none of them.
var pinned = []string{"claude@2.1.233", "codex@0.147.0"}

// TestCapabilityMatchesNothing: a hook whose matcher names none of a
// harness's native tools would never run there, so it is unsupported on
// that harness: a required one blocks activation, an optional one with
// fallback omit is omitted. Where the harness knows one of its names, or
// the matcher is empty, it is supported.
func TestCapabilityMatchesNothing(t *testing.T) {
	src := writeHooks(t, []hookTOML{
		{id: "claude-shell", subject: "tool_call", phase: "before", effect: "gate", requirement: "required", matcher: `["Bash"]`},
		{id: "portable", subject: "tool_call", phase: "before", effect: "gate", requirement: "required", matcher: `["Bash", "run_shell_command"]`},
		{id: "all", subject: "tool_call", phase: "before", effect: "gate", requirement: "required", matcher: `[]`},
	})
	rep, err := Validate(src, Options{Providers: []string{"claude@2.1.233", "gemini@0.61.0"}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"claude@2.1.233 claude-shell": "supported", "claude@2.1.233 portable": "supported", "claude@2.1.233 all": "supported",
		"gemini@0.61.0 claude-shell": "unsupported", "gemini@0.61.0 portable": "supported", "gemini@0.61.0 all": "supported",
	}
	for _, prov := range rep.Capabilities.Providers {
		for _, c := range rep.Capabilities.Of(prov) {
			k := prov + " " + c.Hook
			if c.Status != want[k] {
				t.Errorf("%s: %s (%s), want %s", k, c.Status, c.Reason, want[k])
			}
			if c.Status == "unsupported" && (!c.BlocksActivation || !strings.Contains(c.Reason, "name none of Gemini CLI's native tools")) {
				t.Errorf("%s: blocks activation %v, reason %q", k, c.BlocksActivation, c.Reason)
			}
		}
	}
}

// TestUnboundFieldsUnsupported walks every table: a hook on each admitted
// row binding each field the row admits is supported only where the row's
// native event carries that field (a payload key; actor.kind and actor.id
// are always given), and otherwise unsupported with a reason naming the
// field. Gemini CLI gives no tool.call_id on BeforeTool and no
// session.permission_mode at all.
func TestUnboundFieldsUnsupported(t *testing.T) {
	rules, err := defs.Load(cuecontext.New())
	if err != nil {
		t.Fatal(err)
	}
	var types map[string]string
	var common map[string]bool
	var combos map[string]map[string]struct {
		Fields map[string]bool `json:"fields"`
	}
	for path, to := range map[string]any{"#FieldTypes": &types, "#CommonFields": &common, "#Combinations": &combos} {
		if err := rules.LookupPath(cue.ParsePath(path)).Decode(to); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	inputType := map[string]string{"string": "string", "path": "path", "boolean": "boolean"}
	type bound struct{ subject, phase, field string }
	var hooks []bound
	for s, phases := range combos {
		for p, row := range phases {
			for f := range row.Fields {
				hooks = append(hooks, bound{s, p, f})
			}
			for f := range common {
				hooks = append(hooks, bound{s, p, f})
			}
		}
	}
	slices.SortFunc(hooks, func(a, b bound) int { return strings.Compare(a.subject+a.phase+a.field, b.subject+b.phase+b.field) })
	var b strings.Builder
	b.WriteString(hooksHead + "inputs = [")
	fields := slices.Sorted(maps.Keys(types))
	for i, f := range fields {
		fmt.Fprintf(&b, "{ name = \"i%d\", type = %q, required = false }, ", i, inputType[types[f]])
	}
	b.WriteString("]\n")
	for i, h := range hooks {
		fmt.Fprintf(&b, "\n[[hook]]\nschema_version = 1\nid = \"h%d\"\ntool = \"t\"\nsubject = %q\nphase = %q\neffect = \"observe\"\nrequirement = \"required\"\n"+
			"timeout_ms = 1000\nfailure_policy = \"report\"\nretry = \"never\"\nerror_visibility = \"user\"\nblocking_scope = \"matched_event\"\n"+
			"bindings = [{ input = \"i%d\", field = %q }]\n", i, h.subject, h.phase, slices.Index(fields, h.field), h.field)
	}
	root := writeHooksSource(t, b.String())
	rep, err := Validate(root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Valid {
		t.Fatalf("the package is invalid: %v", rep.Diagnostics)
	}
	ts, err := providers.Load()
	if err != nil {
		t.Fatal(err)
	}
	var unbound, boundOK int
	got := map[string]string{} // "table subject/phase field" → status, for the pins below
	for _, tb := range ts.All() {
		caps := rep.Capabilities.Of(tb.Key())
		if len(caps) != len(hooks) {
			t.Fatalf("%s: %d capabilities, want %d", tb.Key(), len(caps), len(hooks))
		}
		for _, c := range caps {
			i, _ := strconv.Atoi(strings.TrimPrefix(c.Hook, "h"))
			h := hooks[i]
			ev, ok := tb.NativeEvent(h.subject, h.phase)
			if !ok {
				continue // unsupported for its row's reason
			}
			got[tb.Key()+" "+h.subject+"/"+h.phase+" "+h.field] = c.Status
			_, carried := tb.Events[ev].Payload.Fields[h.field]
			carried = carried || h.field == "actor.kind" || h.field == "actor.id"
			switch {
			case carried && c.Status != providers.Supported:
				t.Errorf("%s %s/%s binding %s (%s carries it): %s: %s", tb.Key(), h.subject, h.phase, h.field, ev, c.Status, c.Reason)
			case !carried && (c.Status != providers.Unsupported || !c.BlocksActivation || !strings.Contains(c.Reason, "its bindings read "+h.field+", which "+tb.Harness+" does not give on "+ev)):
				t.Errorf("%s %s/%s binding %s (%s has no key for it): %s, blocks %t: %q", tb.Key(), h.subject, h.phase, h.field, ev, c.Status, c.BlocksActivation, c.Reason)
			case carried:
				boundOK++
			default:
				unbound++
			}
		}
	}
	if unbound == 0 || boundOK == 0 {
		t.Errorf("the walk found %d unbound and %d bound fields; it is broken", unbound, boundOK)
	}
	for key, want := range map[string]string{
		"gemini@0.61.0 tool_call/before tool.call_id":             providers.Unsupported,
		"gemini@0.61.0 tool_call/before session.permission_mode":  providers.Unsupported,
		"gemini@0.61.0 prompt/before session.permission_mode":     providers.Unsupported,
		"gemini@0.61.0 tool_call/before tool.name":                providers.Supported,
		"claude@2.1.332 tool_call/before tool.call_id":            providers.Supported,
		"claude@2.1.332 tool_call/before session.permission_mode": providers.Supported,
	} {
		if got[key] != want {
			t.Errorf("%s: %q, want %q", key, got[key], want)
		}
	}
}

// TestCapabilityRowsShareAnswers: hooks that ask the providers the same
// question share one list of answers, so what a report holds for them is
// a row a hook, not an answer a hook and a provider; and the report's
// JSON is still an object of lists, one a provider, as schema 1 has it.
func TestCapabilityRowsShareAnswers(t *testing.T) {
	src := writeHooks(t, []hookTOML{
		{id: "a", subject: "tool_call", phase: "before", effect: "gate", requirement: "required", matcher: `["Bash"]`},
		{id: "b", subject: "tool_call", phase: "before", effect: "gate", requirement: "required", matcher: `["Bash"]`},
		{id: "c", subject: "session", phase: "start", effect: "observe", requirement: "required"},
	})
	rep, err := Validate(src, Options{Providers: pinned})
	if err != nil {
		t.Fatal(err)
	}
	caps := rep.Capabilities
	if !slices.Equal(caps.Providers, pinned) || len(caps.Rows) != 3 {
		t.Fatalf("providers %v, %d rows; want %v, 3", caps.Providers, len(caps.Rows), pinned)
	}
	a, b, c := caps.Rows[0], caps.Rows[1], caps.Rows[2]
	if a.Hook != "a" || b.Hook != "b" || c.Hook != "c" {
		t.Fatalf("rows %s %s %s, want a b c", a.Hook, b.Hook, c.Hook)
	}
	if &a.Answers[0] != &b.Answers[0] {
		t.Error("hooks a and b ask the same question, and hold answers of their own")
	}
	if &a.Answers[0] == &c.Answers[0] {
		t.Error("hooks a and c ask different questions, and share answers")
	}
	got, err := json.Marshal(caps)
	if err != nil {
		t.Fatal(err)
	}
	byProvider := map[string][]HookCapability{}
	for _, p := range caps.Providers {
		byProvider[p] = caps.Of(p)
	}
	want, _ := json.Marshal(byProvider)
	if string(got) != string(want) {
		t.Errorf("JSON:\n%s\nwant:\n%s", got, want)
	}
	if !strings.Contains(string(got), `"claude@2.1.233":[{"package":"p","hook":"a","requirement":"required","status":"supported","native_event":"PreToolUse"}`) {
		t.Errorf("JSON does not list claude's answer for hook a first: %s", got)
	}
	if got, ok := caps.Lookup("p", "c", "codex@0.147.0"); !ok || got != caps.Of("codex@0.147.0")[2] {
		t.Errorf("Lookup of hook c on codex: %+v, %t; want Of's third", got, ok)
	}
	if _, ok := caps.Lookup("p", "c", "gemini@0.61.0"); ok {
		t.Error("Lookup answers for a provider not selected")
	}
	if none, _ := json.Marshal(Capabilities{}); string(none) != "{}" {
		t.Errorf("no providers: %s, want {}", none)
	}
}

// gateHooks is n required tool-call gates, gate-0 on, the matcher of
// each matcher(i).
func gateHooks(n int, matcher func(i int) string) []hookTOML {
	var hs []hookTOML
	for i := range n {
		hs = append(hs, hookTOML{
			id: "gate-" + strconv.Itoa(i), subject: "tool_call", phase: "before", effect: "gate", requirement: "required",
			matcher: matcher(i),
		})
	}
	return hs
}

// Hooks name the same tools over and over: each name is looked up in the
// tables once a validation's worker, and a name no table knows has its
// hint ("did you mean") made once, however many hooks list it. Before,
// each of the hooks below listed all known names again and suggested a
// fix by measuring every name against every table's tools, some 9 s of a
// validation of 1,000 packages of forty such hooks.
func TestMatcherNamesLookedUpOnce(t *testing.T) {
	const hooks = 30
	src := writeHooks(t, gateHooks(hooks, func(i int) string {
		return `["Bash", "Edti", "Nope", "mcp__srv__x` + strconv.Itoa(i) + `"]`
	}))
	looked, hinted := toolNamesLooked.Load(), hintsMade.Load()
	rep, err := Validate(src, Options{Providers: pinned})
	if err != nil {
		t.Fatal(err)
	}
	looked, hinted = toolNamesLooked.Load()-looked, hintsMade.Load()-hinted
	// Bash, Edti, Nope and each hook's own MCP tool.
	if want := int64(3 + hooks); looked != want {
		t.Errorf("%d tool names looked up in the tables, want %d", looked, want)
	}
	if hinted != 2 {
		t.Errorf("%d hints made, want 2 (Edti and Nope)", hinted)
	}
	var edti, nope int
	for _, d := range rep.Diagnostics {
		switch {
		case strings.Contains(d.Message, "native tool Edti,") && strings.HasSuffix(d.Message, "; did you mean Edit?"):
			edti++
		case strings.Contains(d.Message, "native tool Nope,") && strings.HasSuffix(d.Message, "matches nothing on any harness dalo knows"):
			nope++
		}
	}
	if edti != hooks || nope != hooks {
		t.Errorf("%d warnings of Edti with its hint and %d of Nope, want %d each:\n%v", edti, nope, hooks, rep.Diagnostics)
	}
}

// TestMatcherPatternsSplitOnce: a pattern ("Edit|Write") that many hooks
// list is split, its parts looked up and written as TOML once a worker,
// not again for each hook and each hint that names it.
func TestMatcherPatternsSplitOnce(t *testing.T) {
	const hooks = 30
	src := writeHooks(t, gateHooks(hooks, func(int) string { return `["Edit|Write", "Bash", "Edit|Write"]` }))
	split := patternsSplit.Load()
	rep, err := Validate(src, Options{Providers: pinned})
	if err != nil {
		t.Fatal(err)
	}
	if split = patternsSplit.Load() - split; split != 1 {
		t.Errorf("Edit|Write split %d times, want once", split)
	}
	var first, other int
	for _, d := range rep.Diagnostics {
		switch {
		case d.Code != "W101" || !strings.Contains(d.Message, "native tool Edit|Write,"):
		case strings.HasSuffix(d.Field, ".tool_names[0]") && strings.HasSuffix(d.Message, `list each tool on its own, tool_names = ["Edit", "Write", "Bash", "Edit", "Write"]`):
			first++
		case strings.HasSuffix(d.Field, ".tool_names[2]") && strings.HasSuffix(d.Message, `list each tool on its own ("Edit", "Write") as `+strings.TrimSuffix(d.Field, "[2]")+"[0]'s hint writes the list"):
			other++
		default:
			t.Errorf("%s: %s", d.Field, d.Message)
		}
	}
	if first != hooks || other != hooks {
		t.Errorf("%d warnings writing the list and %d naming it, want %d each", first, other, hooks)
	}
}

// TestMatcherPatternsHintedOnce: a matcher of many names written as
// patterns ("Edit|Write") has one hint that writes the whole list with
// every pattern split, at its first pattern; each other pattern's hint
// names its own tools and that one. Each warning wrote the whole list
// again with only its own pattern split: twenty such names in a list of
// forty wrote some 12 KB a hook, 368 MB for 1,000 packages of twenty
// such hooks, 34x the floor's CPU.
func TestMatcherPatternsHintedOnce(t *testing.T) {
	var names []string
	for k := range 20 {
		names = append(names, `"Bash"`, `"Edit|Read`+strings.Repeat("|Write", k%2)+`"`)
	}
	src := writeHooks(t, []hookTOML{{
		id: "gate", subject: "tool_call", phase: "before", effect: "gate", requirement: "required",
		matcher: "[" + strings.Join(names, ", ") + "]",
	}})
	rep, err := Validate(src, Options{Providers: pinned})
	if err != nil {
		t.Fatal(err)
	}
	var split []string
	for range 10 {
		split = append(split, `"Bash", "Edit", "Read"`, `"Bash", "Edit", "Read", "Write"`)
	}
	whole := "list each tool on its own, tool_names = [" + strings.Join(split, ", ") + "]"
	var patterns, wholes, size int
	for _, d := range rep.Diagnostics {
		if d.Code != "W101" || !strings.Contains(d.Message, "not as a pattern") {
			continue
		}
		patterns++
		size += len(d.Message)
		switch {
		case d.Field == "hook[0].matcher.tool_names[1]":
			if !strings.HasSuffix(d.Message, whole) {
				t.Errorf("the first pattern's hint: %s\nwant it to end %s", d.Message, whole)
			}
			wholes++
		case strings.Contains(d.Message, "tool_names = "):
			t.Errorf("%s: the whole list written again: %s", d.Field, d.Message)
		case !strings.HasSuffix(d.Message, "; a name is matched whole, not as a pattern: list each tool on its own (\"Edit\", \"Read\") as hook[0].matcher.tool_names[1]'s hint writes the list") &&
			!strings.HasSuffix(d.Message, "; a name is matched whole, not as a pattern: list each tool on its own (\"Edit\", \"Read\", \"Write\") as hook[0].matcher.tool_names[1]'s hint writes the list"):
			t.Errorf("%s: %s", d.Field, d.Message)
		}
	}
	if patterns != 20 || wholes != 1 {
		t.Errorf("%d warnings of patterns, %d writing the whole list; want 20 and 1", patterns, wholes)
	}
	if size > 20*260+len(whole) {
		t.Errorf("the warnings of 20 patterns hold %d bytes, want at most %d", size, 20*260+len(whole))
	}
}

// A validation that writes no cache entry asks the providers about a
// package's hooks while its document is kept, and reads the positions of
// the fields it warns about from it: it indexes only the source-wide
// fields (plugin.id here), not every matcher name of every hook. Its
// findings are those of a validation through a cache, which indexes them
// all for the entry it writes.
func TestHookPositionsReadFromTheDocument(t *testing.T) {
	var hs []hookTOML
	for i := range 20 {
		hs = append(hs, hookTOML{
			id: "gate-" + strconv.Itoa(i), subject: "tool_call", phase: "before", effect: "gate", requirement: "required",
			matcher: `["Bash", "Nope", "Edti", "Write"]`,
		})
	}
	// Codex cuts SessionEnd hooks' timeouts (W102).
	hs = append(hs, hookTOML{id: "end", subject: "session", phase: "end", effect: "observe", requirement: "required", timeout: 5000})
	src := writeHooks(t, hs)
	before := positionsIndexed.Load()
	cold := reportJSON(t, src, Options{Providers: pinned})
	if n := positionsIndexed.Load() - before; n != 1 {
		t.Errorf("a validation without a cache indexed %d positions, want 1 (plugin.id)", n)
	}
	c := &memCache{m: map[string][]byte{}}
	if cached := reportJSON(t, src, Options{Providers: pinned, Cache: c}); cached != cold {
		t.Errorf("without a cache:\n%s\nwith one:\n%s", cold, cached)
	}
	if c.puts == 0 {
		t.Fatal("the validation through a cache wrote no entry")
	}
	if again := reportJSON(t, src, Options{Providers: pinned, Cache: c}); again != cold || c.hits == 0 {
		t.Errorf("from the cache (%d hits):\n%s\nwant:\n%s", c.hits, again, cold)
	}
	for _, want := range []string{`"line":29,"column":35,"field":"hook[0].matcher.tool_names[1]"`, `"field":"hook[20].timeout_ms"`} {
		if !strings.Contains(cold, want) {
			t.Errorf("no warning at %s: %s", want, cold)
		}
	}
}

// The provider findings of a package are each added once, looked up in an
// index, not compared with every finding before: a manifest of a
// megabyte can hold a thousand hooks of 256 names no table knows, whose
// quarter of a million warnings compared pairwise would take minutes.
func TestProviderFindingsIndexed(t *testing.T) {
	var names []string
	for i := range 50 {
		names = append(names, strconv.Quote(fmt.Sprintf("nope%d", i)))
	}
	var hs []hookTOML
	for i := range 100 {
		hs = append(hs, hookTOML{
			id: "gate-" + strconv.Itoa(i), subject: "tool_call", phase: "before", effect: "gate", requirement: "required",
			matcher: "[" + strings.Join(append([]string{`"Bash"`}, names...), ", ") + "]",
		})
	}
	src := writeHooks(t, hs)
	before := warningsCompared.Load()
	rep, err := Validate(src, Options{Providers: pinned})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(rep.Diagnostics); n != 100*50 {
		t.Errorf("%d findings, want %d", n, 100*50)
	}
	if n := warningsCompared.Load() - before; n != 0 {
		t.Errorf("the findings were compared with %d others one by one, want none", n)
	}
}

// Hooks whose matchers and bindings differ but which every table reads
// alike (each matches some of their tools, and each gives the fields
// they bind or leaves out the same ones) share their answers: the
// answers depend on the names and fields only through that.
func TestCapabilityAnswersSharedByWhatTablesRead(t *testing.T) {
	src := writeHooks(t, []hookTOML{
		{id: "a", subject: "tool_call", phase: "before", effect: "gate", requirement: "required", matcher: `["Bash", "Read"]`},
		{id: "b", subject: "tool_call", phase: "before", effect: "gate", requirement: "required", matcher: `["Write", "Bash", "mcp__s__t"]`},
		{id: "c", subject: "tool_call", phase: "before", effect: "gate", requirement: "required", matcher: `["Nope"]`},
	})
	rep, err := Validate(src, Options{Providers: pinned})
	if err != nil {
		t.Fatal(err)
	}
	rows := rep.Capabilities.Rows
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3", len(rows))
	}
	if &rows[0].Answers[0] != &rows[1].Answers[0] {
		t.Error("hooks a and b are read alike by every table, and hold answers of their own")
	}
	if &rows[0].Answers[0] == &rows[2].Answers[0] {
		t.Error("hook c matches nothing anywhere, and shares a's answers")
	}
}
