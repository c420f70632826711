package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"unsafe"

	"github.com/pelletier/go-toml/v2"

	"dalo/bench/sourcegen"
	"dalo/plan"
)

// decodeOnceAgrees checks that when decodeOnce decodes src, go-toml
// decodes it to the same data and the walk after it (decodeManifest's
// other way) indexes the same positions and finds nothing to report. It
// reports whether decodeOnce decoded src.
func decodeOnceAgrees(t *testing.T, src []byte) bool {
	t.Helper()
	lim := plan.DraftLimits
	lines := []int{0}
	for i, b := range src {
		if b == '\n' {
			lines = append(lines, i+1)
		}
	}
	got := decodeOnce(src, &manifest{lines: lines}, &lim)
	if got == nil {
		return false
	}
	var data map[string]any
	if err := toml.Unmarshal(src, &data); err != nil {
		t.Errorf("%q: decoded once, but go-toml refuses it: %v", src, err)
		return true
	}
	if data == nil {
		data = map[string]any{}
	}
	if !reflect.DeepEqual(got.data, data) {
		t.Errorf("%q:\nonce    %#v\ngo-toml %#v", src, got.data, data)
	}
	var l diagList
	want := &manifest{data: data, lines: lines, spans: map[string]span{}}
	w := walker{m: want, lim: &lim, l: &l, arrays: make(map[string]int)}
	if !w.walk(src) || len(l.diags) != 0 {
		t.Errorf("%q: decoded once, but the walk after go-toml reports %v", src, l.diags)
	}
	if !reflect.DeepEqual(got.spans, want.spans) {
		t.Errorf("%q: positions\nonce    %v\ngo-toml %v", src, got.spans, want.spans)
	}
	return true
}

// tomlCases are manifests decodeOnce must decode, or leave to go-toml,
// at the edges of what it builds.
var tomlCases = []string{
	manifestA,
	"",
	"a = 1\nb = -0\nd = -123456789012345678\ne = true\nf = false\n",
	"c = 9223372036854775807\n",
	"a = 012\n", "a = +1\n", "a = 1_000\n", "a = 0x10\n", "a = 1.5\n", "a = 1e3\n", "a = inf\n",
	"a = 1979-05-27\n", "a = 07:32:00\n", "a = 1979-05-27T07:32:00Z\n",
	"a = [1.0, -0.5e+1_0, 1979-05-27, 07:32:00, 1979-05-27T07:32:00.123]\nb = {c = 3.25}\n",
	"s = \"tab\\there \\u00e9\"\nt = 'lit\\eral'\nu = \"\"\"\nmulti\nline\"\"\"\nv = '''\nraw'''\n",
	"a.b.c = 1\na.b.d = 2\na.e = 3\n",
	"a = {b = 1, c.d = 2, c.e = 3}\n",
	"a = {b = 1}\na.c = 2\n",
	"a = [1, [2, 3], {x = 1}, []]\n",
	"[a.b]\nx = 1\n[a]\ny = 2\n",
	"[a.b]\nx = 1\n[a.c]\ny = 2\n",
	"[a]\nb.c = 1\n[a.b.d]\ne = 2\n",
	"a.b = 1\n[a.c]\nd = 2\n",
	"[[a]]\nx = 1\n[[a]]\nx = 2\n[a.b]\ny = 3\n[[a.c]]\nz = 4\n",
	"[[a.b]]\nx = 1\n[a]\ny = 2\n",
	"a = []\n[[a]]\n",
	"[a]\n[a]\n",
	"a = 1\na = 2\n",
	"[a]\nb = 1\n[a.b]\n",
	"[providers.claude]\nx.y = 1\nx.z = 2\nw = {a.b = 1}\n[providers.claude.t]\nq = [1, {r = 2}]\n",
	"[providers]\nclaude = 1\n[[providers.codex]]\n",
	"\"quoted key\" = 1\n'lit' = 2\n\"\" = 3\n\"a.b\".c = 4\n",
	"a = 1 # comment\n# c\n[b] # c\nc = [ # c\n  1, # c\n  2,\n]\n",
	"a = \"\xff\"\n",
	"a = \n",
	"a = 1979-05-27T00:32:00-07:00\nb = 1979-05-27 07:32:00.999999+05:30\nc = 1979-05-27t07:32:00z\nd = 1979-05-27T07:32:00+00:00\ne = [1979-05-27T07:32:00-00:30]\n",
	"a = 1979-05-27T07:32:00+24:00\n", "a = 1979-05-27T07:32:00+01:60\n", "a = 1979-05-27T07:32+01:00\n",
	// The same [[array]] header again, and headers between that spell it
	// otherwise or name what is under it or beside it.
	"[[a.b]]\nx = 1\n[[a.b]]\nx = 2\ny.z = 3\n[[ a . b ]]\nx = 4\n[[a.\"b\"]]\n[[a.b]]\nw = {v = 5}\n",
	"[[a]]\nx = 1\n[[a.b]]\ny = 1\n[[a.b]]\ny = 2\n[[a]]\nx = 2\n[[a.b]]\ny = 3\n",
	"[[a]]\n[a.c]\nd = 1\n[[a]]\n[a.c]\nd = 2\n[[a]]\n",
	"[[a]]\n[[b]]\n[[a]]\n[[b]]\n[c]\n[[a]]\n",
	"[[a]]\nx = 1\n[[a]]\nx = 1\nx = 2\n",
	"[[providers.p.q]]\nx = 1\n[[providers.p.q]]\nx = 2\n",
	strings.Repeat("[[a0]]\n[[a1]]\n[[a2]]\n[[a3]]\n[[a4]]\n[[a5]]\n[[a6]]\n[[a7]]\n[[a8]]\n[[a9]]\nx = 1\n", 3),
	"[[a]]\n[[a.b]]\n[[a]]\n[[a.b]]\n[a.b.c]\n[[a.b]]\n[[a]]\n",
}

// TestRepeatedArrayHeaderResolvedOnce: the header of an array of
// tables, repeated for each element with nothing between but the
// element's keys, is resolved key by key once; each next element is
// added where the first was, to the same data and positions as go-toml
// and the walk after it.
func TestRepeatedArrayHeaderResolvedOnce(t *testing.T) {
	var b strings.Builder
	b.WriteString("schema_version = 1\n\n[plugin]\nname = \"crew\"\n")
	for i := range 12 {
		fmt.Fprintf(&b, "\n[[plugin.members]]\nref = \"agent:a-%d\"\nrequirement = \"optional\"\n", i)
		if i%2 == 0 {
			b.WriteString("fallback = { kind = \"inline\", skill = \"skill:guide\" }\n")
		}
	}
	before := headersResolved.Load()
	if !decodeOnceAgrees(t, []byte(b.String())) {
		t.Fatal("left to go-toml, want it decoded once")
	}
	// decodeOnceAgrees walks again after go-toml, which resolves every
	// header: [plugin] and the twelve members'.
	if n := headersResolved.Load() - before - 13; n != 2 {
		t.Errorf("decoding once resolved %d headers key by key, want 2 ([plugin], the first [[plugin.members]])", n)
	}
}

// TestOffsetDateTimesDecodedOnce proves that offset date-times, which
// tool-written provider data holds, are decoded in the one parse, as
// go-toml decodes them.
func TestOffsetDateTimesDecodedOnce(t *testing.T) {
	for _, src := range []string{
		"a = 1979-05-27T07:32:00Z\n",
		"a = 1979-05-27T00:32:00-07:00\nb = 1979-05-27 07:32:00.999999+05:30\nc = 1979-05-27t07:32:00z\nd = 1979-05-27T07:32:00+00:00\n",
		"[providers.claude]\nreviewed = 2025-06-01T09:30:00+02:00\nrows = [{at = 2025-06-01T09:30:00Z}]\n",
	} {
		if !decodeOnceAgrees(t, []byte(src)) {
			t.Errorf("%q: left to go-toml, want it decoded once", src)
		}
	}
}

// TestDecodeOnce holds decodeOnce to go-toml on the cases above and on
// every manifest of the test data, and checks it decodes most of them.
func TestDecodeOnce(t *testing.T) {
	srcs := map[string][]byte{}
	for i, c := range tomlCases {
		srcs["case "+string(rune('a'+i))] = []byte(c)
	}
	err := filepath.WalkDir("../testdata", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".toml") {
			return err
		}
		data, err := os.ReadFile(path)
		srcs[path] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	once := 0
	for _, src := range srcs {
		if decodeOnceAgrees(t, src) {
			once++
		}
	}
	t.Logf("%d of %d manifests decoded once", once, len(srcs))
	if once < len(srcs)/2 {
		t.Errorf("only %d of %d manifests decoded once", once, len(srcs))
	}
}

// FuzzDecodeOnce holds decodeOnce to go-toml on anything it decodes.
func FuzzDecodeOnce(f *testing.F) {
	for _, c := range tomlCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		decodeOnceAgrees(t, src)
	})
}

// generatedShapes are bench/sourcegen's shapes, each a writer of a
// source of n packages.
var generatedShapes = []struct {
	name  string
	write func(dir string, n int) error
}{
	{"pool", func(dir string, n int) error { return sourcegen.Write(dir, n, 0) }},
	{"own", sourcegen.WriteOwn},
	{"skills", sourcegen.WriteSkills},
	{"toolbox", sourcegen.WriteToolbox},
	{"docs", sourcegen.WriteDocs},
	{"styled", sourcegen.WriteStyled},
	{"crew", sourcegen.WriteCrew},
	{"gates", sourcegen.WriteGates},
	{"folders", sourcegen.WriteFolders},
	{"commands", sourcegen.WriteCommands},
}

// TestGeneratedManifestsDecodeOnce checks that validating sources of
// every bench/sourcegen shape decodes each manifest in one parse, without
// go-toml's decoder.
func TestGeneratedManifestsDecodeOnce(t *testing.T) {
	for _, shape := range generatedShapes {
		dir := filepath.Join(t.TempDir(), shape.name)
		if err := shape.write(dir, 3); err != nil {
			t.Fatal(err)
		}
		before := tomlUnmarshalled.Load()
		rep, err := Validate(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Valid {
			t.Fatalf("%s: generated source invalid: %v", shape.name, rep.Diagnostics)
		}
		if n := tomlUnmarshalled.Load() - before; n != 0 {
			t.Errorf("%s: go-toml decoded %d manifests, want 0", shape.name, n)
		}
	}
}

// TestDecodeAllocations: decoding a manifest of the own shape (2.5 KB,
// two tools, three hooks) allocates its data and its positions' paths in
// one buffer (pathBuf), not a string for each of its some 150 paths: 618
// allocations before, 473 with go-toml v2.4.3 and Go 1.26. One manifest
// after another, the walk's maps and short strings are the last one's
// (walkState): 130.
func TestDecodeAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector drops a quarter of what a sync.Pool is given, and instruments allocations: counted without it")
	}
	dir := t.TempDir()
	if err := sourcegen.WriteOwn(dir, 1); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join(dir, "plugins", "own-0000", "PLUGIN.toml"))
	if err != nil {
		t.Fatal(err)
	}
	lim := plan.DraftLimits
	n := testing.AllocsPerRun(20, func() {
		var l diagList
		if decodeManifest(src, &lim, &l) == nil {
			t.Fatalf("not decoded: %v", l.diags)
		}
	})
	if n > 200 {
		t.Errorf("decoding %d bytes made %.0f allocations, want at most 200", len(src), n)
	}
}

// TestWalksShareAParser: one walk after another parses with one parser,
// whose node storage Reset keeps, not a new one grown node by node for
// each manifest (parsers). The collector, which may empty the pool, is
// held off meanwhile, and one P runs the walks: a pool keeps a parser
// for the P that put it.
func TestWalksShareAParser(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector drops a quarter of what a sync.Pool is given")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	dir := filepath.Join(t.TempDir(), "source")
	if err := sourcegen.WriteOwn(dir, 3); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "plugins", "*", "PLUGIN.toml"))
	if err != nil || len(files) != 3 {
		t.Fatalf("want 3 manifests, got %v (%v)", files, err)
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	lim := plan.DraftLimits
	made := parsersMade.Load()
	for range 4 {
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var l diagList
			if decodeManifest(src, &lim, &l) == nil {
				t.Fatalf("%s: %v", f, l.diags)
			}
		}
	}
	if n := parsersMade.Load() - made; n > 1 {
		t.Errorf("12 walks made %d parsers, want at most 1", n)
	}
}

// TestPackageIndexesReused: a worker checks one package after another in
// the same index of spans and the same map of what its walk saw, released
// when the package's positions are taken, not in new ones each package:
// dalo collects no garbage while it validates, so every map made was
// memory faulted in (some 16 KB a package of the own shape).
func TestPackageIndexesReused(t *testing.T) {
	if raceEnabled {
		t.Skip("under the race detector sync.Pool drops what it is given at random")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	dir := filepath.Join(t.TempDir(), "source")
	if err := sourcegen.WriteOwn(dir, 30); err != nil {
		t.Fatal(err)
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	spans, seen := spanIndexesMade.Load(), seenIndexesMade.Load()
	rep := reportJSON(t, dir, Options{})
	if !strings.Contains(rep, `"valid":true`) {
		t.Fatalf("generated source invalid: %s", rep)
	}
	if n := spanIndexesMade.Load() - spans; n > 1 {
		t.Errorf("30 packages made %d indexes of spans, want at most 1", n)
	}
	if n := seenIndexesMade.Load() - seen; n > 1 {
		t.Errorf("30 packages' walks made %d maps of what they saw, want at most 1", n)
	}
}

// TestLargeIndexNotReused: the index of a manifest of more keys than
// maxPooledIndex is dropped when released, not reused: clearing it would
// cost every small manifest after it what the large one grew it to.
func TestLargeIndexNotReused(t *testing.T) {
	if raceEnabled {
		t.Skip("under the race detector sync.Pool drops what it is given at random")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	var b strings.Builder
	b.WriteString("schema_version = 1\n\n")
	for i := range maxPooledIndex + 10 {
		fmt.Fprintf(&b, "[[tool]]\nid = \"t%d\"\n", i)
	}
	lim := plan.DraftLimits
	lim.ArrayEntries = 2 * maxPooledIndex
	var l diagList
	m := decodeManifest([]byte(b.String()), &lim, &l)
	if m == nil {
		t.Fatalf("large manifest not decoded: %v", l.diags)
	}
	if len(m.spans) <= maxPooledIndex {
		t.Fatalf("index of %d keys, want more than %d", len(m.spans), maxPooledIndex)
	}
	m.release()
	made := spanIndexesMade.Load()
	if idx := spanIndex(10); len(idx) != 0 || spanIndexesMade.Load() != made+1 {
		t.Errorf("the index after a large one's release was reused (%d keys), want a new one", len(idx))
	}
}

// TestDecodeOnceHeaderThroughDotted: a header may name a table under one
// dotted keys made (plugin.name = "x", then [[plugin.members]]), and a
// table a header made on the way may get its header later ([a.b], then
// [a]), as TOML allows, and an integer may have a sign and underscores;
// decodeOnce builds all three, where it left such a manifest to go-toml,
// which cost half again a validation of manifests written the first way.
func TestDecodeOnceHeaderThroughDotted(t *testing.T) {
	for _, src := range []string{
		"a.b = 1\n[a.c]\nd = 2\n",
		"[a]\nb.c = 1\n[a.b.d]\ne = 2\n",
		"schema_version = 1\nplugin.name = \"p\"\nplugin.id = \"x.p\"\n[[plugin.members]]\nref = \"skill:s\"\n[[plugin.members]]\nref = \"skill:t\"\n",
		"a.b.c = 1\n[[a.b.d]]\ne = 1\n[a.b.d.f]\ng = 2\n[[a.b.d]]\n",
		"[a.b]\nx = 1\n[a]\ny = 2\n",
		"[x.y.z.w]\n[x]\n[x.y]\n",
		"[[a.b]]\n[a]\nc = 1\n",
		"timeout_ms = 30_000\nb = +1\nc = -1_2_3\nd = +0\ne = 999_999_999_999_999_999\n",
	} {
		if !decodeOnceAgrees(t, []byte(src)) {
			t.Errorf("%q: left to go-toml, want it decoded once", src)
		}
	}
	for _, src := range []string{
		"a.b = 1\n[a]\n",
		"a.b.c = 1\n[a.b]\n",
		"a.b.c = 1\n[[a.b]]\n",
		"a = {b = 1}\n[a.c]\n",
		"[a.b]\n[a]\n[a]\n",
		"[a.b]\n[[a]]\n",
		"[a.b]\n[a]\nb = 1\n",
		"a = 1__0\n", "a = _1\n", "a = 1_\n", "a = 0_1\n", "a = ++1\n", "a = 1_000_000_000_000_000_000\n",
	} {
		if decodeOnceAgrees(t, []byte(src)) {
			t.Errorf("%q: decoded once, want it left to go-toml", src)
		}
	}
}

// TestDecodeOnceFloatsAndDates: a provider's table holds whatever TOML
// writes, such as a model's temperature or the day a setting began; floats
// and local dates and times are decoded in the one parse, as go-toml
// decodes them. Each was a second decode, a third more CPU for packages of
// the own shape with one such value. Infinity and NaN are left to
// go-toml; offset date-times are decoded too (TestOffsetDateTimesDecodedOnce).
func TestDecodeOnceFloatsAndDates(t *testing.T) {
	for _, src := range []string{
		"[providers.claude]\ntemperature = 0.2\nplanck = 6.626e-34\nn = -1_000.5\nz = +0.0\ne = 1E3\nf = 9_007_199_254_740_993.0\n",
		"[providers.claude]\nday = 1979-05-27\nat = 07:32:00.999\nwhen = 1979-05-27T07:32:00\nthen = 1979-05-27 07:32:00.5\n",
		"[providers.claude]\nxs = [1.5, 2.5]\nt = { since = 2020-01-01 }\n",
	} {
		if !decodeOnceAgrees(t, []byte(src)) {
			t.Errorf("%q: left to go-toml", src)
		}
	}
	for _, src := range []string{
		"[providers.claude]\nx = inf\n",
		"[providers.claude]\nx = -nan\n",
		"[providers.claude]\nx = 1e999\n",
	} {
		if decodeOnceAgrees(t, []byte(src)) {
			t.Errorf("%q: decoded once, want it left to go-toml", src)
		}
	}
}

// TestShortStringsKept: the short keys and string values of one manifest
// are the strings of the one before, the long ones each manifest's own,
// and however many names a source holds, the walks keep at most
// maxShortStrings.
func TestShortStringsKept(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // a pool keeps a state for the P that put it
	lim := plan.DraftLimits
	long := strings.Repeat("x", maxShortString+1)
	decode := func(src string) map[string]any {
		t.Helper()
		var l diagList
		m := decodeManifest([]byte(src), &lim, &l)
		if m == nil {
			t.Fatalf("not decoded: %v", l.diags)
		}
		return m.data
	}
	doc := "[plugin]\nname = \"optional\"\nid = \"" + long + "\"\n"
	a, b := decode(doc)["plugin"].(map[string]any), decode(doc)["plugin"].(map[string]any)
	if !raceEnabled { // the race detector drops some of what a sync.Pool is given
		if unsafe.StringData(a["name"].(string)) != unsafe.StringData(b["name"].(string)) {
			t.Errorf("a short value decoded twice is two strings")
		}
		for k := range a {
			for k2 := range b {
				if k == k2 && unsafe.StringData(k) != unsafe.StringData(k2) {
					t.Errorf("the key %s decoded twice is two strings", k)
				}
			}
		}
	}
	if unsafe.StringData(a["id"].(string)) == unsafe.StringData(b["id"].(string)) {
		t.Errorf("a long value decoded twice is one string")
	}
	for i := range 3 * maxShortStrings {
		decode(fmt.Sprintf("[plugin]\nname = \"n%d\"\n", i))
	}
	st := parsers.Get().(*walkState)
	defer st.put()
	if len(st.short) > maxShortStrings {
		t.Errorf("the walks keep %d short strings, want at most %d", len(st.short), maxShortStrings)
	}
}
