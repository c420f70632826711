package providers

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// localFixture is the shipped table of name@from as `dalo providers verify`
// would write it for version to: the version and its --version output
// changed, verified set, every test: evidence turned into verified:
// evidence of that day.
func localFixture(t testing.TB, name, from, to string) string {
	t.Helper()
	src := readEmbedded(t, name+"/"+from+".cue")
	out := strings.Replace(src, `version: "`+from+`"`, `version: "`+to+`"`, 1)
	out = strings.Replace(out, `text: "`+from, `text: "`+to, 1)
	out = strings.Replace(out, "\ninstall:", "\nverified: {date: \"2026-12-02\", dalo: \"0.1.0\"}\ninstall:", 1)
	out = regexp.MustCompile(`"test: internal/live ([^"]+)"`).ReplaceAllString(out, `"verified: $1 2026-12-02"`)
	if strings.Contains(out, "test: internal/live") || !strings.Contains(out, "verified: ") || !strings.Contains(out, `version: "`+to+`"`) {
		t.Fatal("fixture mutation did not apply")
	}
	return out
}

func writeLocal(t testing.TB, dir, file, src string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(file))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Without local tables, WithLocal is Load's own value: a command pays no
// CUE evaluation for a store that holds none.
func TestWithLocalNone(t *testing.T) {
	shipped, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeLocal(t, dir, "README", "not a table")
	for _, d := range []string{"", dir, filepath.Join(dir, "missing")} {
		ts, err := WithLocal(d)
		if err != nil {
			t.Fatal(err)
		}
		if ts != shipped {
			t.Errorf("WithLocal(%q) is not Load's tables", d)
		}
	}
}

// A local table is used as a shipped one for its exact version: looked
// up, asked #Capability and #MemberInstall the same answers as the table
// it was verified from; a bare name still means the newest shipped table.
func TestWithLocalAdds(t *testing.T) {
	dir := t.TempDir()
	writeLocal(t, dir, "claude/2.1.340.cue", localFixture(t, "claude", "2.1.332", "2.1.340"))
	ts, err := WithLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	if b := ts.Broken(); len(b) != 0 {
		t.Fatalf("broken: %v", b[0])
	}
	local, ok := ts.Lookup("claude", "2.1.340")
	if !ok || !local.LocalTable() {
		t.Fatalf("claude@2.1.340: %v, local %v", ok, ok && local.LocalTable())
	}
	if local.Verified == nil || local.Verified.Date != "2026-12-02" || local.File != filepath.Join(dir, "claude", "2.1.340.cue") {
		t.Errorf("verified %+v, file %s", local.Verified, local.File)
	}
	shipped, _ := ts.Lookup("claude", "2.1.332")
	if shipped.LocalTable() {
		t.Error("the shipped claude@2.1.332 says it is local")
	}
	for _, arg := range []string{"claude", "claude@2.1.332"} {
		if r, err := ts.Resolve(arg); err != nil || r != shipped {
			t.Errorf("Resolve(%s) = %v, %v; want the shipped 2.1.332", arg, r, err)
		}
	}
	if r, err := ts.Resolve("claude@2.1.340"); err != nil || r != local {
		t.Errorf("Resolve(claude@2.1.340) = %v, %v", r, err)
	}
	for _, q := range []Question{
		{"tool_call", "before", "gate", "fail_closed", "model_and_user", "required", false, false, false},
		{"prompt", "before", "add_context", "fail_open", "user", "optional", true, false, false},
		{"session", "end", "observe", "report", "user", "required", false, false, true},
	} {
		got, err := ts.Capability(local, q)
		if err != nil {
			t.Fatal(err)
		}
		want, err := ts.Capability(shipped, q)
		if err != nil {
			t.Fatal(err)
		}
		want.Reason = strings.ReplaceAll(want.Reason, "2.1.332", "2.1.340")
		if got != want {
			t.Errorf("%+v: local %+v, shipped %+v", q, got, want)
		}
	}
	mq := MemberQuestion{Kind: "agent", Requirement: "required", Validation: MemberKept}
	if got, err := ts.MemberInstall(local, mq); err != nil || got.Action != "subagent" {
		t.Errorf("MemberInstall(agent) = %+v, %v", got, err)
	}
}

// A local table of a version dalo ships is shadowed: the shipped table is
// used, whatever the local one says.
func TestWithLocalShippedWins(t *testing.T) {
	dir := t.TempDir()
	weaker := localFixture(t, "codex", "0.171.0", "0.171.0")
	weaker = strings.Replace(weaker, `default: ".codex"`, `default: ".elsewhere"`, 1)
	writeLocal(t, dir, "codex/0.171.0.cue", weaker)
	ts, err := WithLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	tb, _ := ts.Lookup("codex", "0.171.0")
	if tb.LocalTable() || tb.Config.Home.Default != ".codex" {
		t.Errorf("codex@0.171.0 is the local table (home %s)", tb.Config.Home.Default)
	}
	if sh := ts.Shadowed(); len(sh) != 1 || sh[0].Key() != "codex@0.171.0" {
		t.Errorf("shadowed %v", sh)
	}
	if n := len(ts.All()); n != len(mustLoad(t).All()) {
		t.Errorf("%d tables, want the shipped ones alone", n)
	}
}

// A local table dalo cannot use is reported with its file and why, and
// takes nothing from the others: a good local table beside it is used.
func TestWithLocalBroken(t *testing.T) {
	good := localFixture(t, "claude", "2.1.332", "2.1.340")
	for _, tc := range []struct {
		name, file, src string
		want            []string
	}{
		{"syntax", "claude/2.1.341.cue", strings.Replace(localFixture(t, "claude", "2.1.332", "2.1.341"), `name:    "claude"`, `name:    "claude`, 1),
			[]string{"claude/2.1.341.cue:13:"}},
		{"schema", "claude/2.1.341.cue", strings.Replace(localFixture(t, "claude", "2.1.332", "2.1.341"), `unit: "seconds"`, `unit: "minutes"`, 1),
			[]string{"claude/2.1.341.cue does not satisfy #Provider", "timeout.unit", "claude/2.1.341.cue:"}},
		{"not verified", "claude/2.1.341.cue", strings.Replace(localFixture(t, "claude", "2.1.332", "2.1.341"), "verified: {date: \"2026-12-02\", dalo: \"0.1.0\"}\n", "", 1),
			[]string{"claude/2.1.341.cue: no verified field", "dalo providers verify claude"}},
		{"unknown harness", "opencode/1.0.0.cue", strings.ReplaceAll(localFixture(t, "qwen", "0.24.4", "1.0.0"), `name:    "qwen"`, `name:    "opencode"`),
			[]string{"opencode/1.0.0.cue: dalo ships no table for opencode"}},
		{"new native event", "claude/2.1.341.cue", strings.Replace(localFixture(t, "claude", "2.1.332", "2.1.341"), "\nevents: {\n", "\nevents: {\n\tSessionFinish: {evidence: [\"doc: x\"], payload: fields: {}, channels: user: evidence: [\"doc: x\"]}\n", 1),
			[]string{"claude/2.1.341.cue: events.SessionFinish: no table this dalo ships for claude names that native event"}},
		{"other blocking exit", "claude/2.1.341.cue", regexp.MustCompile(`(?m)^(blocking: \{\n\texit:\s*)2`).ReplaceAllString(localFixture(t, "claude", "2.1.332", "2.1.341"), "${1}3"),
			[]string{"claude/2.1.341.cue: blocking.exit: 3, where this dalo's dispatcher blocks claude with 2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeLocal(t, dir, "claude/2.1.340.cue", good)
			writeLocal(t, dir, tc.file, tc.src)
			ts, err := WithLocal(dir)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := ts.Lookup("claude", "2.1.340"); !ok {
				t.Error("the good local table beside it was not used")
			}
			b := ts.Broken()
			if len(b) != 1 {
				t.Fatalf("broken: %v, want one", b)
			}
			key := strings.Replace(strings.TrimSuffix(tc.file, ".cue"), "/", "@", 1)
			if b[0].Key != key || b[0].File != filepath.Join(dir, tc.file) {
				t.Errorf("broken %s (%s), want %s", b[0].Key, b[0].File, key)
			}
			name, version, _ := strings.Cut(key, "@")
			if ts.BrokenFor(name, version) != b[0] {
				t.Errorf("BrokenFor(%s) is not it", key)
			}
			if _, ok := ts.Lookup(name, version); ok {
				t.Errorf("%s was used", key)
			}
			for _, w := range tc.want {
				if !strings.Contains(b[0].Error(), w) {
					t.Errorf("error does not say %q:\n%v", w, b[0])
				}
			}
		})
	}
}

// mapCache is a Cache in memory.
type mapCache map[string][]byte

func (c mapCache) Get(key []byte) []byte { return c[string(key)] }
func (c mapCache) Put(key, data []byte)  { c[string(key)] = data }

// A local table #Provider accepted is kept in the cache, decoded, and taken
// from it while its bytes are the same: it answers as the table compiled
// from CUE does, compiling it only for a question that needs the rules.
// What admits it beside the shipped tables is checked each time.
func TestWithLocalCache(t *testing.T) {
	dir := t.TempDir()
	src := localFixture(t, "claude", "2.1.332", "2.1.340")
	writeLocal(t, dir, "claude/2.1.340.cue", src)
	c := mapCache{}
	fresh, err := WithLocalCache(dir, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(c) != 1 {
		t.Fatalf("cache holds %d entries, want the table", len(c))
	}
	want, _ := fresh.Lookup("claude", "2.1.340")

	again, err := WithLocalCache(dir, c)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := again.Lookup("claude", "2.1.340")
	if !ok || !got.LocalTable() || got.File != want.File {
		t.Fatalf("from the cache: %v, %+v", ok, got)
	}
	if got.value.Exists() {
		t.Error("the cached table was compiled from CUE on loading")
	}
	// Equal as JSON: an empty map CUE gave comes back nil, which every
	// reader takes alike (so does the plan install writes, in JSON too).
	gj, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	if wj, _ := json.Marshal(want); string(gj) != string(wj) || got.Verified == nil {
		t.Error("the cached table differs from the one compiled from CUE")
	}
	q := Question{"tool_call", "before", "rewrite_input", "fail_closed", "user", "required", false, false, false}
	gc, err := again.Capability(got, q)
	if err != nil {
		t.Fatal(err)
	}
	wc, err := fresh.Capability(want, q)
	if err != nil || gc != wc {
		t.Errorf("capability from the cache %+v, compiled %+v (%v)", gc, wc, err)
	}
	mq := MemberQuestion{Kind: "skill", Requirement: "optional", Validation: MemberOmitted}
	gm, err := again.MemberInstall(got, mq)
	if wm, _ := fresh.MemberInstall(want, mq); err != nil || gm != wm {
		t.Errorf("member answer from the cache %+v, compiled %+v (%v)", gm, wm, err)
	}

	// The cache is only used for the bytes it was made from: what it says
	// of a changed file is not read.
	for k := range c {
		c[k] = []byte(strings.Replace(string(c[k]), `"harness":"Claude Code"`, `"harness":"Cached"`, 1))
	}
	if ts, _ := WithLocalCache(dir, c); func() string { tb, _ := ts.Lookup("claude", "2.1.340"); return tb.Harness }() != "Cached" {
		t.Fatal("the cache was not read")
	}
	writeLocal(t, dir, "claude/2.1.340.cue", src+"\n")
	ts, err := WithLocalCache(dir, c)
	if err != nil {
		t.Fatal(err)
	}
	if tb, _ := ts.Lookup("claude", "2.1.340"); tb.Harness != "Claude Code" {
		t.Errorf("a changed file was read from the cache: harness %q", tb.Harness)
	}
}

// BenchmarkWithLocalCached is BenchmarkWithLocalOne with the table in the
// cache: a decode, no CUE.
func BenchmarkWithLocalCached(b *testing.B) {
	dir := b.TempDir()
	writeLocal(b, dir, "claude/2.1.340.cue", localFixture(b, "claude", "2.1.332", "2.1.340"))
	c := mapCache{}
	if _, err := WithLocalCache(dir, c); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		ts, err := WithLocalCache(dir, c)
		if err != nil || len(ts.Broken()) > 0 {
			b.Fatal(err, ts.Broken())
		}
	}
}
