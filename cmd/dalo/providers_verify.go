package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"dalo/internal/scenario"
	"dalo/providers"
	"dalo/store"
)

const providersVerifyDoc = `Verify proves the harness version installed on this machine when dalo
ships no table for it, and writes a local table for that exact version that
install, review, approve, doctor and 'providers show' then use.

It finds the harness as install does (the binary 'dalo providers use'
named, else NAME on PATH) and reads its version. When a shipped table
covers that version there is nothing to prove: it says so and exits 0.
Otherwise it runs the harness headless, in a scratch home of its own, with
none of your configuration or credentials in its environment and its
auto-update off, against a model server dalo serves itself on loopback (no
network, no account, no key), through dalo's own install and dispatch. Each
scenario dalo carries tries the claims of the nearest table (same harness,
nearest version): a tool gate's deny, context reaching the model, a blocked
prompt, failures, a continued workflow. Every process it started is killed
when it ends.

It writes $DALO_HOME/providers/NAME/VERSION.cue: each claim a scenario
showed holds, marked verified on this machine with the date; each a
scenario showed does not hold, unsupported with what the run showed; each
no scenario tried, unsupported (nothing is inherited from the nearest
table). The native payloads, the harness's output and the model's requests
of each scenario are kept beside it, in $DALO_HOME/providers/NAME/VERSION/.
A version on which a core scenario fails (a deny that does not stop the
action, context that never reaches the model, a harness that cannot run a
session) gets no table, and the output says what failed. A shipped table of
the same version, in a later dalo, wins over a local one; 'dalo providers
remove NAME@VERSION' removes a local table. plugin validate never reads
local tables.

Without NAME it verifies every harness it finds. Progress goes to stderr.
--json prints {name, path, version, version_output, shipped, nearest,
table, written, scenarios: [{name, status, reason, seconds}], claims: {held,
failed, untried}, failed} per harness. Exit status 0 when every harness
found is covered (a table written, or shipped), 1 when not.

Examples:
  dalo providers verify claude
  dalo --json providers verify codex
`

func init() {
	register(&command{
		name:  "providers verify",
		usage: "[--json] [NAME]",
		short: "prove this machine's harness version and write a local table",
		doc:   providersVerifyDoc,
		run:   runProvidersVerify,
	})
}

// A verifyReport is what verify found and did for one harness.
type verifyReport struct {
	Name          string `json:"name"`
	Path          string `json:"path,omitempty"`
	Version       string `json:"version,omitempty"`
	VersionOutput string `json:"version_output,omitempty"`
	// Shipped is the shipped table that covers the version, when one does.
	Shipped string `json:"shipped,omitempty"`
	// Nearest is the table whose claims the scenarios tried.
	Nearest   string           `json:"nearest,omitempty"`
	Table     string           `json:"table,omitempty"`
	Written   bool             `json:"written"`
	Scenarios []scenarioReport `json:"scenarios"`
	Claims    *claimCounts     `json:"claims,omitempty"`
	// Failed says why no table was written, when none was and no shipped
	// table covers the version.
	Failed string `json:"failed,omitempty"`
}

type scenarioReport struct {
	Name    string  `json:"name"`
	Status  string  `json:"status"` // held, failed
	Core    bool    `json:"core"`
	Reason  string  `json:"reason,omitempty"`
	Seconds float64 `json:"seconds"`
}

type claimCounts struct {
	Held    int `json:"held"`
	Failed  int `json:"failed"`
	Untried int `json:"untried"`
}

func (r *verifyReport) covered() bool { return r.Shipped != "" || r.Written }

func runProvidersVerify(e *env, fs *pflag.FlagSet) int {
	const cmd = "providers verify"
	if fs.NArg() > 1 {
		return usageError(e, cmd, "want at most one NAME, got %d arguments", fs.NArg())
	}
	ts, err := providers.Load()
	if err != nil {
		return fail(e, cmd, err)
	}
	names := store.Providers()
	if fs.NArg() == 1 {
		name := fs.Arg(0)
		if _, ok := ts.Newest(name); !ok {
			return usageError(e, cmd, "unknown provider %s; known: %s", name, strings.Join(names, ", "))
		}
		names = []string{name}
	}
	s, ok := openStore(e, cmd)
	if !ok {
		return exitFail
	}
	dalo, err := self()
	if err != nil {
		return fail(e, cmd, fmt.Errorf("finding the dalo binary: %w", err))
	}
	v := verifier{ts: ts, dalo: dalo, store: s, progress: e.stderr,
		date: time.Now().Format(time.DateOnly), version: daloVersion()}
	reports := []*verifyReport{}
	code := exitOK
	for _, name := range names {
		h, err := s.FindHarness(ts, name)
		if err != nil {
			if fs.NArg() == 0 {
				continue // without NAME: the harnesses found
			}
			return fail(e, cmd, err)
		}
		r := v.verify(h)
		reports = append(reports, r)
		if !r.covered() {
			code = exitFail
		}
	}
	if len(reports) == 0 {
		return fail(e, cmd, fmt.Errorf("no harness found: none of %s is on PATH or named with 'dalo providers use'", strings.Join(names, ", ")))
	}
	if e.json {
		if c := writeJSON(e, reports); c != exitOK {
			return c
		}
		return code
	}
	for _, r := range reports {
		printVerify(e.stdout, r)
	}
	return code
}

// self is the dalo the user ran, as they ran it: the scratch world runs
// it by that path, so that install there finds dalo-hook beside it as it
// does for the user (and a binary that serves several commands by the
// name it is run as stays dalo).
func self() (string, error) {
	if p, err := exec.LookPath(os.Args[0]); err == nil {
		return filepath.Abs(p)
	}
	return os.Executable()
}

// daloVersion is this dalo's version, as a local table records it.
func daloVersion() string {
	v := strings.TrimPrefix(versionLine(), "dalo ")
	v, _, _ = strings.Cut(v, " ")
	return v
}

// A verifier runs the scenarios on the harnesses of this machine.
type verifier struct {
	ts       *providers.Tables
	dalo     string
	store    *store.Store // where the local tables are written
	progress io.Writer
	date     string
	version  string
}

func (v *verifier) say(format string, args ...any) {
	fmt.Fprintf(v.progress, "dalo providers verify: "+format+"\n", args...)
}

// verify proves h's version and writes its local table.
func (v *verifier) verify(h *store.Harness) *verifyReport {
	r := &verifyReport{Name: h.Name, Path: h.Path, Version: h.Version, VersionOutput: h.Output, Scenarios: []scenarioReport{}}
	if h.Table != nil {
		r.Shipped = h.Table.Key()
		return r
	}
	near, ok := v.ts.Nearest(h.Name, h.Version)
	if !ok {
		r.Failed = "dalo ships no table of " + h.Name + " to start from"
		return r
	}
	r.Nearest = near.Key()
	var scens []*scenario.Scenario
	for _, s := range scenario.All {
		if s.For(h.Name) {
			scens = append(scens, s)
		}
	}
	if len(scens) == 0 {
		r.Failed = "dalo carries no scenario for " + near.Harness + " yet"
		return r
	}
	scratch, err := os.MkdirTemp("", "dalo-verify-")
	if err != nil {
		r.Failed = err.Error()
		return r
	}
	defer os.RemoveAll(scratch)
	bin, err := harnessOnPath(scratch, h)
	if err != nil {
		r.Failed = err.Error()
		return r
	}
	// The scenarios' dalo commands (install, approve, doctor) read the
	// harness's version as a user's would; verify read it once already.
	versions := filepath.Join(scratch, "versions")
	if err := os.Mkdir(versions, 0o700); err != nil {
		r.Failed = err.Error()
		return r
	}
	if err := store.CacheVersion(versions, bin, h.Output); err != nil {
		r.Failed = err.Error()
		return r
	}
	m := scenario.Machine{Harness: h.Name, Bin: bin, Dalo: v.dalo, Table: near.Key(),
		Env: []string{store.VersionCacheEnv + "=" + versions}}
	if near.Headless.SharedCache != nil {
		// The harness unpacks itself into $XDG_CACHE_HOME on its first
		// start (GitHub Copilot CLI: 235 MB): once here, before the
		// scenarios start side by side, into a cache they all share,
		// not once in each of their homes.
		m.Cache = filepath.Join(scratch, "xdg-cache")
		if err := fillCache(bin, m.Cache, filepath.Join(scratch, "cache-home")); err != nil {
			r.Failed = err.Error()
			return r
		}
	}
	v.say("%s %s (%s): no shipped table; trying the %d scenarios dalo carries against the claims of %s",
		h.Name, h.Version, h.Path, len(scens), near.Key())
	results := v.play(scens, m, scratch)
	for _, res := range results {
		sr := scenarioReport{Name: res.Scenario.Name, Status: "held", Core: res.Scenario.Core, Seconds: res.Elapsed.Round(100 * time.Millisecond).Seconds()}
		if !res.Held() {
			sr.Status, sr.Reason = "failed", res.Why()
		}
		r.Scenarios = append(r.Scenarios, sr)
	}
	d, err := scenario.DraftTable(near, h.Version, h.Output, results, scenario.Verified{Date: v.date, Dalo: v.version})
	if err != nil {
		r.Failed = err.Error()
		return r
	}
	if len(d.Blocked) > 0 {
		var why []string
		for _, b := range d.Blocked {
			why = append(why, b.Scenario.Name+": "+b.Why())
		}
		r.Failed = fmt.Sprintf("%s %s failed what every table needs (%s), so no table was written", near.Harness, h.Version, strings.Join(why, "; "))
		return r
	}
	r.Claims = &claimCounts{Held: d.Held, Failed: d.Failed, Untried: d.Untried}
	file, err := v.write(h, d.Table, results, scratch)
	if err != nil {
		r.Failed = err.Error()
		return r
	}
	r.Table, r.Written = file, true
	return r
}

// harnessOnPath returns the harness binary under the name of its provider,
// which is how the scratch world's PATH offers it (install --trust and the
// harness's own children look it up there): h.Path itself when so named,
// else a link to it in scratch.
func harnessOnPath(scratch string, h *store.Harness) (string, error) {
	if filepath.Base(h.Path) == h.Name {
		return h.Path, nil
	}
	bin := filepath.Join(scratch, "bin", h.Name)
	if err := os.MkdirAll(filepath.Dir(bin), 0o755); err != nil {
		return "", err
	}
	return bin, os.Symlink(h.Path, bin)
}

// play runs scens on m, as many at once as the machine has cores (each in
// its own world, with its own model server), saying which runs and how
// many are left.
func (v *verifier) play(scens []*scenario.Scenario, m scenario.Machine, scratch string) []scenario.Result {
	results := make([]scenario.Result, len(scens))
	sem := make(chan struct{}, max(1, min(runtime.NumCPU(), len(scens))))
	var mu sync.Mutex
	left, started := len(scens), 0
	var wg sync.WaitGroup
	for i, s := range scens {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			mu.Lock()
			started++
			v.say("%s: scenario %s (%d of %d)", m.Harness, s.Name, started, len(scens))
			mu.Unlock()
			res := scenario.Play(s, m, filepath.Join(scratch, s.Name), nil)
			mu.Lock()
			defer mu.Unlock()
			left--
			status := "held"
			if !res.Held() {
				status = "failed: " + res.Why()
			}
			v.say("%s: scenario %s %s (%.1fs); %d left", m.Harness, s.Name, status, res.Elapsed.Seconds(), left)
			results[i] = res
		}()
	}
	wg.Wait()
	return results
}

// write writes the local table and the recordings of the run beside it,
// under the store's lock, checking first that the table loads as a local
// table: a table verify wrote never stands broken in the store.
func (v *verifier) write(h *store.Harness, table []byte, results []scenario.Result, scratch string) (string, error) {
	check := filepath.Join(scratch, "check")
	if err := writeAtomic(filepath.Join(check, h.Name, h.Version+".cue"), table); err != nil {
		return "", err
	}
	ts, err := providers.WithLocal(check)
	if err != nil {
		return "", err
	}
	for _, b := range ts.Broken() {
		return "", fmt.Errorf("the table verify drafted does not load (a bug of dalo): %v", b)
	}
	return v.store.WriteLocalTable(h.Name, h.Version, table, func(rec string) error {
		for _, res := range results {
			if err := record(filepath.Join(rec, res.Scenario.Name), filepath.Join(scratch, res.Scenario.Name), res); err != nil {
				return fmt.Errorf("recording %s: %w", res.Scenario.Name, err)
			}
		}
		return nil
	})
}

// record keeps what one scenario's run showed in dir: the native payloads
// its handlers received (payloads/, what the kit's handlers wrote in
// $LIVE_OUT), what the harness printed, and the requests the model got.
func record(dir, root string, res scenario.Result) error {
	out := filepath.Join(root, "out")
	ents, err := os.ReadDir(out)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	for _, ent := range ents {
		if !ent.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(out, ent.Name()))
		if err != nil {
			return err
		}
		if err := writeAtomic(filepath.Join(dir, "payloads", ent.Name()), b); err != nil {
			return err
		}
	}
	var reqs []byte
	for _, q := range res.Requests {
		line, err := json.Marshal(map[string]any{"method": q.Method, "path": q.Path, "body": json.RawMessage(orNull(q.Raw))})
		if err != nil {
			continue
		}
		reqs = append(append(reqs, line...), '\n')
	}
	for name, b := range map[string][]byte{
		"harness.stdout":       []byte(res.Session.Stdout),
		"harness.stderr":       []byte(res.Session.Stderr),
		"model-requests.jsonl": reqs,
	} {
		if err := writeAtomic(filepath.Join(dir, name), b); err != nil {
			return err
		}
	}
	return nil
}

// orNull is b when it is JSON, else null.
func orNull(b []byte) []byte {
	if json.Valid(b) {
		return b
	}
	return []byte("null")
}

// writeAtomic writes b to file, making its directory, atomically.
func writeAtomic(file string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	return store.WriteFile(file, b, 0o644)
}

func printVerify(w io.Writer, r *verifyReport) {
	switch {
	case r.Shipped != "":
		fmt.Fprintf(w, "%s %s (%s): dalo ships a table for it, %s; nothing to verify\n", r.Name, r.Version, r.Path, r.Shipped)
		return
	case r.Written:
		fmt.Fprintf(w, "%s %s (%s): verified on this machine; table written to %s\n", r.Name, r.Version, r.Path, r.Table)
	default:
		fmt.Fprintf(w, "%s %s (%s): not verified, no table written: %s\n", r.Name, r.Version, r.Path, r.Failed)
	}
	width := 0
	for _, s := range r.Scenarios {
		width = max(width, len(s.Name))
	}
	for _, s := range r.Scenarios {
		line := fmt.Sprintf("  %-*s %s", width, s.Name, s.Status)
		if s.Reason != "" {
			line += ": " + s.Reason
		}
		fmt.Fprintln(w, line)
	}
	if r.Claims != nil {
		fmt.Fprintf(w, "  claims of %s: %d held, %d failed (unsupported), %d not tried (unsupported)\n",
			r.Nearest, r.Claims.Held, r.Claims.Failed, r.Claims.Untried)
	}
}

// fillCache starts the harness bin once (--version) with cache as its
// XDG cache and home as its home, so that it unpacks itself there.
func fillCache(bin, cache, home string) error {
	for _, d := range []string{cache, home} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*store.VersionTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--version")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CACHE_HOME=" + cache}
	cmd.WaitDelay = 2 * time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s --version, unpacking itself into a scratch cache: %v: %s", bin, err, strings.TrimSpace(string(out)))
	}
	return nil
}
