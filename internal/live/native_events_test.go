//go:build unix

package live

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"dalo/internal/fakemodel"
	"dalo/internal/scenario"
	provtables "dalo/providers"
)

// What a harness version offers hooks beyond the rows of the draft's
// combination table: its native events, and what a few of them do. Each
// table lists what no row reaches under unmapped, with the reason a package
// author reads; these tests prove those reasons on the version under test,
// and skip where the table under test lists no such thing.

// tableUnder returns the table of harness name this run proves.
func tableUnder(t *testing.T, name string) *provtables.Table {
	t.Helper()
	harness(t, name)
	ts, err := provtables.Load()
	if err != nil {
		t.Fatal(err)
	}
	tg := targets[name]
	tb, ok := ts.Lookup(tg.name, tg.version)
	if !ok {
		t.Fatalf("no table %s", tg.key)
	}
	return tb
}

// unmapped skips t unless the table of harness name under test lists event
// (or output) what as unmapped.
func unmappedOrSkip(t *testing.T, name, kind, what string) *provtables.Table {
	t.Helper()
	tb := tableUnder(t, name)
	list := tb.Unmapped.Events
	if kind == "outputs" {
		list = tb.Unmapped.Outputs
	}
	if _, ok := list[what]; !ok {
		t.Skipf("%s lists no unmapped %s %s", tb.Key(), kind, what)
	}
	return tb
}

// eventOrSkip skips the test unless the table under test of harness name
// knows the native event: one its rows use, or one it lists as unmapped.
func eventOrSkip(t *testing.T, name, event string) *provtables.Table {
	t.Helper()
	tb := tableUnder(t, name)
	_, used := tb.Events[event]
	_, listed := tb.Unmapped.Events[event]
	if !used && !listed {
		t.Skipf("%s has no native event %s", tb.Key(), event)
	}
	return tb
}

// listed are the harnesses whose hook events NativeEvents lists as their
// configuration spells them. GitHub Copilot CLI's schema spells agentStop
// and userPromptSubmitted where its settings.json takes Claude Code's Stop
// and UserPromptSubmit too (finding 62), so it is not one of them.
var listed = []string{"claude", "codex", "qwen"}

// TestNativeEvents asks the harness for the hook events it accepts
// (NativeEvents: Claude Code's doctor, Codex's app-server schema, Qwen
// Code's hook reference): every event the
// table under test uses, and every one it lists as unmapped, is one of
// them. The list is logged, so that a new event shows. On Claude Code and
// Codex it is the scenario "native-events" (the unmapped events, which the
// claims citing it are), and the events used beside it.
func TestNativeEvents(t *testing.T) {
	t.Parallel()
	needs(t, listed...)
	for _, p := range listed {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			if scenario.Lookup("native-events").For(p) {
				play(t, p, "native-events")
				// The events the table uses, which the scenario only
				// logs: each is also one the harness accepts.
				events, err := scenario.NativeEvents(p, harness(t, p), os.Getenv("XDG_CACHE_HOME"))
				if err != nil {
					t.Fatal(err)
				}
				if used, _ := scenario.UnknownEvents(tableUnder(t, p), events, false); used != nil {
					t.Errorf("%s names native events the harness does not accept: %s", targets[p].key, strings.Join(used, ", "))
				}
				return
			}
			tb := tableUnder(t, p)
			events, err := scenario.NativeEvents(p, harness(t, p), os.Getenv("XDG_CACHE_HOME"))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %d native events: %s", tb.Key(), len(events), strings.Join(events, " "))
			unknown, both := scenario.UnknownEvents(tb, events, false)
			if both != nil {
				t.Errorf("%s: %s both used (events) and listed as unmapped", tb.Key(), strings.Join(both, ", "))
			}
			if unknown != nil {
				t.Errorf("%s names native events the harness does not accept: %s", tb.Key(), strings.Join(unknown, ", "))
			}
		})
	}
}

// TestNativeEventsUnmapped asks GitHub Copilot CLI, which TestNativeEvents
// leaves out, for the hook events its schema lists: every event its table
// lists as unmapped is one of them (the scenario native-events-unmapped).
func TestNativeEventsUnmapped(t *testing.T) {
	t.Parallel()
	needs(t, "copilot")
	for _, p := range []string{"copilot"} {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			play(t, p, "native-events-unmapped")
		})
	}
}

// TestNativeCodexInterrupt interrupts a turn of a Codex app-server session
// while its command runs (turn/interrupt, what Esc does in the TUI), with
// hooks configured by hand on Interrupt, Stop, PreToolUse, PostToolUse and
// SessionEnd: Codex fires Interrupt, with the session, the turn and no
// tool or prompt in its payload, and shows its systemMessage to the user as
// a warning of that hook run; it fires no Stop for the interrupted turn
// and no PostToolUse for the interrupted command, which never ends. The
// next turn ends with a Stop as usual. So no workflow/stop hook runs for an
// interrupted turn, and no row of the draft is the Interrupt event.
func TestNativeCodexInterrupt(t *testing.T) {
	t.Parallel()
	unmappedOrSkip(t, "codex", "events", "Interrupt")
	w := newWorld(t, "codex", fakemodel.Script{fakemodel.Run("sleep 20; touch " + natRanFile), fakemodel.Say(natFinal)})
	w.natConfigureEvents(3, "Interrupt", "Stop", "PreToolUse", "PostToolUse", "SessionEnd")
	w.natAnswer("Interrupt", `{"systemMessage":"`+natText+`"}`, "", 0)
	th := asExec
	th.interrupt = true
	a := w.appServerWith(th, "Run the command, nat-interrupt.", "Now answer, nat-after-interrupt.")

	interrupts, stops := w.natPayloads("Interrupt"), w.natPayloads("Stop")
	pres := w.natPayloads("PreToolUse")
	if len(interrupts) != 1 || len(pres) != 1 {
		w.failApp(a, "Interrupt ran %d times, PreToolUse %d; want once each", len(interrupts), len(pres))
		return
	}
	in := interrupts[0]
	if in["hook_event_name"] != "Interrupt" || in["turn_id"] != pres[0]["turn_id"] || in["session_id"] != pres[0]["session_id"] {
		w.failApp(a, "Interrupt payload %v: want the interrupted turn (%v) of the session (%v)", in, pres[0]["turn_id"], pres[0]["session_id"])
	}
	for _, k := range []string{"tool_name", "tool_input", "prompt"} {
		if _, ok := in[k]; ok {
			w.failApp(a, "Interrupt payload holds %s: %v", k, in)
		}
	}
	// No Stop for the interrupted turn: the one Stop is the next turn's.
	if len(stops) != 1 || stops[0]["turn_id"] == in["turn_id"] {
		w.failApp(a, "Stop payloads %v: want one, of the turn after the interrupted one", stops)
	}
	if w.output("PostToolUse.stdin") != "" || w.exists(natRanFile) {
		w.failApp(a, "the interrupted command: PostToolUse ran = %v, the command ended = %v; want false, false",
			w.output("PostToolUse.stdin") != "", w.exists(natRanFile))
	}
	runs := a.event("interrupt")
	if len(runs) != 1 {
		w.failApp(a, "interrupt hook runs %+v, want one", runs)
	} else if _, ok := runs[0].Entry("warning", natText); !ok {
		w.failApp(a, "the Interrupt hook's systemMessage was not shown the user as a warning: %+v", runs[0])
	}
	if w.server.Contains(natText) {
		w.failApp(a, "the Interrupt hook's systemMessage reached the model")
	}
}

// TestNativeCodexModelRequest configures hooks by hand on PreModelRequest
// and PostModelRequest in a codex exec session of one command and an
// answer: each fires once around each of the two model requests, with
// neither a tool nor a prompt in its payload (the request's kind, id and
// attempt, and after it the status and token usage). No row of the draft
// is a model request.
func TestNativeCodexModelRequest(t *testing.T) {
	t.Parallel()
	unmappedOrSkip(t, "codex", "events", "PreModelRequest")
	w := newWorld(t, "codex", natScript)
	w.natConfigureEvents(3, "PreModelRequest", "PostModelRequest", "Stop")
	s := w.run("Run the command, nat-model-request.")
	pre, post := w.natPayloads("PreModelRequest"), w.natPayloads("PostModelRequest")
	if turns := natTurns(w.server); len(turns) != 2 || len(pre) != 2 || len(post) != 2 {
		w.failf(s, "model requests %d, PreModelRequest ran %d times, PostModelRequest %d; want 2 each", len(turns), len(pre), len(post))
		return
	}
	for i := range pre {
		if pre[i]["request_id"] == nil || pre[i]["request_id"] != post[i]["request_id"] || post[i]["status"] != "completed" {
			w.failf(s, "request %d: PreModelRequest %v, PostModelRequest %v; want the same request_id, completed", i, pre[i], post[i])
		}
		for _, k := range []string{"tool_name", "prompt"} {
			if _, ok := pre[i][k]; ok {
				w.failf(s, "PreModelRequest payload holds %s: %v", k, pre[i])
			}
		}
	}
	t.Logf("PreModelRequest payload: %v", pre[0])
}

// TestNativeCodexMCPOutput runs a codex exec session whose model calls the
// tool of a user's MCP server, then the shell, with a hand-configured
// PostToolUse hook answering the output replacement Codex's output schema
// names for MCP tools, updatedMCPToolOutput, on the MCP call: Codex fires
// PostToolUse for the MCP tool (tool_name mcp__cmsrv__probe) and refuses
// the answer ("PostToolUse hook returned unsupported
// updatedMCPToolOutput", the run failed): the model reads the tool's real
// output. So output replacement stays unsupported on Codex, for MCP tools
// too.
func TestNativeCodexMCPOutput(t *testing.T) {
	t.Parallel()
	unmappedOrSkip(t, "codex", "outputs", "updatedMCPToolOutput")
	w := newWorld(t, "codex", fakemodel.Script{
		{Tool: "probe", Namespace: "mcp__cmsrv", Input: map[string]any{"text": "nat-mcp-call"}},
		fakemodel.Say(natFinal),
	})
	w.codexMCPServer()
	w.natConfigureEvents(3, "PostToolUse")
	w.natAnswer("PostToolUse", `{"hookSpecificOutput":{"hookEventName":"PostToolUse","updatedMCPToolOutput":{"content":[{"type":"text","text":"`+natText+`"}]}}}`, "", 0)
	a := w.appServer("Call the probe tool, nat-mcp-output.")
	posts := w.natPayloads("PostToolUse")
	if len(posts) != 1 || posts[0]["tool_name"] != "mcp__cmsrv__probe" {
		w.failApp(a, "PostToolUse payloads %v: want one, for mcp__cmsrv__probe", posts)
	}
	runs := a.event("postToolUse")
	if len(runs) != 1 || runs[0].Status != "failed" {
		w.failApp(a, "postToolUse hook runs %+v: want one, failed", runs)
	} else if text, ok := runs[0].Entry("error", "updatedMCPToolOutput"); !ok {
		w.failApp(a, "the failed run names no refusal of updatedMCPToolOutput: %+v", runs[0])
	} else {
		t.Logf("Codex: %s", text)
	}
	if got := toolOutput(w.server, callID("codex", 0)); !strings.Contains(got, cmMCPOut+" nat-mcp-call") || w.server.Contains(natText) {
		w.failApp(a, "the model read %q for the MCP call (replacement reached it: %v); want the tool's real output", got, w.server.Contains(natText))
	}
}

// natConfigureEvents writes the harness's own hook file with a natHookScript
// entry for each of events, with the timeout (seconds) and, where the event
// takes one, the matcher "*" (scenario World.NativeHooks).
func (w *world) natConfigureEvents(timeout int, events ...string) {
	w.t.Helper()
	if err := w.NativeHooks(timeout, events...); err != nil {
		w.t.Fatal(err)
	}
}

// codexMCPServer adds the user's MCP server cmsrv (cmMCPServer, a tool
// probe) to the world's Codex configuration. Codex offers its tools to the
// model as the functions of the namespace mcp__cmsrv, and names them to
// hooks mcp__cmsrv__<tool>.
func (w *world) codexMCPServer() {
	w.t.Helper()
	server := filepath.Join(w.root, "cm-mcp.mjs")
	w.writeFile(server, cmMCPServer)
	path := filepath.Join(w.home, ".codex", "config.toml")
	cfg, err := os.ReadFile(path)
	if err != nil {
		w.t.Fatal(err)
	}
	w.writeFile(path, string(cfg)+fmt.Sprintf("\n[mcp_servers.cmsrv]\ncommand = \"node\"\nargs = [%q]\n", server))
}

// toolOutput returns the output of the function call id as the model read
// it in the last Responses request that holds it, or "".
func toolOutput(srv *fakemodel.Server, id string) string {
	var found string
	for _, q := range srv.Requests() {
		items, _ := q.JSON["input"].([]any)
		for _, it := range items {
			it, _ := it.(map[string]any)
			if (it["type"] == "function_call_output" || it["type"] == "custom_tool_call_output") && it["call_id"] == id {
				b, _ := json.Marshal(it["output"])
				found = string(b)
			}
		}
	}
	return found
}

// TestNativeClaudeSkillShell runs a Claude session whose model loads a
// skill whose body holds an inline shell command (!`...`), with hooks
// configured by hand on PreToolUse, PostToolUse and PreSkillShellCommand:
// the command runs when the skill loads and its output reaches the model,
// and PreToolUse fires for the Skill call only, never for the command: a
// tool_call/before gate does not see a skill's shell command there. Claude
// Code 2.1.332 fires PreSkillShellCommand for it (tool_name Bash, the
// command as tool_input.command), where dalo installs its gates too
// (TestSkillShellGate). The scenario "skill-shell".
func TestNativeClaudeSkillShell(t *testing.T) {
	t.Parallel()
	harness(t, "claude")
	eventOrSkip(t, "claude", "PreSkillShellCommand")
	play(t, "claude", "skill-shell")
}

// TestNativeClaudeSkillShellDeny runs TestNativeClaudeSkillShell's skill
// with a hook configured by hand on PreSkillShellCommand that denies, in
// each of the two ways Claude Code reads a PreToolUse deny: exit 2 with the
// reason on stderr, and hookSpecificOutput.permissionDecision "deny". The
// skill's command does not run, its output never reaches the model, and
// the reason does. The scenario "skill-shell-deny".
func TestNativeClaudeSkillShellDeny(t *testing.T) {
	t.Parallel()
	harness(t, "claude")
	eventOrSkip(t, "claude", "PreSkillShellCommand")
	play(t, "claude", "skill-shell-deny")
}

// TestSkillShellGate installs, through dalo, a package holding a skill
// whose inline shell command (!`...`) would create a file, and a
// fail_closed Bash gate that denies any command naming that file; the
// model loads the skill. On a table that maps PreSkillShellCommand (rows
// tool_call/before also), dalo's gate runs there, sees the command as tool
// Bash with tool_input.command, and denies it: the file never appears,
// the command's output never reaches the model, the gate's reason does.
// The scenario "skill-shell-gate".
func TestSkillShellGate(t *testing.T) {
	t.Parallel()
	needs(t, "claude")
	t.Run("claude", func(t *testing.T) {
		t.Parallel()
		tb := tableUnder(t, "claude")
		if len(tb.AlsoEvents("tool_call", "before", "gate")) == 0 {
			t.Skipf("%s installs tool_call/before gates on no event beside %s", tb.Key(), "PreToolUse")
		}
		play(t, "claude", "skill-shell-gate")
	})
}

// TestDeletedCwd installs a kit whose after hook deletes the project dir,
// the session's working directory, after the model's first command, as a
// concurrent cleanup would (a worktree removed), and whose fail_closed gate
// denies any command naming cwd-after-delete; the model then runs such a
// command twice. Claude Code runs neither command ungated: it runs the
// gate, which denies both (2.1.332), or refuses the first command itself,
// recovering its shell's directory, and the gate denies the one the model
// re-issues (2.1.233). Codex starts no hook once the directory is gone
// (every hook run fails, Stop's included) and no shell command either.
func TestDeletedCwd(t *testing.T) {
	t.Parallel()
	needs(t, probed...)
	for _, p := range probed {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			after := "touch cwd-after-delete"
			w := newWorld(t, p, fakemodel.Script{fakemodel.Run("echo remove-cwd"), fakemodel.Run(after), fakemodel.Run(after + " # again"), fakemodel.Say(natFinal)})
			w.StreamJSON = p == "claude"
			k := kit{name: "cwd-kit", description: "A gate in a deleted working directory."}
			k.hooks = append(k.hooks,
				kitHook{id: "cwd-gate", subject: "tool_call", phase: "before", effect: "gate", policy: "fail_closed",
					tools: []string{"Bash"}, env: []string{"PATH", "LIVE_OUT"},
					handler: "#!/bin/sh\nin=$(cat)\necho ran >> \"$LIVE_OUT/gate.ran\"\n" +
						"case \"$in\" in *cwd-after-delete*) echo '{\"kind\":\"deny\",\"reason\":\"" + natText + "\"}'; exit 0 ;; esac\necho '{\"kind\":\"abstain\"}'\n"},
				kitHook{id: "cwd-remover", subject: "tool_call", phase: "after", effect: "observe", tools: []string{"Bash"}, env: []string{"PATH"},
					handler: "#!/bin/sh\nin=$(cat)\ncase \"$in\" in *remove-cwd*) rm -rf '" + w.work + "' ;; esac\necho '{\"kind\":\"observe\"}'\n"},
				kitHook{id: "cwd-stop", subject: "workflow", phase: "stop", effect: "observe", env: []string{"PATH", "LIVE_OUT"},
					handler: "#!/bin/sh\ncat >/dev/null\necho ran >> \"$LIVE_OUT/stop.ran\"\necho '{\"kind\":\"observe\"}'\n"})
			w.installSource("cwd", "cwd-kit", k.files())
			s := w.run("Run the commands you are given, cwd.")
			if _, err := os.Stat(w.work); !os.IsNotExist(err) {
				w.failf(s, "the project dir was not deleted after the first command (%v)", err)
				return
			}
			gate := strings.Count(w.output("gate.ran"), "ran")
			results := []string{w.toolText(1), w.toolText(2)}
			t.Logf("gate runs %d, stop runs %d, the model read %q", gate, strings.Count(w.output("stop.ran"), "ran"), results)
			// Neither command ran: touch in a deleted dir would have failed,
			// so the evidence is what the model read for each.
			switch p {
			case "claude":
				denied := 0
				for _, r := range results {
					if strings.Contains(r, natText) {
						denied++
					} else if !strings.Contains(r, "was deleted") {
						w.failf(s, "a command after the deletion: the model read %q, want the gate's deny or Claude's recovery", r)
					}
				}
				if denied == 0 || gate != 1+denied || strings.Count(w.output("stop.ran"), "ran") != 1 {
					w.failf(s, "gate runs %d, denials %d, stop runs %q: want the gate to run on every command Claude ran, and Stop once", gate, denied, w.output("stop.ran"))
				}
			case "codex":
				for _, r := range results {
					if !strings.Contains(r, "No such file or directory") {
						w.failf(s, "a command after the deletion: the model read %q, want Codex unable to start it", r)
					}
				}
				if gate != 1 || w.output("stop.ran") != "" || w.server.Contains(natText) {
					w.failf(s, "gate runs %d, stop runs %q: want the gate on the first command only, no Stop hook", gate, w.output("stop.ran"))
				}
				if strings.Count(s.stderr, "hook: PreToolUse Failed") != 2 || !strings.Contains(s.stderr, "hook: Stop Failed") {
					w.failf(s, "codex did not report the PreToolUse hooks after the deletion and the Stop hook as failed")
				}
			}
		})
	}
}

// toolText returns what the model read as the result of its n-th tool call.
func (w *world) toolText(n int) string {
	if w.provider == "claude" {
		return toolResult(w.server, callID("claude", n))
	}
	return toolOutput(w.server, callID("codex", n))
}

// TestNativeCodexHookTimeout answers a reported regression (Codex 0.148
// and later: hooks that time out before their command body runs) on the
// version under test: hand-configured PreToolUse hooks with Codex's
// shortest timeout (1 s) run their command body at once, one whose body
// ends within the second answers (its deny blocks the command), and one
// that sleeps past it is cut (its body began, never ended, and the command
// runs: a timed-out hook is a failed one).
func TestNativeCodexHookTimeout(t *testing.T) {
	t.Parallel()
	harness(t, "codex")
	for _, c := range []struct {
		name, body string
		denied     bool
	}{
		{"answers", `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"` + natText + `"}}'`, true},
		{"cut", `sleep 3; echo end > "$o.end"`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t, "codex", natScript)
			script := filepath.Join(w.root, "timeout-hook.sh")
			w.writeFile(script, "o=\"$1/hook\"\ncat > /dev/null\necho begin > \"$o.begin\"\n"+c.body+"\n")
			b, _ := json.Marshal(map[string]any{"hooks": map[string]any{"PreToolUse": []any{map[string]any{"matcher": "*",
				"hooks": []any{map[string]any{"type": "command", "command": "sh " + script + " " + w.out, "timeout": 1}}}}}})
			w.writeFile(filepath.Join(w.home, ".codex", "hooks.json"), string(b))
			s := w.run("Run the command, nat-timeout.")
			if w.output("hook.begin") == "" {
				w.failf(s, "the hook's command body never ran")
			}
			if w.exists(natRanFile) == c.denied || w.server.Contains(natText) != c.denied {
				w.failf(s, "command ran = %v, the deny reached the model = %v; want %v, %v", w.exists(natRanFile), w.server.Contains(natText), !c.denied, c.denied)
			}
			if c.name == "cut" {
				time.Sleep(3 * time.Second)
				if w.output("hook.end") != "" {
					w.failf(s, "the hook ran past its 1 s timeout to its end")
				}
			}
		})
	}
}
