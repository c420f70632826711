package fakemodel

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// The recording driver runs the real harnesses against the fake servers and
// stores the native hook payloads they send under
// providers/testdata/recordings/<name>/<version>. It needs the harnesses
// installed, so it runs only on request, for the versions DALO_RECORD
// names (name@version, separated by spaces or commas; one per harness):
//
//	DALO_RECORD=claude@2.1.233,codex@0.147.0 DALO_HARNESS_DIR=$(.ci/harnesses) go test -run Record -v ./internal/fakemodel/
//
// .ci/harnesses installs the exact harness versions outside the module,
// each in <DALO_HARNESS_DIR>/<name>@<version>, and prints where. The probe
// (internal/live/probe) records a version it adds this way.
//
// Besides the recordings, the driver checks the harness behaviours the
// provider tables rely on and logs each finding as "FINDING: ...".

const recordSkipMsg = "recording runs the real harnesses; set DALO_RECORD=<name>@<version>,... and " +
	"DALO_HARNESS_DIR=<folder holding <name>@<version>/node_modules/.bin/<name>> to enable it"

// recordingsDir is where payloads are stored, relative to this package.
const recordingsDir = "../../providers/testdata/recordings"

var claudeEvents = []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse",
	"PostToolUseFailure", "Stop", "SessionEnd"}

var codexEvents = []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse",
	"Stop", "SessionEnd"}

// copilotEvents and qwenEvents are the events their tables use: Qwen
// Code fires no SessionEnd headless.
var copilotEvents = []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SessionEnd"}

var qwenEvents = []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop"}

var geminiEvents = []string{"SessionStart", "BeforeAgent", "BeforeTool", "AfterTool", "AfterAgent", "SessionEnd"}

// toolEvents take a matcher; the other events have none.
var toolEvents = map[string]bool{"PreToolUse": true, "PostToolUse": true, "PostToolUseFailure": true, "BeforeTool": true, "AfterTool": true}

// recordVersion returns the version of harness DALO_RECORD names, and
// skips the test when recording is off or names no version of harness.
func recordVersion(t *testing.T, harness string) string {
	t.Helper()
	if os.Getenv("DALO_HARNESS_DIR") == "" {
		t.Skip(recordSkipMsg)
	}
	for _, key := range strings.Fields(strings.ReplaceAll(os.Getenv("DALO_RECORD"), ",", " ")) {
		if name, version, ok := strings.Cut(key, "@"); ok && name == harness {
			return version
		}
	}
	t.Skip(recordSkipMsg)
	return ""
}

// harnessBin returns the binary of the version of harness DALO_RECORD
// names, skipping as recordVersion does.
func harnessBin(t *testing.T, harness string) string {
	t.Helper()
	version := recordVersion(t, harness)
	return filepath.Join(os.Getenv("DALO_HARNESS_DIR"), harness+"@"+version, "node_modules", ".bin", harness)
}

// A run is one headless harness session in fresh temp dirs.
type run struct {
	t       *testing.T
	harness string // the provider's name
	version string // the harness's version, which DALO_RECORD names
	bin     string
	root    string // temp root
	home    string // $HOME
	work    string // project dir, the harness's cwd
	out     string // hook payloads, <Event>.<n>.json
	resp    string // hook answers, <Event>.<n> or <Event>
	cfg     string // where settings.json / hooks.json go
	env     []string
	args    []string
	server  *Server
	stdout  string
	stderr  string
}

func newRun(t *testing.T, harness string, script Script) *run {
	t.Helper()
	bin := harnessBin(t, harness)
	root := t.TempDir()
	r := &run{
		t: t, harness: harness, version: recordVersion(t, harness),
		bin:  bin,
		root: root, home: filepath.Join(root, "home"), work: filepath.Join(root, "work"),
		out: filepath.Join(root, "out"), resp: filepath.Join(root, "resp"),
	}
	for _, d := range []string{r.home, r.work, r.out, r.resp} {
		must(t, os.MkdirAll(d, 0o755))
	}
	r.env = []string{"HOME=" + r.home, "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8"}
	if harness == "claude" {
		r.server = NewAnthropic(script)
		r.cfg = filepath.Join(r.home, ".claude")
		r.env = append(r.env,
			"ANTHROPIC_BASE_URL="+r.server.URL,
			"ANTHROPIC_API_KEY=sk-ant-fake",
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
			"DISABLE_AUTOUPDATER=1")
		r.args = []string{"-p", "PROMPT", "--allowedTools", "Bash", "--output-format", "json"}
	} else if harness == "gemini" {
		r.server = NewGemini(script)
		r.cfg = filepath.Join(r.home, ".gemini")
		r.env = append(r.env, "GEMINI_API_KEY=fake-gemini-key", "GOOGLE_GEMINI_BASE_URL="+r.server.URL)
		// Headless, the shell tool is offered in yolo mode only; the
		// project folder is trusted as the user's trust dialog records it.
		r.args = []string{"-p", "PROMPT", "--approval-mode", "yolo"}
		writeFile(t, filepath.Join(r.cfg, "trustedFolders.json"), fmt.Sprintf("{%q: \"TRUST_FOLDER\"}\n", r.work))
	} else if harness == "copilot" {
		// Offline, on the model named; its first start unpacks itself into
		// $XDG_CACHE_HOME/copilot, shared beside the harness.
		r.server = NewAnthropicShell(script, "bash")
		r.cfg = filepath.Join(r.home, ".copilot")
		r.env = append(r.env, "COPILOT_OFFLINE=true", "COPILOT_PROVIDER_TYPE=anthropic",
			"COPILOT_PROVIDER_BASE_URL="+r.server.URL, "COPILOT_PROVIDER_API_KEY=fake", "COPILOT_MODEL=claude-sonnet-4",
			"XDG_CACHE_HOME="+filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(bin))), "xdg-cache"))
		r.args = []string{"-p", "PROMPT", "--allow-all-tools", "--no-auto-update"}
	} else if harness == "qwen" {
		r.server = NewAnthropicShell(script, "run_shell_command")
		r.cfg = filepath.Join(r.home, ".qwen")
		r.env = append(r.env, "ANTHROPIC_BASE_URL="+r.server.URL, "ANTHROPIC_API_KEY=fake", "ANTHROPIC_MODEL=claude-sonnet-4")
		r.args = []string{"--auth-type", "anthropic", "--approval-mode", "yolo", "PROMPT"}
	} else {
		r.server = NewOpenAI(script)
		r.cfg = filepath.Join(r.home, ".codex")
		r.env = append(r.env, "CODEX_HOME="+r.cfg, "OPENAI_API_KEY=sk-fake")
		r.args = []string{"exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox",
			"--dangerously-bypass-hook-trust", "PROMPT"}
		must(t, os.MkdirAll(r.cfg, 0o755))
		writeFile(t, filepath.Join(r.cfg, "config.toml"), fmt.Sprintf(`model = "gpt-5"
model_provider = "fake"

[model_providers.fake]
name = "fake"
base_url = "%s/v1"
wire_api = "responses"
`, r.server.URL))
	}
	t.Cleanup(r.server.Close)
	return r
}

// hooks installs the recording hook for events. The hook stores its stdin
// as out/<Event>.<n>.json and prints resp/<Event>.<n>, else resp/<Event>,
// if present: that is how a run scripts native hook outputs.
func (r *run) hooks(events []string) {
	script := filepath.Join(r.root, "hook.sh")
	writeFile(r.t, script, fmt.Sprintf(`#!/bin/sh
ev="$1"; out=%q; resp=%q
n=1; while [ -e "$out/$ev.$n.json" ]; do n=$((n+1)); done
cat > "$out/$ev.$n.json"
if [ -f "$resp/$ev.$n" ]; then cat "$resp/$ev.$n"; elif [ -f "$resp/$ev" ]; then cat "$resp/$ev"; fi
exit 0
`, r.out, r.resp))
	must(r.t, os.Chmod(script, 0o755))
	hooks := map[string]any{}
	for _, ev := range events {
		group := map[string]any{"hooks": []any{map[string]any{
			"type": "command", "command": script + " " + ev, "timeout": 10,
		}}}
		if toolEvents[ev] {
			group["matcher"] = "*"
		}
		hooks[ev] = []any{group}
	}
	doc := map[string]any{"hooks": hooks}
	name := "settings.json"
	switch r.harness {
	case "codex":
		name = "hooks.json"
	case "gemini":
		// Gemini CLI's timeout is in milliseconds; its settings also hold
		// the API key's auth type.
		for _, g := range hooks {
			g.([]any)[0].(map[string]any)["hooks"].([]any)[0].(map[string]any)["timeout"] = 10000
		}
		doc["security"] = map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}}
	}
	b, _ := json.MarshalIndent(doc, "", "  ")
	must(r.t, os.MkdirAll(r.cfg, 0o755))
	writeFile(r.t, filepath.Join(r.cfg, name), string(b))
}

// answer makes the hook for event print v (marshalled unless a string).
// key is "<Event>" for every firing or "<Event>.<n>" for the n-th.
func (r *run) answer(key string, v any) {
	s, ok := v.(string)
	if !ok {
		b, _ := json.Marshal(v)
		s = string(b)
	}
	writeFile(r.t, filepath.Join(r.resp, key), s)
}

// exec runs the harness with prompt and waits for it.
func (r *run) exec(prompt string) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	args := append([]string(nil), r.args...)
	for i, a := range args {
		if a == "PROMPT" {
			args[i] = prompt
		}
	}
	cmd := exec.CommandContext(ctx, r.bin, args...)
	cmd.Dir = r.work
	cmd.Env = r.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run() // stdin is /dev/null: codex waits for more input otherwise
	r.stdout, r.stderr = stdout.String(), stderr.String()
	if d := os.Getenv("DALO_RECORD_DUMP"); d != "" {
		// Raw model requests, for reading what the harness sent by eye.
		for i, q := range r.server.Requests() {
			name := fmt.Sprintf("%s-%s-%02d.json", strings.ReplaceAll(r.t.Name(), "/", "_"), r.harness, i)
			writeFile(r.t, filepath.Join(d, name), string(q.Raw))
		}
	}
	var reqs []string
	for _, q := range r.server.Requests() {
		reqs = append(reqs, q.Method+" "+q.Path)
	}
	r.t.Logf("%s %q: err=%v, requests %v\nstdout: %s\nstderr: %s",
		r.harness, prompt, err, reqs, clip(r.stdout), clip(r.stderr))
}

func clip(s string) string {
	if len(s) > 1500 {
		return s[:1500] + "...[clipped]"
	}
	return s
}

// payloads returns the recorded payloads: event -> list in firing order.
func (r *run) payloads() map[string][][]byte {
	m := map[string][][]byte{}
	files, _ := filepath.Glob(filepath.Join(r.out, "*.json"))
	sort.Strings(files)
	for _, f := range files {
		base := strings.TrimSuffix(filepath.Base(f), ".json")
		ev, _, _ := strings.Cut(base, ".")
		b, err := os.ReadFile(f)
		must(r.t, err)
		m[ev] = append(m[ev], b)
	}
	// Glob order puts .10 before .2; firing order is what callers want.
	for ev, list := range m {
		ordered := make([][]byte, len(list))
		for i := range list {
			b, err := os.ReadFile(filepath.Join(r.out, fmt.Sprintf("%s.%d.json", ev, i+1)))
			must(r.t, err)
			ordered[i] = b
		}
		m[ev] = ordered
	}
	return m
}

func (r *run) fired() []string {
	var evs []string
	for ev, list := range r.payloads() {
		evs = append(evs, fmt.Sprintf("%s×%d", ev, len(list)))
	}
	sort.Strings(evs)
	return evs
}

func (r *run) exists(name string) bool {
	_, err := os.Stat(filepath.Join(r.work, name))
	return err == nil
}

var uuidRE = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)

// scrub replaces what differs between runs in a payload (temp dirs, ids,
// timestamps in file names) by fixed values of the same type and shape,
// keeping the harness's field order, and indents it.
func (r *run) scrub(raw []byte) []byte {
	r.t.Helper()
	var m map[string]any
	must(r.t, json.Unmarshal(raw, &m))
	s := string(raw)
	dash := func(p string) string { return strings.NewReplacer("/", "-", ".", "-", "_", "-").Replace(p) }
	// home and work before root, which contains both.
	for _, p := range [][2]string{
		{r.home, "/tmp/home"}, {r.work, "/tmp/work"},
		{dash(r.home), dash("/tmp/home")}, {dash(r.work), dash("/tmp/work")},
		{r.root, "/tmp/root"},
	} {
		s = strings.ReplaceAll(s, p[0], p[1])
	}
	if id, ok := m["session_id"].(string); ok && id != "" {
		s = strings.ReplaceAll(s, id, "00000000-0000-0000-0000-000000000000")
	}
	for _, k := range []string{"turn_id", "prompt_id"} {
		id, ok := m[k].(string)
		if !ok || id == "" {
			continue
		}
		repl := "turn_0"
		if uuidRE.MatchString(id) {
			repl = "00000000-0000-0000-0000-000000000001"
		}
		s = strings.ReplaceAll(s, id, repl)
	}
	s = regexp.MustCompile(`toolu_fake_\d+`).ReplaceAllString(s, "toolu_0")
	s = regexp.MustCompile(`call_fake_\d+`).ReplaceAllString(s, "call_0")
	s = regexp.MustCompile(`\d{4}/\d{2}/\d{2}/rollout-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}`).
		ReplaceAllString(s, "2026/11/30/rollout-2026-11-30T00-00-00")
	// Gemini CLI: its transcript's name and each payload's timestamp.
	s = regexp.MustCompile(`session-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-[0-9a-f]{8}`).ReplaceAllString(s, "session-2026-12-01T00-00-00000000")
	s = regexp.MustCompile(`"timestamp": *"\d{4}-\d{2}-\d{2}T[0-9:.]+Z"`).ReplaceAllString(s, `"timestamp":"2026-12-01T00:00:00.000Z"`)
	s = regexp.MustCompile(`Process Group PGID: \d+`).ReplaceAllString(s, "Process Group PGID: 0")
	if left := uuidRE.FindAllString(s, -1); len(left) > 0 {
		for _, u := range left {
			if !strings.HasPrefix(u, "00000000-0000-0000-0000-") {
				r.t.Logf("scrub: replacing unknown id %s", u)
				s = strings.ReplaceAll(s, u, "00000000-0000-0000-0000-000000000009")
			}
		}
	}
	var out bytes.Buffer
	must(r.t, json.Indent(&out, []byte(s), "", "  "))
	out.WriteByte('\n')
	return out.Bytes()
}

func (r *run) store(dir, name string, raw []byte) {
	must(r.t, os.MkdirAll(dir, 0o755))
	writeFile(r.t, filepath.Join(dir, name), string(r.scrub(raw)))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(path), 0o755))
	must(t, os.WriteFile(path, []byte(content), 0o644))
}

func finding(t *testing.T, format string, args ...any) {
	t.Helper()
	t.Logf("FINDING: "+format, args...)
}

// field returns a top-level string field of a raw payload.
func field(t *testing.T, raw []byte, key string) string {
	t.Helper()
	var m map[string]any
	must(t, json.Unmarshal(raw, &m))
	s, _ := m[key].(string)
	return s
}

// TestRecordingsWhole checks, without the harnesses, what the recording
// tests (TestRecord*, which need them and skip without) left for every
// recorded version: each event's payload, and the continued and exit 7
// variants, a JSON object naming its event, a turn's first stop not
// continued and the continued one continued, its session id scrubbed, no
// path of the machine that recorded it.
func TestRecordingsWhole(t *testing.T) {
	for _, h := range []struct {
		name   string
		events []string
		stop   string   // the event continued, with stop_hook_active
		extra  []string // variants: file name prefix before .json
	}{
		{"claude", claudeEvents, "Stop", nil},
		{"codex", codexEvents, "Stop", []string{"PostToolUse.exit7"}},
		{"gemini", geminiEvents, "AfterAgent", []string{"AfterTool.exit7"}},
		{"copilot", copilotEvents, "Stop", nil},
		{"qwen", qwenEvents, "Stop", nil},
	} {
		versions, err := os.ReadDir(filepath.Join(recordingsDir, h.name))
		if err != nil || len(versions) == 0 {
			t.Errorf("%s: no recorded version (%v)", h.name, err)
			continue
		}
		for _, v := range versions {
			dir := filepath.Join(recordingsDir, h.name, v.Name())
			files := append([]string{h.stop + ".continued"}, h.extra...)
			files = append(files, h.events...)
			for _, f := range files {
				data, err := os.ReadFile(filepath.Join(dir, f+".json"))
				if err != nil {
					t.Errorf("%s@%s: %v", h.name, v.Name(), err)
					continue
				}
				var m map[string]any
				if err := json.Unmarshal(data, &m); err != nil {
					t.Errorf("%s@%s %s: %v", h.name, v.Name(), f, err)
					continue
				}
				event, variant, _ := strings.Cut(f, ".")
				if m["hook_event_name"] != event {
					t.Errorf("%s@%s %s: hook_event_name %v, want %s", h.name, v.Name(), f, m["hook_event_name"], event)
				}
				if event == h.stop {
					if got, want := m["stop_hook_active"], variant == "continued"; got != want {
						t.Errorf("%s@%s %s: stop_hook_active %v, want %v", h.name, v.Name(), f, got, want)
					}
				}
				if id, _ := m["session_id"].(string); id != "00000000-0000-0000-0000-000000000000" {
					t.Errorf("%s@%s %s: session_id %q is not scrubbed", h.name, v.Name(), f, id)
				}
				for _, p := range regexp.MustCompile(`"(/[^"]*)"`).FindAllStringSubmatch(string(data), -1) {
					if !strings.HasPrefix(p[1], "/tmp/home") && !strings.HasPrefix(p[1], "/tmp/work") && !strings.HasPrefix(p[1], "/tmp/root") {
						t.Errorf("%s@%s %s: the path %s is the recording machine's", h.name, v.Name(), f, p[1])
					}
				}
			}
		}
	}
}
