package scenario

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"dalo/internal/fakemodel"
	"dalo/providers"
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
	// Cache, when set, is an XDG cache the runs of a harness whose table
	// says it unpacks itself there (headless.shared_cache: GitHub Copilot
	// CLI) share; the others keep their own, under the world's home.
	Cache string
	// Env are variables (NAME=value) the machine adds to every world's
	// environment: dalo providers verify's version cache
	// (store.VersionCacheEnv), so that the dalo commands of its scenarios
	// do not ask the harness its version again and again.
	Env []string
}

// Bounds: a session normally takes a few seconds; a dalo command well under
// one, but install and approve run the harness for its version, which Gemini
// CLI answers in over 30 s on a 2-core machine with a load average of 30. A
// table's headless.session_timeout_s bounds a slower harness's sessions.
const (
	SessionTimeout = 2 * time.Minute
	DaloTimeout    = 90 * time.Second
)

// A World is one scratch machine of a user: a home, the harness's
// configuration home, a dalo store, a project and a folder where handlers
// write what they saw, all under Root, and a fake model server on
// loopback. Nothing of the real user's reaches it: its environment is
// built from nothing but PATH, so it holds none of their credentials or
// configuration, and the model is the fake one. How the harness runs
// there is its table's headless section (Provider.Headless): the
// variables that point it at the model server and keep it from updating
// itself, its configuration files, a session's command line; no Go here
// names a harness.
type World struct {
	Machine
	// Provider is the table whose headless section runs the harness:
	// Machine.Table, else the newest shipped table of the harness.
	Provider                     *providers.Table
	Root, Home, Work, Out, Store string
	Server                       *fakemodel.Server
	Env                          []string
	// StreamJSON runs the session with the table's headless.stream
	// command line, whose stdout is the records the harness shows its
	// user (Claude Code's stream-json); without one it changes nothing.
	StreamJSON bool
	// AllowedTools are the tools a session may run without asking
	// ({tools} of the command line); the shell tool when empty.
	AllowedTools string
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
	t, err := headlessTable(m)
	if err != nil {
		return nil, err
	}
	w := &World{
		Machine: m, Provider: t, Root: root,
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
		"DALO_HOME=" + w.Store,
		"XDG_CONFIG_HOME=" + filepath.Join(w.Home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(w.Home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(w.Home, ".local", "state"),
		"XDG_CACHE_HOME=" + filepath.Join(w.Home, ".cache"),
		"LIVE_OUT=" + w.Out,
	}
	if m.Cache != "" && t.Headless.SharedCache != nil {
		w.SetEnv("XDG_CACHE_HOME", m.Cache)
	}
	for _, e := range m.Env {
		name, value, _ := strings.Cut(e, "=")
		w.SetEnv(name, value)
	}
	h := t.Headless
	// The variables that name the server wait for it; the others (where
	// the configuration home is) a script may already need.
	for _, name := range slices.Sorted(maps.Keys(h.Env)) {
		if !strings.Contains(h.Env[name], "{server}") {
			w.SetEnv(name, w.expand(h.Env[name], nil))
		}
	}
	if w.Server, err = newServer(h, script(w)); err != nil {
		return nil, fmt.Errorf("%s: %w", t.Key(), err)
	}
	for _, name := range slices.Sorted(maps.Keys(h.Env)) {
		w.SetEnv(name, w.expand(h.Env[name], nil))
	}
	for _, f := range h.Files {
		if err := w.writeHeadlessFile(f); err != nil {
			w.Server.Close()
			return nil, err
		}
	}
	if h.SessionTimeoutS > 0 {
		w.SessionTimeout = time.Duration(h.SessionTimeoutS) * time.Second
	}
	return w, nil
}

// headlessTable is the table whose headless section runs m's harness.
func headlessTable(m Machine) (*providers.Table, error) {
	ts, err := providers.Load()
	if err != nil {
		return nil, err
	}
	key := m.Harness
	if m.Table != "" {
		key = m.Table
	}
	t, err := ts.Resolve(key)
	if err != nil {
		return nil, fmt.Errorf("no scenario world for harness %q: %w", m.Harness, err)
	}
	return t, nil
}

// newServer starts the fake model server speaking the table's API.
func newServer(h providers.Headless, script fakemodel.Script) (*fakemodel.Server, error) {
	switch h.API {
	case "anthropic":
		if h.Shell.Model != "" {
			return fakemodel.NewAnthropicShell(script, h.Shell.Model), nil
		}
		return fakemodel.NewAnthropic(script), nil
	case "openai":
		return fakemodel.NewOpenAI(script), nil
	case "gemini":
		return fakemodel.NewGemini(script), nil
	}
	return nil, fmt.Errorf("headless.api %q: the fake model server speaks anthropic, openai and gemini", h.API)
}

// Placeholders are the templates' names of a headless section
// (#Provider.headless), each with what it stands for in a world.
var Placeholders = []string{"{server}", "{home}", "{root}", "{work}", "{prompt}", "{tools}"}

// expand fills the placeholders of s with the world's values, each passed
// through quote when set (a value put inside a JSON or TOML string); a
// session's {prompt} and {tools} are given in more (name, value pairs).
func (w *World) expand(s string, quote func(string) string, more ...string) string {
	vals := map[string]string{"{home}": w.Home, "{root}": w.Root, "{work}": w.Work}
	if w.Server != nil {
		vals["{server}"] = w.Server.URL
	}
	for i := 0; i+1 < len(more); i += 2 {
		vals[more[i]] = more[i+1]
	}
	var pairs []string
	for k, v := range vals {
		if quote != nil {
			v = quote(v)
		}
		pairs = append(pairs, k, v)
	}
	return strings.NewReplacer(pairs...).Replace(s)
}

// writeHeadlessFile writes one file of the user's own configuration of a
// headless section, its values escaped as a JSON or TOML string holds
// them (both read the same escapes).
func (w *World) writeHeadlessFile(f providers.HeadlessFile) error {
	var dir string
	switch f.Root {
	case "home":
		dir = w.Home
	case "root":
		dir = w.Root
	default:
		dir = w.ConfigHome()
	}
	var quote func(string) string
	if ext := filepath.Ext(f.Path); ext == ".json" || ext == ".toml" {
		quote = func(v string) string {
			b, _ := json.Marshal(v)
			return string(b[1 : len(b)-1])
		}
	}
	return w.WriteFile(filepath.Join(dir, filepath.FromSlash(f.Path)), w.expand(f.Content, quote))
}

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

// Getenv is the value of the variable name in the world's environment.
func (w *World) Getenv(name string) string {
	for _, e := range w.Env {
		if v, ok := strings.CutPrefix(e, name+"="); ok {
			return v
		}
	}
	return ""
}

// TrustProject trusts the world's project folder as the harness's trust
// prompt would, where its table says the harness keeps the folders its
// user trusted (config.project.trust.folders): only ever a scratch
// world's, never a user's. It reports whether the table says where.
func (w *World) TrustProject() (bool, error) {
	p := w.Provider.Config.Project
	if p == nil || p.Trust.Folders == nil {
		return false, nil
	}
	f := p.Trust.Folders
	file, err := w.Provider.Path(f.Location, w.Getenv)
	if err != nil {
		return false, err
	}
	doc := map[string]any{}
	if b, err := os.ReadFile(file); err == nil {
		var keep []string
		for _, l := range strings.Split(string(b), "\n") {
			if !strings.HasPrefix(strings.TrimSpace(l), "//") {
				keep = append(keep, l)
			}
		}
		if err := json.Unmarshal([]byte(strings.Join(keep, "\n")), &doc); err != nil {
			return false, fmt.Errorf("%s: %v", file, err)
		}
	} else if !os.IsNotExist(err) {
		return false, err
	}
	folders, _ := doc[f.Key].([]any)
	doc[f.Key] = append(folders, w.Work)
	b, err := json.Marshal(doc)
	if err != nil {
		return false, err
	}
	return true, w.WriteFile(file, string(b))
}

// ConfigHome is the world's harness's configuration home, as its table
// finds it in the world's environment.
func (w *World) ConfigHome() string {
	d, err := w.Provider.ConfigHome(w.Getenv)
	if err != nil {
		return ""
	}
	return d
}

// HooksFile is the file the world's harness reads hooks from, where dalo
// writes its entries.
func (w *World) HooksFile() string {
	p, err := w.Provider.Path(w.Provider.Config.Hooks.Location, w.Getenv)
	if err != nil {
		return ""
	}
	return p
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
	cmd := w.DaloCommand(ctx, w.Root, nil, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("dalo %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), nil
}

// DaloCommand is dalo with args, run in dir with the world's environment
// and extra (NAME=value, which win), killed when ctx ends: the one way a
// world runs dalo, for a caller that reads its output its own way.
func (w *World) DaloCommand(ctx context.Context, dir string, extra []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, w.Machine.Dalo, args...)
	cmd.Dir = dir
	cmd.Env = append(slices.Clip(w.Env), extra...)
	return cmd
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
// installs it. Where the harness runs only the hooks its user trusted and
// dalo can record that trust (config.trust.state: Codex), install is
// given --trust, as its user installs so that the harness runs them. It
// returns install's stdout.
func (w *World) InstallSource(id, pkg string, files map[string]string) (string, error) {
	src := filepath.Join(w.Root, "src-"+id)
	if err := WriteSource(src, w.NativeShell(files)); err != nil {
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
	if w.Provider.Config.Trust.State != nil {
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

// ShellTool is the native name of the world's harness's shell tool, which
// its hooks see and a matcher names.
func (w *World) ShellTool() string { return w.Provider.Headless.Shell.Tool }

// NativeShell returns files with every matcher on the shell tool (written
// as Claude Code names it, Bash) naming the world's harness's shell tool:
// a source written for one harness, as its author would write it for
// another.
func (w *World) NativeShell(files map[string]string) map[string]string {
	name := w.ShellTool()
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

// Args returns the command line of a headless session of the world's
// harness with prompt, as its table's headless section writes it: its
// stream of records when StreamJSON and the table has one, the tools
// AllowedTools names ({tools}; the shell tool when empty).
func (w *World) Args(prompt string) []string {
	h := w.Provider.Headless
	tmpl := h.Args
	if w.StreamJSON && len(h.Stream) > 0 {
		tmpl = h.Stream
	}
	tools := w.AllowedTools
	if tools == "" {
		tools = w.ShellTool()
	}
	args := make([]string, len(tmpl))
	for i, a := range tmpl {
		args[i] = w.expand(a, nil, "{prompt}", prompt, "{tools}", tools)
	}
	return args
}

// Run runs one headless session of the world's harness with prompt in the
// project. It returns the session whatever it did, and an error when the
// harness exited with another status than 0 or was killed at the bound.
func (w *World) Run(prompt string) (Session, error) {
	return w.RunArgs(prompt, w.Args(prompt))
}

// RunArgs is Run with the session's command line args.
func (w *World) RunArgs(prompt string, args []string) (Session, error) {
	bound := SessionTimeout
	if w.SessionTimeout != 0 {
		bound = w.SessionTimeout
	}
	s, err := RunHarness(w.Bin, args, w.Work, w.Env, bound)
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
