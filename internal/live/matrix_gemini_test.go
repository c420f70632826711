//go:build unix

package live

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"dalo/internal/fakemodel"
	"dalo/internal/scenario"
)

// The Gemini matrix: live tests that prove the claims of the Gemini CLI
// table (providers/gemini/0.61.0.cue) that the shared lifecycle tests
// (TestSession, TestToolCalls, TestPromptGate, TestFailClosedStop) do not:
// the payload fields, context on each event that takes it, every failure
// delivery, the native tool names, and a folder its user has not trusted.
// Each subtest installs a kit of its own, built from cmHook rows. Its
// fields_context, failures, file_tools, fail_closed, model_events and
// prompt_closed_model are scenarios (scenario.GeminiMatrixFiles), which
// dalo providers verify runs too.

const (
	gmID    = scenario.GeminiMatrixID
	gmPkg   = scenario.GeminiMatrixPkg
	gmFinal = scenario.GeminiMatrixFinal
)

// gmDiag is the first line of dalo's diagnostic for a failed hook of the
// Gemini matrix kit: what the user is shown.
var gmDiag = scenario.GeminiDiag

// gmCheckModel fails unless the model read the failure of h exactly when
// its visibility is model_and_user, and never a handler's stderr.
func (w *world) gmCheckModel(s session, h cmHook) {
	w.t.Helper()
	for _, b := range scenario.GeminiModelChannel(w.server, scenario.MatrixHook{ID: h.id, Policy: h.policy, Visibility: h.visibility}) {
		w.failf(s, "%s", b)
	}
}

// TestMatrixGemini runs Gemini CLI sessions that prove the table's claims
// beyond the shared lifecycle tests.
func TestMatrixGemini(t *testing.T) {
	t.Parallel()
	harness(t, "gemini")
	for _, c := range []struct{ name, scenario string }{
		{"fields_context", "gemini-fields-context"},
		{"failures", "gemini-failures"},
		{"file_tools", "gemini-file-tools"},
		{"fail_closed", "gemini-fail-closed"},
		{"model_events", "gemini-model-events"},
		{"prompt_closed_model", "gemini-prompt-closed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			play(t, "gemini", c.scenario)
		})
	}
	t.Run("native_tools", testMatrixGeminiTools)
	t.Run("untrusted_folder", testMatrixGeminiUntrusted)
	t.Run("redacted_env", testMatrixGeminiRedacted)
	t.Run("commented_settings", testMatrixGeminiComments)
	t.Run("context_file_name", testMatrixGeminiFileName)
}

// testMatrixGeminiTools runs a session whose model writes a file and reads
// one with Gemini CLI's own tools: a gate matching write_file denies the
// write, an observer matching read_file sees the read with its native
// name, and an observer of the shell tool, which the model never calls,
// never runs.
func testMatrixGeminiTools(t *testing.T) {
	t.Parallel()
	const deny, content = "GM-WRITE-DENY-7e02", "GM-READ-CONTENT-c51b"
	w := newWorldFor(t, "gemini", func(w *world) fakemodel.Script {
		return fakemodel.Script{
			{Tool: "write_file", Input: map[string]any{"file_path": filepath.Join(w.work, "gm-written.txt"), "content": "written"}},
			{Tool: "read_file", Input: map[string]any{"file_path": filepath.Join(w.work, "gm-read.txt")}},
			fakemodel.Say(gmFinal),
		}
	})
	w.writeFile(filepath.Join(w.work, "gm-read.txt"), content+"\n")
	hooks := []cmHook{
		{id: "write-gate", subject: "tool_call", phase: "before", effect: "gate", policy: "report", visibility: "user",
			tools: "write_file", fields: []string{"tool.name"}, result: `{"kind":"deny","reason":"` + deny + `"}`},
		{id: "read-observe", subject: "tool_call", phase: "after", effect: "observe", policy: "report", visibility: "user",
			tools: "read_file", fields: []string{"tool.name"}, result: `{"kind":"observe"}`},
		{id: "shell-observe", subject: "tool_call", phase: "before", effect: "observe", policy: "report", visibility: "user",
			tools: "run_shell_command", result: `{"kind":"observe"}`},
	}
	w.installSource(gmID, gmPkg, matrixFiles(gmPkg, "Probes of the Gemini CLI table's claims.", hooks))
	s := w.run("Write one file and read another.")
	if w.exists("gm-written.txt") || !w.server.Contains(deny) {
		w.failf(s, "write_file gate: the file was written = %v, the reason reached the model = %v; want false, true",
			w.exists("gm-written.txt"), w.server.Contains(deny))
	}
	if runs := w.cmRuns("write-gate"); len(runs) != 1 || len(runs[0]) != 1 || runs[0][0] != "write_file" {
		w.failf(s, "write_file gate runs %q, want one with tool.name write_file", runs)
	}
	if runs := w.cmRuns("read-observe"); len(runs) != 1 || len(runs[0]) != 1 || runs[0][0] != "read_file" {
		w.failf(s, "read_file observer runs %q, want one with tool.name read_file", runs)
	}
	if !w.server.Contains(content) {
		w.failf(s, "read_file: the file's content did not reach the model")
	}
	if runs := w.cmRuns("shell-observe"); len(runs) != 0 {
		w.failf(s, "the shell observer ran %d times, and the model called no shell", len(runs))
	}
}

// testMatrixGeminiUntrusted installs the gate and runs Gemini CLI headless
// in a project folder its user has not trusted: it exits before any model
// request, so nothing the gate guards can run ungated there.
func testMatrixGeminiUntrusted(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "gemini", fakemodel.Script{fakemodel.Run("touch gated-ran"), fakemodel.Say("Done.")})
	if err := os.Remove(filepath.Join(w.configHome(), "trustedFolders.json")); err != nil {
		t.Fatal(err)
	}
	w.installGate()
	s, err := w.runExit("Run the command you are given.")
	t.Logf("gemini exit: %v", err)
	if err == nil || len(natTurns(w.server)) != 0 || w.exists("gated-ran") {
		w.failf(s, "untrusted folder: exit %v, model turns %d, the command ran %v; want a failure, 0, false",
			err, len(natTurns(w.server)), w.exists("gated-ran"))
	}
}

// testMatrixGeminiRedacted installs the gate and runs Gemini CLI with its
// strictest environment redaction, as in a GitHub Actions job (GITHUB_SHA
// set) with security.environmentVariableRedaction on: hooks then get only
// the few variables Gemini CLI always allows (PATH, HOME, ...). dalo's
// entries name the store on their command line, so the gate stays in
// force: the gated command does not run and the reason reaches the model.
// A hook of the user's own shows what was redacted.
func testMatrixGeminiRedacted(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "gemini", fakemodel.Script{fakemodel.Run("touch gated-ran"), fakemodel.Say("Done.")})
	w.installGate()
	settings := w.settings()
	settings["security"].(map[string]any)["environmentVariableRedaction"] = map[string]any{"enabled": true}
	// A hook of the user's own records the environment hooks get.
	envFile := filepath.Join(w.out, "hook.env")
	hooks := settings["hooks"].(map[string]any)
	hooks["BeforeTool"] = append(hooks["BeforeTool"].([]any), map[string]any{"matcher": "*", "hooks": []any{
		map[string]any{"type": "command", "command": "env > " + envFile, "timeout": 10000}}})
	w.writeJSON(w.hooksFile(), settings)
	w.Env = append(w.Env, "GITHUB_SHA=0123456789abcdef0123456789abcdef01234567", "DALO_HOME="+w.store)
	s := w.run("Run the command you are given.")
	env, err := os.ReadFile(envFile)
	if err != nil || strings.Contains(string(env), "DALO_HOME=") || !strings.Contains(string(env), "PATH=") {
		w.failf(s, "the user's hook: environment %q (%v), want PATH and no DALO_HOME: redaction on", env, err)
	}
	if w.exists("gated-ran") || !w.server.Contains(markGate) {
		w.failf(s, "redacted environment: the gated command ran = %v, the gate's reason reached the model = %v; want false, true",
			w.exists("gated-ran"), w.server.Contains(markGate))
	}
}

// testMatrixGeminiComments installs the gate into the user's settings.json
// holding comments, which Gemini CLI reads (it strips them first): every
// comment stays, Gemini CLI runs the gate, and doctor, reading the file
// as Gemini CLI does, says it is in force, and that it is not once a
// commented hooksConfig switches hooks off.
func testMatrixGeminiComments(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "gemini", fakemodel.Script{fakemodel.Run("touch gated-ran"), fakemodel.Say("Done.")})
	file := w.hooksFile()
	const mine = "// My Gemini CLI settings.\n{\n  /* how I sign in */ \"security\": {\"auth\": {\"selectedType\": \"gemini-api-key\"}}, // the key is in the environment\n  \"hooks\": {\n    // mine come later\n  }\n}\n"
	w.writeFile(file, mine)
	w.installGate()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"// My Gemini CLI settings.\n", "/* how I sign in */", "// the key is in the environment\n", "// mine come later\n"} {
		if !strings.Contains(string(b), c) {
			t.Errorf("install lost the comment %q:\n%s", c, b)
		}
	}
	if out := w.dalo("doctor"); !regexp.MustCompile(`(?m)^in force +gemini ` + gateSource + `:` + gateKit + `/gate on BeforeTool: required$`).MatchString(out) {
		t.Errorf("doctor does not say the gate is in force:\n%s", out)
	}
	s := w.run("Run the command you are given.")
	if w.exists("gated-ran") || !w.server.Contains(markGate) {
		w.failf(s, "commented settings: the gated command ran = %v, the gate's reason reached the model = %v; want false, true",
			w.exists("gated-ran"), w.server.Contains(markGate))
	}
	w.writeFile(file, strings.Replace(string(b), "{\n", "{\n  // off for now\n  \"hooksConfig\": {\"enabled\": false},\n", 1))
	if out, code := w.daloExit("doctor"); code != 1 || !strings.Contains(out, "sets hooksConfig.enabled to false") {
		t.Errorf("doctor with a commented settings file switching hooks off: exit %d, want 1 saying so:\n%s", code, out)
	}
}

// testMatrixGeminiFileName installs the live kit, whose instruction dalo
// enables in GEMINI.md, and then names another instruction file in the
// user's settings (context.fileName), as a user who keeps AGENTS.md would.
// Gemini CLI 0.61.0 adds the names it is given to GEMINI.md rather than
// replacing it: the instruction still reaches the model, and doctor has
// nothing to say of it.
func testMatrixGeminiFileName(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "gemini", fakemodel.Script{fakemodel.Say("Nothing to run.")})
	w.install()
	settings := w.settings()
	settings["context"] = map[string]any{"fileName": []any{"AGENTS.md"}}
	w.writeJSON(w.hooksFile(), settings)
	if out, code := w.daloExit("doctor"); code != 0 {
		t.Errorf("doctor with context.fileName AGENTS.md: exit %d, want 0:\n%s", code, out)
	}
	s := w.run("Say something short.")
	if !w.server.Contains(markInstruction) || !w.server.Contains(markSkill) {
		w.failf(s, "context.fileName AGENTS.md: the instruction in GEMINI.md reached the model = %v, the skill = %v; want true, true",
			w.server.Contains(markInstruction), w.server.Contains(markSkill))
	}
}

// gmOffered lists the tools Gemini CLI offered the model.
var gmOffered = scenario.GeminiOffered
