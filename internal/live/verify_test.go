//go:build unix

package live

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"dalo/internal/fakemodel"
	"dalo/internal/scenario"
	provtables "dalo/providers"
)

// The harness versions with no shipped table that TestVerify proves with
// dalo providers verify: DALO_LIVE_UNTABLED (name@version, separated by
// spaces or commas), each installed in <DALO_HARNESS_DIR>/<name>@<version>
// as .ci/harnesses installs it. .ci/untabled lists the released versions
// CI proves so.
func untabledVersions(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, key := range strings.Fields(strings.ReplaceAll(os.Getenv("DALO_LIVE_UNTABLED"), ",", " ")) {
		name, version, _ := strings.Cut(key, "@")
		out[name] = version
	}
	return out
}

// needsUntabled skips t unless this run proves an untabled version of one
// of the harnesses names (DALO_LIVE_UNTABLED), as needs does for tables.
func needsUntabled(t *testing.T, names ...string) {
	t.Helper()
	record(t)
	liveEnabled(t)
	vs := untabledVersions(t)
	for _, n := range names {
		if vs[n] != "" {
			return
		}
	}
	t.Skipf("DALO_LIVE_UNTABLED names no version of %s: TestVerify proves the versions .ci/untabled lists", strings.Join(names, " or "))
}

// untabled returns the binary of the untabled version of harness name
// this run proves, and that version, skipping t when there is none, and
// failing it when the version has a shipped table (it would prove
// nothing) or is not installed.
func untabled(t *testing.T, name string) (bin, version string) {
	t.Helper()
	record(t)
	version = untabledVersions(t)[name]
	if version == "" {
		t.Skipf("DALO_LIVE_UNTABLED names no version of %s", name)
	}
	ts, err := provtables.Load()
	if err != nil {
		t.Fatal(err)
	}
	if tb, ok := ts.Lookup(name, version); ok {
		t.Fatalf("DALO_LIVE_UNTABLED: %s has a shipped table; name a released version dalo has none for", tb.Key())
	}
	bin = filepath.Join(os.Getenv("DALO_HARNESS_DIR"), name+"@"+version, "node_modules", ".bin", name)
	cmd := exec.Command(bin, "--version")
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(bin))), "xdg-cache"))
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), version) {
		t.Fatalf("%s --version: %q (err %v), want %s: install it with .ci/harnesses %s@%s", bin, out, err, version, name, version)
	}
	return bin, version
}

// untabledFindings are the scenarios that fail on an untabled version
// because that version does not do what the nearest table says, by
// "name@version scenario", with what the failure says: verify turns the
// claims they try unsupported in the local table, rightly, and the rest
// of the table (its gates) stands.
var untabledFindings = map[string]string{
	// Claude Code 2.1.331 has no PreSkillShellCommand (dalo providers
	// verify, 2026-12-02), which 2.1.332 fires for a skill's inline shell
	// command (providers/testdata/README.md finding 61): no hook of the
	// user's sees that command, and dalo's gate there never runs.
	"claude@2.1.331 skill-shell":      "PreSkillShellCommand payloads []",
	"claude@2.1.331 skill-shell-deny": "the skill's shell command ran = true",
	"claude@2.1.331 skill-shell-gate": "dalo's gate ran with tool names []",
}

// TestVerify proves a released harness version dalo ships no table for,
// for each harness dalo has tables of, the way its user would:
// on a machine with nothing but dalo, Node and that harness, dalo
// providers verify runs the scenarios against it and writes a local table
// for exactly that version, which loads as one (verified today, the
// model's requests of each scenario and the native payloads of the
// session recorded beside it). Then, in a real session of that
// harness, a package installed with dalo under that table (install given
// the bare provider name finds it) has its gate deny a tool call, the
// reason reaching the model, and its prompt context reach the model, with
// its crashed context hooks shown to the user (the scenario
// "gate-context").
func TestVerify(t *testing.T) {
	t.Parallel()
	needsUntabled(t, verifiable...)
	for _, p := range verifiable {
		t.Run(p, func(t *testing.T) {
			t.Parallel()
			bin, version := untabled(t, p)
			root := t.TempDir()
			// The user's machine: verify runs there, and the real runs
			// below use its store.
			// The harness's cache, as .ci/harnesses fills it (GitHub
			// Copilot CLI unpacks itself there on its first start).
			cache := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(bin))), "xdg-cache")
			m := scenario.Machine{Harness: p, Bin: bin, Dalo: daloBin, Cache: cache}
			user, err := scenario.NewWorld(m, filepath.Join(root, "user"), func(*scenario.World) fakemodel.Script { return nil })
			if err != nil {
				t.Fatal(err)
			}
			defer user.Close()
			start := time.Now()
			out, err := user.DaloWithin(10*time.Minute, "--json", "providers", "verify", p)
			t.Logf("dalo providers verify %s (%s) in %v:\n%s", p, version, time.Since(start).Round(time.Second), out)
			if err != nil {
				t.Fatalf("dalo providers verify %s: %v", p, err)
			}
			var reports []struct {
				Version, Nearest, Table string
				Written                 bool
				Scenarios               []struct{ Name, Status, Reason string }
			}
			if err := json.Unmarshal([]byte(out), &reports); err != nil || len(reports) != 1 {
				t.Fatalf("verify --json: %v, %d reports", err, len(reports))
			}
			r := reports[0]
			local := filepath.Join(user.Store, "providers")
			if want := filepath.Join(local, p, version+".cue"); !r.Written || r.Version != version || r.Table != want {
				t.Fatalf("verify: written %v, version %s, table %s; want a table of %s at %s", r.Written, r.Version, r.Table, version, want)
			}
			for _, s := range r.Scenarios {
				want, finding := untabledFindings[p+"@"+version+" "+s.Name]
				switch {
				case finding && (s.Status != "failed" || !strings.Contains(s.Reason, want)):
					t.Errorf("scenario %s on %s %s: %s (%s), want it failed with %q: update untabledFindings", s.Name, p, version, s.Status, s.Reason, want)
				case !finding && s.Status != "held":
					t.Errorf("scenario %s on %s %s: %s: %s", s.Name, p, version, s.Status, s.Reason)
				}
			}

			// The table loads as a local table, verified today, and the
			// native payloads of its run lie beside it.
			ts, err := provtables.WithLocal(local)
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range ts.Broken() {
				t.Fatalf("the local table verify wrote does not load: %v", b)
			}
			tb, ok := ts.Lookup(p, version)
			if !ok || !tb.LocalTable() || tb.Verified == nil || tb.Verified.Date != time.Now().Format(time.DateOnly) {
				t.Fatalf("%s@%s: local %v, verified %+v; want a local table verified today", p, version, ok && tb.LocalTable(), tb)
			}
			var failed []string // the untabledFindings, which failed as they should
			for _, s := range r.Scenarios {
				if s.Status == "failed" {
					failed = append(failed, s.Name)
				}
			}
			verifiedClaims(t, ts, tb, r.Nearest, failed)
			// Every scenario's requests are recorded; one may ask the model
			// nothing (a denied prompt, settings the harness rejects, run in
			// worlds of their own), but a session asks it something.
			for _, sc := range r.Scenarios {
				b, err := os.ReadFile(filepath.Join(local, p, version, sc.Name, "model-requests.jsonl"))
				if err != nil || (sc.Name == "session" && len(b) == 0) {
					t.Errorf("scenario %s: the model's requests recorded beside the table: %d bytes (err %v)", sc.Name, len(b), err)
				}
			}
			if scenario.Lookup("session").For(p) {
				var payload struct {
					SessionID string `json:"session_id"`
				}
				b, err := os.ReadFile(filepath.Join(local, p, version, "session", "payloads", "start.stdin"))
				if err != nil || json.Unmarshal(b, &payload) != nil || payload.SessionID == "" {
					t.Errorf("the session start payload recorded beside the table: %q (err %v), want the native payload with a session id", b, err)
				}
			}

			// The real runs: the kit installed with the bare provider name,
			// so that install finds the harness's version and its local
			// table, in a
			// store holding the local tables verify wrote and nothing else.
			for _, name := range []string{"gate-context"} {
				s := scenario.Lookup(name)
				w, err := scenario.NewWorld(m, filepath.Join(root, name), s.Script)
				if err != nil {
					t.Fatal(err)
				}
				defer w.Close()
				w.Logf = t.Logf
				if err := os.CopyFS(filepath.Join(w.Store, "providers"), os.DirFS(local)); err != nil {
					t.Fatal(err)
				}
				var c scenario.Check
				if err := s.Play(w, &c); err != nil {
					t.Fatalf("%s with the local table: %v", name, err)
				}
				for _, f := range c.Failures {
					t.Errorf("%s with the local table of %s@%s: %s\nharness stdout:\n%s\nharness stderr:\n%s", name, p, version, f,
						clip(c.Session.Stdout), clip(c.Session.Stderr))
				}
				// install used the local table of exactly that version.
				if !strings.Contains(w.Installed, p+"@"+version) {
					t.Errorf("install does not name %s@%s, the local table:\n%s", p, version, w.Installed)
				}
			}
		})
	}
}

// verifiedClaims checks that each claim of the nearest table (name@version
// key) that a scenario tries is verified in the local table tb, at the
// same place: every scenario held but the findings in failed (whose
// claims must not be verified), so each claim one tries holds. It logs
// how many.
func verifiedClaims(t *testing.T, ts *provtables.Tables, tb *provtables.Table, key string, failed []string) {
	t.Helper()
	name, version, _ := strings.Cut(key, "@")
	near, ok := ts.Lookup(name, version)
	if !ok {
		t.Fatalf("verify names the nearest table %q, which dalo does not ship", key)
	}
	local, err := tb.Claims()
	if err != nil {
		t.Fatal(err)
	}
	verified := map[string]bool{}
	for _, c := range local {
		verified[c.Path] = len(c.Evidence) > 0 && !slices.ContainsFunc(c.Evidence, func(e string) bool { return !strings.HasPrefix(e, "verified: ") })
	}
	nearClaims, err := near.Claims()
	if err != nil {
		t.Fatal(err)
	}
	tried, held := 0, 0
	for _, c := range nearClaims {
		if !scenario.Cites(name, c.Evidence) {
			continue
		}
		tried++
		if f := failedCite(name, c.Evidence, failed); f != "" {
			// A finding: the claim must not be verified.
			if verified[c.Path] {
				t.Errorf("%s: the scenario %s failed on %s, but its local table says the claim is verified", c.Path, f, tb.Key())
			}
			continue
		}
		if verified[c.Path] {
			held++
			continue
		}
		t.Errorf("%s: a scenario tries it on %s, but the local table of %s does not say it is verified", c.Path, key, tb.Key())
	}
	var all int
	for _, ok := range verified {
		if ok {
			all++
		}
	}
	t.Logf("%s: %d of the %d claims of %s a scenario tries are verified (%d verified claims of %d in all)", tb.Key(), held, tried, key, all, len(local))
	if tried == 0 {
		t.Errorf("no claim of %s cites a scenario: verify proves nothing of %s", key, name)
	}
}

// failedCite is a scenario among failed that claim evidence evs cites
// for harness, or "".
func failedCite(harness string, evs, failed []string) string {
	for _, e := range evs {
		if ref, ok := strings.CutPrefix(e, "test: internal/live "); ok {
			if s, h := scenario.Tried(ref); s != nil && h == harness && slices.Contains(failed, s.Name) {
				return s.Name
			}
		}
	}
	return ""
}
