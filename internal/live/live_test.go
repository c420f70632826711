//go:build unix

package live

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"dalo/internal/fakemodel"
	"dalo/internal/scenario"
	provtables "dalo/providers"
)

const skipMsg = "live harness tests need the exact harness versions of dalo's provider tables; " +
	"enable them with DALO_HARNESS_DIR=$(.ci/harnesses) go test ./internal/live/ " +
	"(DALO_HARNESS_DIR is a folder holding <name>@<version>/node_modules/.bin/<name> per table)"

// A target is a provider table this run proves, and the harness of exactly
// its version.
type target struct {
	key, name, version string
	// versionOutput is what the harness must print for --version.
	versionOutput string
	// bin is the harness binary: <DALO_HARNESS_DIR>/<key>/node_modules/.bin/<name>.
	bin string

	once sync.Once
	err  error // the harness is missing or prints another version
}

// targets are the tables this run proves, by harness name: those
// DALO_LIVE_TABLES names (name@version, separated by spaces or commas; one
// version per harness), else the newest table of each harness. targetsErr
// is why there are none.
var (
	targets    map[string]*target
	targetsErr error
)

// loadTargets reads DALO_LIVE_TABLES against the provider tables dalo
// embeds: a key with no table is an error, as it is for dalo itself.
func loadTargets(dir string) (map[string]*target, error) {
	ts, err := provtables.Load()
	if err != nil {
		return nil, err
	}
	keys := strings.Fields(strings.ReplaceAll(os.Getenv("DALO_LIVE_TABLES"), ",", " "))
	if len(keys) == 0 {
		for _, p := range harnesses(ts) {
			if t, ok := ts.Newest(p); ok {
				keys = append(keys, t.Key())
			}
		}
	}
	out := map[string]*target{}
	for _, key := range keys {
		name, version, _ := strings.Cut(key, "@")
		t, ok := ts.Lookup(name, version)
		if !ok {
			return nil, fmt.Errorf("DALO_LIVE_TABLES: no provider table %s; known: %s", key, strings.Join(ts.Keys(), ", "))
		}
		if prev := out[name]; prev != nil {
			return nil, fmt.Errorf("DALO_LIVE_TABLES: %s and %s: a run proves one version of a harness", prev.key, key)
		}
		out[name] = &target{key: t.Key(), name: t.Name, version: t.Version, versionOutput: t.VersionOutput.Text,
			bin: filepath.Join(dir, t.Key(), "node_modules", ".bin", t.Name)}
	}
	return out, nil
}

// harnesses lists the names of the harnesses that have a table, sorted.
func harnesses(ts *provtables.Tables) []string {
	var names []string
	for _, t := range ts.All() {
		if !slices.Contains(names, t.Name) {
			names = append(names, t.Name)
		}
	}
	sort.Strings(names)
	return names
}

// check runs the target's harness for its version, once, under a bound.
func (tg *target) check() {
	tg.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, tg.bin, "--version")
		cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+tg.cache())
		out, err := cmd.Output()
		if got := strings.TrimSpace(string(out)); err != nil || got != tg.versionOutput {
			tg.err = fmt.Errorf("%s --version: got %q (err %v), want %q\n"+
				"install the versions of the provider tables with .ci/harnesses", tg.bin, got, err, tg.versionOutput)
		}
	})
}

// cache is the cache directory the harness shares between runs,
// <DALO_HARNESS_DIR>/<key>/xdg-cache, as .ci/harnesses runs it.
func (tg *target) cache() string {
	return filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(tg.bin))), "xdg-cache")
}

// keys returns the keys of the tables under test, sorted.
func targetKeys() []string {
	var keys []string
	for _, tg := range targets {
		keys = append(keys, tg.key)
	}
	sort.Strings(keys)
	return keys
}

// Bounds: a session normally takes a few seconds; a dalo command well under one.
const (
	sessionTimeout = scenario.SessionTimeout
	daloTimeout    = scenario.DaloTimeout
)

// daloBin is the dalo binary built by TestMain, or "" when the harnesses are
// not available (the tests then skip or fail before using it).
var daloBin string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir := os.Getenv("DALO_HARNESS_DIR")
	if dir == "" {
		return m.Run()
	}
	targets, targetsErr = loadTargets(dir)
	tmp, err := os.MkdirTemp("", "dalo-live-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	daloBin = filepath.Join(tmp, "dalo")
	// The real binaries, as a user installs them: dalo, and beside it
	// dalo-hook, which the entries install writes call. Import paths,
	// so the build does not depend on the test's cwd.
	out, err := exec.Command("go", "build", "-o", tmp+string(filepath.Separator), "dalo/cmd/dalo", "dalo/cmd/dalo-hook").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building dalo: %v\n%s", err, out)
		return 1
	}
	code := m.Run()
	if err := writeResults(dir); err != nil {
		fmt.Fprintf(os.Stderr, "writing the live test results: %v\n", err)
		return 1
	}
	return code
}

// helperHarness returns the binary of the newest shipped table of name
// in DALO_HARNESS_DIR, for a test of another harness's table that needs
// this one beside it (GitHub Copilot CLI running Claude Code's project
// entries): name need not be under test. It skips t when that binary is
// not installed.
func helperHarness(t *testing.T, name string) string {
	t.Helper()
	if tg := targets[name]; tg != nil {
		return harness(t, name)
	}
	ts, err := provtables.Load()
	if err != nil {
		t.Fatal(err)
	}
	tb, ok := ts.Newest(name)
	if !ok {
		t.Fatalf("dalo ships no table of %s", name)
	}
	bin := filepath.Join(os.Getenv("DALO_HARNESS_DIR"), tb.Key(), "node_modules", ".bin", name)
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("%s is not installed beside the harness under test: %v", tb.Key(), err)
	}
	return bin
}

// liveEnabled skips t when the harnesses are not installed
// (DALO_HARNESS_DIR unset), unless CI=true, where it fails it: a CI run
// that silently skipped the live tests would prove nothing.
func liveEnabled(t *testing.T) {
	t.Helper()
	if os.Getenv("DALO_HARNESS_DIR") == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true but DALO_HARNESS_DIR is unset: " + skipMsg)
		}
		t.Skip(skipMsg)
	}
	if targetsErr != nil {
		t.Fatal(targetsErr)
	}
}

// harness returns the path of the named harness's binary, of the version of
// the table under test. It skips the test when DALO_HARNESS_DIR is unset
// (unless CI=true) or when this run proves no table of that harness, and
// fails it when the installed harness is not the table's version.
func harness(t *testing.T, name string) string {
	t.Helper()
	record(t)
	liveEnabled(t)
	tg := targets[name]
	if tg == nil {
		t.Skipf("this run proves %s, no table of %s", strings.Join(targetKeys(), " "), name)
	}
	tg.check()
	if tg.err != nil {
		t.Fatal(tg.err)
	}
	drove(t, tg.key)
	return tg.bin
}

// needs is harness for a test whose subtests drive the harnesses named: it
// skips t unless this run proves a table of one of them, so that a test
// whose every subtest would skip says SKIP, not PASS.
func needs(t *testing.T, names ...string) {
	t.Helper()
	record(t)
	liveEnabled(t)
	for _, n := range names {
		if targets[n] != nil {
			return
		}
	}
	t.Skipf("this run proves %s, no table of %s", strings.Join(targetKeys(), " "), strings.Join(names, " or "))
}

// The outcome of every test that called harness or needs, by name.
var recorded = struct {
	sync.Mutex
	seen  map[*testing.T]bool
	tests map[string]*Outcome
}{seen: map[*testing.T]bool{}, tests: map[string]*Outcome{}}

// record registers t's outcome for the results file, once per test: when
// t and its subtests are done, its status, and the tables it or its
// subtests drove. A test that passed while every subtest it ran skipped
// is recorded as skipped.
func record(t *testing.T) {
	recorded.Lock()
	defer recorded.Unlock()
	if recorded.seen[t] {
		return
	}
	recorded.seen[t] = true
	name := t.Name()
	if recorded.tests[name] == nil {
		recorded.tests[name] = &Outcome{}
	}
	t.Cleanup(func() {
		recorded.Lock()
		defer recorded.Unlock()
		o := recorded.tests[name]
		switch {
		case t.Failed():
			o.Status = "fail"
		case t.Skipped():
			o.Status = "skip"
		default:
			o.Status = "pass"
		}
		var subs, passed int
		for sub, so := range recorded.tests {
			if !strings.HasPrefix(sub, name+"/") {
				continue
			}
			subs++
			if so.Status == "pass" {
				passed++
			}
			o.Tables = append(o.Tables, so.Tables...)
		}
		if o.Status == "pass" && subs > 0 && passed == 0 {
			o.Status = "skip"
		}
		sort.Strings(o.Tables)
		o.Tables = slices.Compact(o.Tables)
	})
}

// drove records that t ran the harness of table key.
func drove(t *testing.T, key string) {
	recorded.Lock()
	defer recorded.Unlock()
	o := recorded.tests[t.Name()]
	if !slices.Contains(o.Tables, key) {
		o.Tables = append(o.Tables, key)
	}
}

// writeResults writes what this run proved to DALO_LIVE_RESULTS (a
// directory), else to dir/results, as <tables>.json: the tables it drove,
// with what each harness printed for --version, and every recorded test's
// outcome.
func writeResults(dir string) error {
	recorded.Lock()
	defer recorded.Unlock()
	if len(recorded.tests) == 0 || targetsErr != nil {
		return nil
	}
	r := Results{Tables: map[string]string{}, Tests: map[string]Outcome{}}
	for _, tg := range targets {
		if tg.err == nil {
			r.Tables[tg.key] = tg.versionOutput
		}
	}
	for name, o := range recorded.tests {
		r.Tests[name] = *o
	}
	out := os.Getenv("DALO_LIVE_RESULTS")
	if out == "" {
		out = filepath.Join(dir, "results")
	}
	return r.Write(filepath.Join(out, ResultsName(targetKeys())))
}

// A world is one user's machine, the scenarios' World (a home, the
// harness's configuration home, a dalo store, a project dir and a folder
// where handlers write what they saw, all under one temp dir, and the fake
// model server), with the test that uses it and the Codex trust of its
// user. Its lower-case fields are the World's paths, as the tests name
// them.
type world struct {
	*scenario.World
	t        *testing.T
	provider string
	key      string // the table under test, name@version
	root     string
	home     string
	work     string // the project: the harness's cwd, where commands run
	out      string // $LIVE_OUT
	store    string // $DALO_HOME
	server   *fakemodel.Server
	// untrusted runs Codex as a user who has trusted no hook: not dalo's
	// entries (installed without --trust), nor their own (codexTrust).
	untrusted bool
	// reviewAll has the world's user trust every hook before a Codex run,
	// dalo's entries too: a test that edits those by hand, as a user who
	// then reviews the edit.
	reviewAll bool
}

func newWorld(t *testing.T, provider string, script fakemodel.Script) *world {
	t.Helper()
	return newWorldFor(t, provider, func(*world) fakemodel.Script { return script })
}

// newWorldFor is newWorld for a script that names the world's paths.
func newWorldFor(t *testing.T, provider string, script func(*world) fakemodel.Script) *world {
	t.Helper()
	bin := harness(t, provider) // skip or fail before making anything
	root := t.TempDir()
	w := &world{t: t, provider: provider, key: targets[provider].key, root: root}
	// The harness's cache, shared between runs as .ci/harnesses fills it
	// (GitHub Copilot CLI unpacks itself there on its first start).
	m := scenario.Machine{Harness: provider, Bin: bin, Dalo: daloBin, Table: w.key, Cache: targets[provider].cache()}
	// The scenarios' world: the same scratch machine dalo providers
	// verify makes, with the harness under test first on PATH, where a
	// user has it.
	sw, err := scenario.NewWorld(m, root, func(sw *scenario.World) fakemodel.Script {
		w.World = sw
		w.home, w.work, w.out, w.store = sw.Home, sw.Work, sw.Out, sw.Store
		return script(w)
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sw.Close)
	w.World, w.server = sw, sw.Server
	sw.Logf = t.Logf
	return w
}

// configHome is the world's harness's configuration home.
func (w *world) configHome() string { return w.ConfigHome() }

// hooksFile is the file the world's harness reads hooks from, where dalo
// writes its entries.
func (w *world) hooksFile() string { return w.HooksFile() }

func (w *world) writeFile(path, content string) {
	w.t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		w.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// dalo runs the dalo binary in the world and fails the test unless it
// exits 0. It returns stdout.
func (w *world) dalo(args ...string) string {
	w.t.Helper()
	return w.daloEnv(w.root, nil, args...)
}

// install runs the user's lifecycle: validate the author source, register
// it, approve every hook and tool the provider supports, install, enable
// the recommended standing instruction for the provider. It returns
// install's stdout.
func (w *world) install() string {
	w.t.Helper()
	out := w.installSource(srcID, pkgName, sourceFiles)
	w.dalo("instruction", "enable", srcID+":"+pkgName, "instruction:live-context", "--target", w.provider)
	w.dalo("doctor") // the entries and the store agree before the harness runs
	return out
}

// installSource writes the author source files as source id, registers
// it, approves every hook and tool of package pkg the provider supports and
// installs it. It returns install's stdout.
func (w *world) installSource(id, pkg string, files map[string]string) string {
	w.t.Helper()
	src := filepath.Join(w.root, "src-"+id)
	writeSource(w.t, src, w.NativeShell(files))
	w.dalo("plugin", "validate", "--provider", w.key, src)
	w.dalo("source", "add", id, src)
	ref := id + ":" + pkg
	w.dalo("plugin", "approve", ref, "--provider", w.key, "--all", "--yes")
	args := []string{"plugin", "install", ref, "--provider", w.key}
	if w.provider == "codex" && !w.untrusted {
		// As a user of Codex installs: recording Codex's trust for dalo's
		// entries, so that Codex runs them.
		args = append(args, "--trust")
	}
	return w.dalo(args...)
}

// shellTool is the native name of each harness's shell tool, as the
// headless section of its newest table says.
var shellTool = func() map[string]string {
	ts, err := provtables.Load()
	if err != nil {
		panic(err)
	}
	out := map[string]string{}
	for _, name := range harnesses(ts) {
		t, _ := ts.Newest(name)
		out[name] = t.Headless.Shell.Tool
	}
	return out
}()

// nativeShell returns files with every matcher on the shell tool naming
// the world's harness's shell tool.
func (w *world) nativeShell(files map[string]string) map[string]string { return w.NativeShell(files) }

// A session is the result of one headless harness run.
type session struct {
	stdout, stderr string
	elapsed        time.Duration
}

// run runs one headless session of the world's harness with prompt in the
// project dir and fails the test unless the harness exits 0.
func (w *world) run(prompt string) session {
	w.t.Helper()
	s, err := w.runExit(prompt)
	if err != nil {
		w.t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, clip(s.stdout), clip(s.stderr))
	}
	return s
}

// runExit is run for a session that may end in failure, which it returns;
// it fails the test only on a timeout.
func (w *world) runExit(prompt string) (session, error) {
	w.t.Helper()
	args := w.Args(prompt)
	if w.provider == "codex" {
		args = append(append(args[:len(args)-1:len(args)-1], w.codexTrust().flags...), prompt)
	}
	harness(w.t, w.provider)
	ss, err := w.RunArgs(prompt, args)
	s := session{stdout: ss.Stdout, stderr: ss.Stderr, elapsed: ss.Elapsed}
	if ss.TimedOut {
		w.t.Fatalf("%v\nstdout:\n%s\nstderr:\n%s", err, clip(s.stdout), clip(s.stderr))
	}
	return s, err
}

// A hookTrust is what a Codex run needs of the user's trust in hooks: the
// flags of codex exec and its TUI, and the config of an app server thread.
// Both are empty: no run of the suite passes a bypass a user would not.
type hookTrust struct {
	flags  []string
	config map[string]any
}

// codexTrust readies the world's Codex for a run as its user would have:
// Codex runs only the hooks its user trusted in its /hooks review. dalo's
// entries are trusted by install --trust, which the suite uses as a user
// does (installSource), and nothing here trusts them, so that a run proves
// that trust; every other hook of hooks.json, written by hand as a user
// writes their own, is trusted here as the user's review records it
// (reviewCodexHooks), and so is a dalo entry the test edited by hand
// (reviewAll). Unless the world's user trusts nothing (untrusted). Every
// Codex run of the suite (exec, app server, TUI) calls it first.
func (w *world) codexTrust() hookTrust {
	w.t.Helper()
	if !w.untrusted {
		w.reviewCodexHooks(func(cmd string) bool { return w.reviewAll || !isDaloEntry(cmd) })
	}
	return hookTrust{config: map[string]any{}}
}

// isDaloEntry says whether a hook command is one of dalo's entries.
func isDaloEntry(cmd string) bool {
	return strings.Contains(cmd, "/dispatchers/") && strings.Contains(cmd, " --home ")
}

// reviewCodexHooks does what the user's /hooks review in Codex does for
// the hooks the user accepts (those whose command accept takes): it asks
// Codex (codex app-server, hooks/list) for every hook of the world's Codex
// home with its key and current hash, and records trusted_hash for each
// one not trusted yet (config/value/write, as the review writes it).
func (w *world) reviewCodexHooks(accept func(cmd string) bool) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), daloTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, harness(w.t, "codex"), "app-server")
	cmd.Dir = w.work
	cmd.Env = w.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	in, err := cmd.StdinPipe()
	if err != nil {
		w.t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		w.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		w.t.Fatalf("codex app-server: %v", err)
	}
	defer func() {
		in.Close()
		cmd.Wait()
	}()
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 16<<20)
	call := func(id int, method string, params any) json.RawMessage {
		b, _ := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
		if _, err := in.Write(append(b, '\n')); err != nil {
			w.t.Fatalf("codex app-server %s: %v", method, err)
		}
		for sc.Scan() {
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Result json.RawMessage `json:"result"`
				Error  json.RawMessage `json:"error"`
			}
			if json.Unmarshal(sc.Bytes(), &m) != nil || m.Method != "" || string(m.ID) != strconv.Itoa(id) {
				continue
			}
			if m.Error != nil {
				w.t.Fatalf("codex app-server %s: %s", method, m.Error)
			}
			return m.Result
		}
		w.t.Fatalf("codex app-server %s: no answer (%v)", method, sc.Err())
		return nil
	}
	call(1, "initialize", map[string]any{"clientInfo": map[string]any{"name": "dalo-live", "version": "0"}})
	b, _ := json.Marshal(map[string]any{"method": "initialized"})
	in.Write(append(b, '\n'))
	var list struct {
		Data []struct {
			Hooks []struct {
				Key         string `json:"key"`
				Command     string `json:"command"`
				CurrentHash string `json:"currentHash"`
				TrustStatus string `json:"trustStatus"`
			} `json:"hooks"`
		} `json:"data"`
	}
	if err := json.Unmarshal(call(2, "hooks/list", map[string]any{"cwds": []string{w.work}}), &list); err != nil {
		w.t.Fatalf("codex app-server hooks/list: %v", err)
	}
	trust := map[string]any{}
	for _, d := range list.Data {
		for _, h := range d.Hooks {
			if h.TrustStatus != "trusted" && accept(h.Command) {
				trust[h.Key] = map[string]any{"trusted_hash": h.CurrentHash}
			}
		}
	}
	if len(trust) > 0 {
		call(3, "config/value/write", map[string]any{"keyPath": "hooks.state", "value": trust, "mergeStrategy": "upsert"})
	}
}

// failf reports a failed check with what the harness printed, which is
// where its own account of the hooks is.
func (w *world) failf(s session, format string, args ...any) {
	w.t.Helper()
	w.t.Errorf(format+"\nharness stdout:\n%s\nharness stderr:\n%s", append(args, clip(s.stdout), clip(s.stderr))...)
}

// exists reports whether the project dir holds name.
func (w *world) exists(name string) bool {
	_, err := os.Stat(filepath.Join(w.work, name))
	return err == nil
}

// output returns the file a handler wrote in $LIVE_OUT, or "" if none.
func (w *world) output(name string) string {
	b, err := os.ReadFile(filepath.Join(w.out, name))
	if err != nil {
		return ""
	}
	return string(b)
}

// homeFiles returns the files under the world's home that hold mark: where
// a harness keeps what it showed the user (Claude's transcripts, Codex's
// rollouts), for messages headless mode does not print.
func (w *world) homeFiles(mark string) []string { return w.HomeFiles(mark) }

func clip(s string) string {
	const max = 6000
	if len(s) > max {
		return s[:max] + "\n...[clipped]"
	}
	return s
}

// userMessages returns the system messages of a Claude session run with
// streamJSON (scenario.UserMessages).
func (w *world) userMessages(s session) []userMessage {
	w.t.Helper()
	if !w.StreamJSON {
		w.t.Fatal("userMessages needs a session run with streamJSON")
	}
	return scenario.UserMessages(s.stdout)
}

// A userMessage is one message Claude Code showed the user.
type userMessage = scenario.UserMessage

// shown returns the first message holding every one of parts, or false.
var shown = scenario.Shown

// killUnder kills every process whose executable lies under dir.
var killUnder = scenario.KillUnder
