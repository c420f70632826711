package dispatch_test

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"dalo/dispatch"
	"dalo/dispatch/dispatchtest"
	"dalo/plan"
)

// What a handler gets and what dispatch keeps of what it gives, at the
// edges: the environment of a tool that declares none, a start after an
// interrupt, a stdout exactly at its limit and one byte over, and the
// stderr excerpt the user reads.

// TestNoDeclaredEnvironment: a tool that declares no env gets an empty
// environment, not dalo's (exec.Cmd runs a nil Env with the parent's).
func TestNoDeclaredEnvironment(t *testing.T) {
	t.Setenv("DALO_TEST_UNDECLARED", "leak")
	out := filepath.Join(t.TempDir(), "env")
	// export -p and printf are built into sh: no PATH is needed.
	h := dispatchtest.Hook{ID: "probe", Subject: "tool_call", Phase: "before", Effect: "gate",
		Script: "#!/bin/sh\nexport -p > " + out + "\nprintf '{\"kind\":\"allow\"}'\n"}
	dispatchEvent(t, "claude", "PreToolUse", mustJSON(recorded(t, "claude", "PreToolUse")), []dispatchtest.Hook{h}, nil)
	env, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"DALO_TEST_UNDECLARED", "PATH", "HOME"} {
		if strings.Contains(string(env), name+"=") {
			t.Errorf("the handler got %s from dalo's environment:\n%s", name, env)
		}
	}
}

// TestNoStartAfterInterrupt: once dispatch is told to stop, no handler
// starts; the hook fails under its policy.
func TestNoStartAfterInterrupt(t *testing.T) {
	ran := filepath.Join(t.TempDir(), "ran")
	h := dispatchtest.Hook{ID: "gate", Subject: "tool_call", Phase: "before", Effect: "gate", Policy: "fail_closed",
		Script: "#!/bin/sh\n: > " + ran + "\nprintf '{\"kind\":\"allow\"}'\n"}
	defer dispatch.Interrupted()()
	n := decode(t, dispatchEvent(t, "claude", "PreToolUse", mustJSON(recorded(t, "claude", "PreToolUse")), []dispatchtest.Hook{h}, nil))
	if _, err := os.Stat(ran); err == nil {
		t.Error("a handler started after the interrupt")
	}
	if n.HookSpecificOutput.PermissionDecision != "deny" || !strings.Contains(n.SystemMessage, "dispatch was interrupted") {
		t.Errorf("answer %+v, want fail_closed's deny naming the interrupt", n)
	}
}

// TestResponseLimitExact: a result of exactly response_bytes is read; one
// byte more kills the handler. (Not parallel: it lowers the limits of the
// whole package.)
func TestResponseLimitExact(t *testing.T) {
	const limit = 64
	result := `{"kind":"deny","reason":"No."}`
	for _, size := range []int{limit, limit + 1} {
		h := dispatchtest.Hook{ID: "gate", Subject: "tool_call", Phase: "before", Effect: "gate",
			Script: fmt.Sprintf("#!/bin/sh\nprintf '%%s' '%s%s'\n", result, strings.Repeat(" ", size-len(result)))}
		lim := plan.DraftLimits
		lim.ResponseBytes = limit
		restore := dispatch.SetLimits(lim)
		n := decode(t, dispatchEvent(t, "claude", "PreToolUse", mustJSON(recorded(t, "claude", "PreToolUse")), []dispatchtest.Hook{h}, nil))
		restore()
		over := fmt.Sprintf("handler wrote more than %d bytes to stdout and was killed", limit)
		if size == limit && (n.HookSpecificOutput.PermissionDecision != "deny" || n.SystemMessage != "") {
			t.Errorf("%d bytes, the limit: %+v, want the handler's deny", size, n)
		}
		if size > limit && !strings.Contains(n.SystemMessage, over) {
			t.Errorf("%d bytes, one over the limit: systemMessage %q, want %q", size, n.SystemMessage, over)
		}
	}
}

// TestStderrExcerpt: the user reads at most 2 KiB of a failed handler's
// stderr (dalo's bound: enough for an error and its context, not a log),
// trimmed, valid UTF-8, without NUL characters, which would cut the text
// short wherever a C string carries it.
func TestStderrExcerpt(t *testing.T) {
	const excerpt = 2 << 10
	const mark = " …(truncated)"
	for _, c := range []struct{ name, script, want string }{
		{"nul", `printf '  before\000after\377  ' >&2`, "before" + "after\uFFFD"},
		{"long", `head -c 10000 /dev/zero | tr '\000' e >&2`, strings.Repeat("e", excerpt-len(mark)) + mark},
	} {
		h := dispatchtest.Hook{ID: "gate", Subject: "tool_call", Phase: "before", Effect: "gate", Env: []string{"PATH"},
			Script: "#!/bin/sh\n" + c.script + "\nexit 3\n"}
		n := decode(t, dispatchEvent(t, "claude", "PreToolUse", mustJSON(recorded(t, "claude", "PreToolUse")), []dispatchtest.Hook{h}, nil))
		_, got, ok := strings.Cut(n.SystemMessage, "\n  stderr: ")
		if !ok || got != c.want {
			t.Errorf("%s: systemMessage %.120q (%d bytes of stderr), want the stderr excerpt %.120q (%d bytes)", c.name, n.SystemMessage, len(got), c.want, len(c.want))
		}
	}
}

// TestPayloadAnySize: a handler gets the whole payload on stdin whatever
// its size, whether dispatch writes it before waiting (up to a pipe's
// page) or from a goroutine; and one that never reads stdin still answers,
// however large the payload.
func TestPayloadAnySize(t *testing.T) {
	base := recorded(t, "claude", "PreToolUse")
	for _, size := range []int{1 << 10, 4096, 4097, 200 << 10} {
		m := maps.Clone(base)
		m["pad"] = ""
		m["pad"] = strings.Repeat("p", size-len(mustJSON(m)))
		payload := mustJSON(m)
		if len(payload) != size {
			t.Fatalf("payload of %d bytes, want %d", len(payload), size)
		}
		for _, reads := range []bool{true, false} {
			script := "#!/bin/sh\nprintf '{\"kind\":\"deny\",\"reason\":\"%s\"}' \"$(wc -c | tr -d ' ')\"\n"
			if !reads {
				script = "#!/bin/sh\nprintf '{\"kind\":\"deny\",\"reason\":\"unread\"}'\n"
			}
			h := dispatchtest.Hook{ID: "gate", Subject: "tool_call", Phase: "before", Effect: "gate", Env: []string{"PATH"}, Script: script}
			n := decode(t, dispatchEvent(t, "claude", "PreToolUse", payload, []dispatchtest.Hook{h}, nil))
			want := "[test:pkg/gate] unread"
			if reads {
				want = "[test:pkg/gate] " + strconv.Itoa(size)
			}
			if n.HookSpecificOutput.PermissionDecisionReason != want {
				t.Errorf("%d bytes, handler reads stdin %t: reason %q (%s), want %q", size, reads, n.HookSpecificOutput.PermissionDecisionReason, n.SystemMessage, want)
			}
		}
	}
}

// TestStarting: Request.Starting, where the command arms its stop signals,
// is called once before the first handler starts, whatever the number of
// hooks, and not at all when no handler runs.
func TestStarting(t *testing.T) {
	dir := t.TempDir()
	mark := filepath.Join(dir, "started")
	// The handler answers with what it finds: whether Starting ran first.
	script := "#!/bin/sh\nif [ -e " + mark + " ]; then r=started; else r=not-started; fi\nprintf '{\"kind\":\"add_context\",\"context\":\"%s\"}' \"$r\"\n"
	hook := func(id string, names ...string) dispatchtest.Hook {
		return dispatchtest.Hook{ID: id, Subject: "tool_call", Phase: "before", Effect: "add_context", ToolNames: names, Script: script}
	}
	for _, c := range []struct {
		name   string
		hooks  []dispatchtest.Hook
		tool   string
		starts int
	}{
		{"one hook", []dispatchtest.Hook{hook("a")}, "Bash", 1},
		{"three hooks", []dispatchtest.Hook{hook("a"), hook("b"), hook("c")}, "Bash", 1},
		{"no hook for the tool", []dispatchtest.Hook{hook("a", "Edit")}, "Bash", 0},
		{"no hook", nil, "Bash", 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			os.Remove(mark)
			home := t.TempDir()
			if _, err := dispatchtest.Install(home, "claude", map[string][]dispatchtest.Hook{"PreToolUse": c.hooks}); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { writable(home) })
			m := recorded(t, "claude", "PreToolUse")
			m["tool_name"] = c.tool
			starts := 0
			out, err := dispatch.Dispatch(dispatch.Request{Home: home, Provider: "claude", Event: "PreToolUse", Payload: mustJSON(m), Getenv: getenv,
				Starting: func() {
					starts++
					if err := os.WriteFile(mark, nil, 0o644); err != nil {
						t.Error(err)
					}
				}})
			if err != nil {
				t.Fatal(err)
			}
			if starts != c.starts {
				t.Errorf("Starting called %d times, want %d", starts, c.starts)
			}
			if got := decode(t, out).HookSpecificOutput.AdditionalContext; strings.Contains(got, "not-started") {
				t.Errorf("a handler ran before Starting: %q", got)
			}
		})
	}
}

// TestGroupKilledAtExit: what a handler leaves running in its process
// group when it exits is killed then, not left to outlive the event.
func TestGroupKilledAtExit(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	h := dispatchtest.Hook{ID: "gate", Subject: "tool_call", Phase: "before", Effect: "gate", Env: []string{"PATH"},
		Script: "#!/bin/sh\nsleep 30 >/dev/null 2>&1 </dev/null &\necho $! > " + pidFile + "\nprintf '{\"kind\":\"allow\"}'\n"}
	dispatchEvent(t, "claude", "PreToolUse", mustJSON(recorded(t, "claude", "PreToolUse")), []dispatchtest.Hook{h}, nil)
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	waitGone(t, string(data), "outlived the handler")
}

// TestStderrReadToEnd: a handler writing more to stderr than a pipe holds
// (and than dispatch keeps) is never blocked: stderr is read to its end,
// and the handler's answer counts.
func TestStderrReadToEnd(t *testing.T) {
	h := dispatchtest.Hook{ID: "gate", Subject: "tool_call", Phase: "before", Effect: "gate", Env: []string{"PATH"}, TimeoutMS: 20000,
		Script: "#!/bin/sh\nhead -c 1048576 /dev/zero | tr '\\000' e >&2\nprintf '{\"kind\":\"deny\",\"reason\":\"Read.\"}'\n"}
	n := decode(t, dispatchEvent(t, "claude", "PreToolUse", mustJSON(recorded(t, "claude", "PreToolUse")), []dispatchtest.Hook{h}, nil))
	if n.HookSpecificOutput.PermissionDecision != "deny" || n.HookSpecificOutput.PermissionDecisionReason != "[test:pkg/gate] Read." {
		t.Errorf("%+v, want the handler's deny", n)
	}
}

// The portable wait, which a kernel without pidfds (and a system other
// than Linux) gets, keeps the same process contract as the polled one:
// the handler tests again, with it.
func TestPortableWait(t *testing.T) {
	defer dispatch.SetPortableWait()()
	for name, test := range map[string]func(*testing.T){
		"TimeoutKillsGroup":     TestTimeoutKillsGroup,
		"ProcessContract":       TestProcessContract,
		"StderrDrain":           TestStderrDrain,
		"StdoutHeldOpen":        TestStdoutHeldOpen,
		"ResponseLimitExact":    TestResponseLimitExact,
		"StderrExcerpt":         TestStderrExcerpt,
		"PayloadAnySize":        TestPayloadAnySize,
		"GroupKilledAtExit":     TestGroupKilledAtExit,
		"StderrReadToEnd":       TestStderrReadToEnd,
		"NoStartAfterInterrupt": TestNoStartAfterInterrupt,
		"Starting":              TestStarting,
	} {
		t.Run(name, test)
	}
}
