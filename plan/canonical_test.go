package plan

import (
	"bytes"
	"testing"
)

// canonicalCases are binds with every field set, nil, empty or odd: what
// the hand encoder writes of each must be encoding/json's bytes.
func canonicalCases(s string, n int64, b bool) []any {
	tb := ToolBinds{
		Package: PackageIdentity{Source: s, Name: "n", ID: s}, Tool: s, Runtime: "python", Entry: s,
		Argv: []string{s, ""}, Env: []string{}, Cwd: s, Inputs: []PlannedInput{{Name: s, Type: "string", Required: b}, {}},
		Capabilities: nil, Platforms: []string{s},
		Files: map[string]FileDigest{s: {SHA256: s, Size: n, Executable: b}, "z": {Size: -n}, "": {Executable: !b}},
	}
	hb := HookBinds{
		Package: PackageIdentity{Source: s}, Provider: s, Hook: s, Tool: s, ToolDigest: s,
		Subject: s, Phase: s, NativeEvent: s, AlsoEvents: []string{s}, Effect: s, Requirement: s,
		Matcher: []string{}, Bindings: []PlannedBinding{{Input: s, Field: s, Type: s}, {}}, TimeoutMS: int(n),
		FailurePolicy: s, ErrorVisibility: s,
	}
	return []any{
		tb, &tb, &ToolBinds{}, hb, &hb, &HookBinds{}, &HookBinds{AlsoEvents: []string{}},
		tb.Files, map[string]FileDigest{}, map[string]FileDigest(nil),
	}
}

func checkCanonical(t *testing.T, s string, n int64, b bool) {
	t.Helper()
	for _, v := range canonicalCases(s, n, b) {
		got, err := Canonical(v)
		want, werr := canonicalJSON(v)
		if err != nil || werr != nil || !bytes.Equal(got, want) {
			t.Fatalf("Canonical(%#v):\n%s, %v\nencoding/json:\n%s, %v", v, got, err, want, werr)
		}
	}
}

// The hand encoder writes binds byte for byte as encoding/json does.
func TestCanonicalAgrees(t *testing.T) {
	for _, s := range []string{"", odd, "\x00\x1f\x7f\b\f\r", "\xff\xfe", "a\u2029b", "\xe2\x80", "日本"} {
		checkCanonical(t, s, 1<<40, true)
		checkCanonical(t, s, 0, false)
	}
}

// FuzzCanonical: whatever strings and numbers binds hold, the hand encoder
// writes encoding/json's bytes, so that a digest never depends on which
// wrote it.
func FuzzCanonical(f *testing.F) {
	f.Add(odd, int64(36), true)
	f.Add("\xff<\u2028", int64(-1), false)
	f.Fuzz(checkCanonical)
}
