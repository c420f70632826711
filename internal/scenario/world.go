package scenario

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"dalo/internal/fakemodel"
)

// A Machine is what a scenario needs of the machine it runs on: a harness
// binary of one version, and dalo.
type Machine struct {
	// Harness is the provider name: claude, codex, gemini, copilot, qwen.
	Harness string
	// Bin is the harness binary. Its directory is put first on the
	// world's PATH, where a user has it.
	Bin string
	// Dalo is the dalo binary, with dalo-hook beside it as a release
	// ships them: the entries install writes call that dalo-hook.
	Dalo string
	// Table is the provider table install is given (--provider
	// name@version): the table a run proves. Without it, install is given
	// the bare name and finds the table of the harness's version itself
	// (a shipped table, or a local one verify wrote).
	Table string
	// Cache, when set, is the harness's XDG cache shared between runs
	// (GitHub Copilot CLI unpacks itself there on its first start).
	Cache string
}

// Bounds: a session normally takes a few seconds; a dalo command well under
// one, but install and approve run the harness for its version, which Gemini
// CLI answers in over 30 s on a 2-core machine with a load average of 30.
const (
	SessionTimeout = 2 * time.Minute
	DaloTimeout    = 90 * time.Second
)

// A World is one scratch machine of a user: a home, the harness's
// configuration home, a dalo store, a project and a folder where handlers
// write what they saw, all under Root, and a fake model server on
// loopback. Nothing of the real user's reaches it: its environment is
// built from nothing but PATH, so it holds none of their credentials or
// configuration, and the model is the fake one. No harness updates itself
// in it: Claude Code's updater is off (DISABLE_AUTOUPDATER), Copilot CLI
// runs with --no-auto-update, and Codex exec and headless Gemini CLI
// update only from their interactive interfaces.
type World struct {
	Machine
	Root, Home, Work, Out, Store string
	Server                       *fakemodel.Server
	Env                          []string
	// StreamJSON runs Claude Code with --output-format stream-json
	// --verbose, whose system messages are what it shows the user.
	StreamJSON bool
	// SessionTimeout bounds a session; the constant when zero.
	SessionTimeout time.Duration
	// Logf, when set, receives what a scenario logs.
	Logf func(format string, args ...any)
	// Installed is what the last install printed.
	Installed string
}

// NewWorld makes a world under root, an empty directory, whose fake model
// serves script (given the world, so that it may name the world's paths).
// Close releases it.
func NewWorld(m Machine, root string, script func(*World) fakemodel.Script) (*World, error) {
	w := &World{
		Machine: m, Root: root,
		Home:  filepath.Join(root, "home"),
		Work:  filepath.Join(root, "work"),
		Out:   filepath.Join(root, "out"),
		Store: filepath.Join(root, "store"),
	}
	for _, d := range []string{w.Home, w.Work, w.Out} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	path := filepath.Dir(m.Bin)
	if p := os.Getenv("PATH"); p != "" {
		path += string(filepath.ListSeparator) + p
	}
	w.Env = []string{
		"HOME=" + w.Home,
		"PATH=" + path,
		"LANG=C.UTF-8",
		"CLAUDE_CONFIG_DIR=" + filepath.Join(w.Home, ".claude"),
		"CODEX_HOME=" + filepath.Join(w.Home, ".codex"),
		"DALO_HOME=" + w.Store,
		"XDG_CONFIG_HOME=" + filepath.Join(w.Home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(w.Home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(w.Home, ".local", "state"),
		"XDG_CACHE_HOME=" + filepath.Join(w.Home, ".cache"),
		"LIVE_OUT=" + w.Out,
	}
	switch m.Harness {
	case "claude":
		w.Server = fakemodel.NewAnthropic(script(w))
		w.Env = append(w.Env,
			"ANTHROPIC_BASE_URL="+w.Server.URL,
			"ANTHROPIC_API_KEY=sk-ant-fake",
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
			"DISABLE_AUTOUPDATER=1")
	case "codex":
		w.Server = fakemodel.NewOpenAI(script(w))
		w.Env = append(w.Env, "OPENAI_API_KEY=sk-fake")
		// The user's own Codex configuration: the fake provider.
		if err := w.WriteFile(filepath.Join(w.Home, ".codex", "config.toml"), fmt.Sprintf(`model = "gpt-5"
model_provider = "fake"

[model_providers.fake]
name = "fake"
base_url = "%s/v1"
wire_api = "responses"
`, w.Server.URL)); err != nil {
			return nil, err
		}
	case "gemini":
		w.Server = fakemodel.NewGemini(script(w))
		// GEMINI_CLI_HOME moves the home Gemini CLI keeps its .gemini in:
		// away from HOME, so that a session proves dalo wrote where the
		// variable says.
		w.Env = append(w.Env, "GEMINI_API_KEY=fake-gemini-key", "GOOGLE_GEMINI_BASE_URL="+w.Server.URL,
			"GEMINI_CLI_HOME="+filepath.Join(root, "gemini-home"))
		// The user's own Gemini CLI configuration: an API key, and the
		// project folder trusted, as its trust dialog records it.
		if err := w.WriteFile(w.HooksFile(), GeminiAuth+"\n"); err != nil {
			return nil, err
		}
		if err := w.WriteFile(filepath.Join(w.ConfigHome(), "trustedFolders.json"), fmt.Sprintf("{%q: \"TRUST_FOLDER\"}\n", w.Work)); err != nil {
			return nil, err
		}
	case "copilot":
		// Offline against the fake, with no GitHub token; COPILOT_HOME
		// names its .copilot directory, away from HOME.
		w.Server = fakemodel.NewAnthropicShell(script(w), "bash")
		w.Env = append(w.Env, "COPILOT_OFFLINE=true", "COPILOT_PROVIDER_TYPE=anthropic",
			"COPILOT_PROVIDER_BASE_URL="+w.Server.URL, "COPILOT_PROVIDER_API_KEY=fake-copilot-key",
			"COPILOT_MODEL=claude-sonnet-4", "COPILOT_HOME="+filepath.Join(root, "copilot-home"))
	case "qwen":
		// QWEN_HOME names its .qwen directory, away from HOME.
		w.Server = fakemodel.NewAnthropicShell(script(w), "run_shell_command")
		w.Env = append(w.Env, "ANTHROPIC_BASE_URL="+w.Server.URL, "ANTHROPIC_API_KEY=fake-qwen-key",
			"ANTHROPIC_MODEL=claude-sonnet-4", "QWEN_HOME="+filepath.Join(root, "qwen-home"),
			"QWEN_CODE_SUPPRESS_YOLO_WARNING=1")
		// Qwen Code takes 15 s to 90 s a session on a loaded machine
		// (most of it starting up), where the others take a few.
		w.SessionTimeout = 5 * time.Minute
	default:
		return nil, fmt.Errorf("no scenario world for harness %q", m.Harness)
	}
	if m.Cache != "" {
		w.SetEnv("XDG_CACHE_HOME", m.Cache)
	}
	return w, nil
}

// GeminiAuth is the Gemini CLI settings of a world's user: an API key.
const GeminiAuth = `{"security": {"auth": {"selectedType": "gemini-api-key"}}}`

// Close stops the world's model server and kills every process whose
// executable lies under its root: a harness can leave a daemon of its own
// behind, and a run must leave nothing running.
func (w *World) Close() {
	if w.Server != nil {
		w.Server.Close()
	}
	KillUnder(w.Root)
}

// SetEnv sets the variable name of the world's environment to value.
func (w *World) SetEnv(name, value string) {
	for i, e := range w.Env {
		if strings.HasPrefix(e, name+"=") {
			w.Env[i] = name + "=" + value
			return
		}
	}
	w.Env = append(w.Env, name+"="+value)
}

func (w *World) logf(format string, args ...any) {
	if w.Logf != nil {
		w.Logf(format, args...)
	}
}

// ConfigHome is the world's harness's configuration home.
func (w *World) ConfigHome() string {
	switch w.Harness {
	case "claude":
		return filepath.Join(w.Home, ".claude")
	case "codex":
		return filepath.Join(w.Home, ".codex")
	case "gemini":
		return filepath.Join(w.Root, "gemini-home", ".gemini")
	case "copilot":
		return filepath.Join(w.Root, "copilot-home")
	case "qwen":
		return filepath.Join(w.Root, "qwen-home")
	}
	return ""
}

// HooksFile is the file the world's harness reads hooks from, where dalo
// writes its entries.
func (w *World) HooksFile() string {
	if w.Harness == "codex" {
		return filepath.Join(w.ConfigHome(), "hooks.json")
	}
	return filepath.Join(w.ConfigHome(), "settings.json")
}

// WriteFile writes content to path, making its directory.
func (w *World) WriteFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(content), 0o644)
}

// Dalo runs dalo in the world and returns its stdout; an exit status but 0
// is an error holding what it printed. It bounds the run by DaloTimeout.
func (w *World) Dalo(args ...string) (string, error) {
	return w.DaloWithin(DaloTimeout, args...)
}

// DaloWithin is Dalo bounded by bound.
func (w *World) DaloWithin(bound time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	cmd := exec.CommandContext(ctx, w.Machine.Dalo, args...)
	cmd.Dir = w.Root
	cmd.Env = w.Env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("dalo %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), nil
}

// Install runs the user's lifecycle with the kit: validate the author
// source, register it, approve every hook and tool the table supports,
// install, enable the recommended standing instruction, and check that
// doctor finds the entries and the store agree. It returns install's
// stdout.
func (w *World) Install() (string, error) {
	out, err := w.InstallSource(SrcID, PkgName, SourceFiles)
	if err != nil {
		return out, err
	}
	if _, err := w.Dalo("instruction", "enable", SrcID+":"+PkgName, "instruction:live-context", "--target", w.Harness); err != nil {
		return out, err
	}
	_, err = w.Dalo("doctor")
	return out, err
}

// InstallSource writes the author source files as source id, registers
// it, approves every hook and tool of package pkg the table supports and
// installs it. Codex's entries are installed with --trust, as a user of
// Codex installs them so that Codex runs them. It returns install's stdout.
func (w *World) InstallSource(id, pkg string, files map[string]string) (string, error) {
	src := filepath.Join(w.Root, "src-"+id)
	if err := WriteSource(src, NativeShell(w.Harness, files)); err != nil {
		return "", err
	}
	// A bare name: install finds the harness's version and its table.
	// (Validation reads no local table: it checks the source against the
	// newest shipped table of the harness.)
	provider := []string{"--provider", w.Harness}
	if w.Table != "" {
		provider[1] = w.Table
	}
	for _, args := range [][]string{
		append(append([]string{"plugin", "validate"}, provider...), src),
		{"source", "add", id, src},
		append(append([]string{"plugin", "approve", id + ":" + pkg}, provider...), "--all", "--yes"),
	} {
		if _, err := w.Dalo(args...); err != nil {
			return "", err
		}
	}
	args := append([]string{"plugin", "install", id + ":" + pkg}, provider...)
	if w.Harness == "codex" {
		args = append(args, "--trust")
	}
	out, err := w.Dalo(args...)
	w.Installed = out
	return out, err
}

// WriteSource writes the author source files under dir; a path ending in
// .sh is made executable.
func WriteSource(dir string, files map[string]string) error {
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		perm := os.FileMode(0o644)
		if filepath.Ext(name) == ".sh" {
			perm = 0o755
		}
		if err := os.WriteFile(path, []byte(content), perm); err != nil {
			return err
		}
	}
	return nil
}

// ShellTool is the native name of each harness's shell tool. GitHub
// Copilot CLI's model calls bash, which its hooks see as Bash.
var ShellTool = map[string]string{"claude": "Bash", "codex": "Bash", "gemini": "run_shell_command",
	"copilot": "Bash", "qwen": "run_shell_command"}

// NativeShell returns files with every matcher on the shell tool naming
// harness's shell tool: a source written for one harness, as its author
// would write it for another.
func NativeShell(harness string, files map[string]string) map[string]string {
	name := ShellTool[harness]
	if name == "Bash" {
		return files
	}
	out := make(map[string]string, len(files))
	for path, content := range files {
		if strings.HasSuffix(path, ".toml") {
			content = strings.ReplaceAll(content, `tool_names = ["Bash"]`, `tool_names = ["`+name+`"]`)
		}
		out[path] = content
	}
	return out
}

// A Session is the result of one headless harness run.
type Session struct {
	Stdout, Stderr string
	Elapsed        time.Duration
	// TimedOut says the session did not end within its bound and was
	// killed.
	TimedOut bool
}

// Args returns the arguments of a headless session of harness with
// prompt, as its user runs one. allowedTools is Claude Code's
// --allowedTools ("Bash" when empty); streamJSON asks Claude Code for its
// stream of records.
func Args(harness, prompt, allowedTools string, streamJSON bool) []string {
	switch harness {
	case "claude":
		if allowedTools == "" {
			allowedTools = "Bash"
		}
		args := []string{"-p", prompt, "--allowedTools", allowedTools, "--output-format", "json"}
		if streamJSON {
			args = append(args[:len(args)-1], "stream-json", "--verbose")
		}
		return args
	case "codex":
		return []string{"exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", prompt}
	case "gemini":
		// Headless, Gemini CLI offers its shell tool only in yolo mode.
		return []string{"-p", prompt, "--approval-mode", "yolo"}
	case "copilot":
		// Headless, Copilot CLI runs a tool only when allowed to.
		return []string{"-p", prompt, "--allow-all-tools", "--no-auto-update"}
	case "qwen":
		return []string{"--auth-type", "anthropic", "--approval-mode", "yolo", prompt}
	}
	return nil
}

// Run runs one headless session of the world's harness with prompt in the
// project. It returns the session whatever it did, and an error when the
// harness exited with another status than 0 or was killed at the bound.
func (w *World) Run(prompt string) (Session, error) {
	bound := SessionTimeout
	if w.SessionTimeout != 0 {
		bound = w.SessionTimeout
	}
	s, err := RunHarness(w.Bin, Args(w.Harness, prompt, "", w.StreamJSON), w.Work, w.Env, bound)
	var reqs []string
	for _, q := range w.Server.Requests() {
		reqs = append(reqs, q.Method+" "+q.Path)
	}
	w.logf("%s session (%v): %d model requests %v", w.Harness, s.Elapsed.Round(time.Millisecond), len(reqs), reqs)
	if err != nil {
		if line := firstLine(s.Stderr); line != "" {
			return s, fmt.Errorf("%s %q: %v (%s)", w.Harness, prompt, err, line)
		}
		return s, fmt.Errorf("%s %q: %v", w.Harness, prompt, err)
	}
	return s, nil
}

// RunHarness runs the harness bin with args in dir, with env and nothing
// else, in its own process group, killed with everything it started when
// it outlives bound, and its group killed when it ends: a run leaves
// nothing running. stdin is /dev/null (Codex waits for more input
// otherwise). It returns the session, and an error for an exit status
// but 0 or a timeout (Session.TimedOut).
func RunHarness(bin string, args []string, dir string, env []string, bound time.Duration) (Session, error) {
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	// A bounded wait for pipes held open by a stray grandchild.
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	if cmd.Process != nil {
		// Whatever the harness left in its group dies with it.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	s := Session{Stdout: stdout.String(), Stderr: stderr.String(), Elapsed: time.Since(start)}
	if ctx.Err() != nil {
		s.TimedOut = true
		return s, fmt.Errorf("no end within %v: %v", bound, err)
	}
	return s, err
}

// Exists reports whether the project holds name.
func (w *World) Exists(name string) bool {
	_, err := os.Stat(filepath.Join(w.Work, name))
	return err == nil
}

// Output returns the file a handler wrote in $LIVE_OUT, or "" if none.
func (w *World) Output(name string) string {
	b, err := os.ReadFile(filepath.Join(w.Out, name))
	if err != nil {
		return ""
	}
	return string(b)
}

// A UserMessage is one message Claude Code showed the user.
type UserMessage struct{ Text, Level string }

// UserMessages returns the system messages of a Claude Code session run
// with StreamJSON: the records {"type":"system","subtype":"informational"}
// of its stream, which are what it shows the user of a headless run (a
// hook's systemMessage as "<event>:<matcher> says: <line>" per line, a
// blocked prompt's reason).
func UserMessages(stdout string) []UserMessage {
	var msgs []UserMessage
	for _, line := range strings.Split(stdout, "\n") {
		var rec struct {
			Type, Subtype, Content, Level string
		}
		if json.Unmarshal([]byte(line), &rec) != nil || rec.Type != "system" || rec.Subtype != "informational" {
			continue
		}
		msgs = append(msgs, UserMessage{Text: rec.Content, Level: rec.Level})
	}
	return msgs
}

// Shown returns the first message holding every one of parts, or false.
func Shown(msgs []UserMessage, parts ...string) (UserMessage, bool) {
next:
	for _, m := range msgs {
		for _, p := range parts {
			if !strings.Contains(m.Text, p) {
				continue next
			}
		}
		return m, true
	}
	return UserMessage{}, false
}

// SamePath reports whether a and b name the same directory, whatever
// symbolic links the harness resolved.
func SamePath(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}

// KillUnder kills every process whose executable lies under dir: a
// harness can leave a daemon of its own behind (Codex 0.171.0's TUI starts
// a managed app-server from its home, which outlives the session). It
// reads /proc, so it does nothing where there is none.
func KillUnder(dir string) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if exe, err := os.Readlink(filepath.Join("/proc", e.Name(), "exe")); err == nil && strings.HasPrefix(exe, dir+string(filepath.Separator)) {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}
