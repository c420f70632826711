package plan

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// odd holds what a store's strings may hold and encoding/json escapes:
// HTML characters, quotes, controls, non-ASCII, U+2028.
const odd = "a <b> & \"c\" \\ \t\n é \u2028 \U0001F600 /"

// richHook is a planned hook with every field set, some to odd strings.
func richHook(pkg, id string) PlannedHook {
	return PlannedHook{
		Package: pkg, Hook: id, Subject: "tool_call", Phase: "before", Effect: "gate", Requirement: "required",
		ToolNames: []string{"Bash", odd}, TimeoutMS: 5000, FailurePolicy: "fail_closed", ErrorVisibility: "model_and_user",
		Bindings:  []PlannedBinding{{Input: "cmd", Field: "tool.input", Type: "string"}},
		ToolGrant: GrantRef{ID: "claude+s+n+tool+t", Digest: "00ff"},
		HookGrant: GrantRef{ID: "claude+s+n+hook+" + id, Digest: "ff00"},
		Tool: PlannedTool{
			ID: "t", Root: "/store/staged/abc", Runtime: "python", Entry: "main.py",
			Argv: []string{"--cmd", "${input.cmd}", odd}, Env: []string{"HOME"},
			Inputs: []PlannedInput{{Name: "cmd", Type: "string", Required: true}, {Name: "x", Type: "boolean"}},
			Files:  map[string]string{"main.py": "aa", "lib/" + odd: "bb"},
		},
	}
}

// richNative is an event's native protocol with every field set.
func richNative() Native {
	return Native{
		Harness: "Claude Code", Event: "PreToolUse",
		Fields:   []Field{{Field: "tool.name", Key: "tool_name", Type: "string"}, {Field: "session.cwd", Key: "cwd", Type: "path"}},
		ActorKey: "agent_id",
		Channels: map[string]Output{
			PartDeny: {Stdout: map[string]any{"hookSpecificOutput": map[string]any{
				"permissionDecision": "deny", "permissionDecisionReason": "$reason",
				"n": 1.5, "big": -2e10, "t": true, "nil": nil, "list": []any{"a", 0.0, false, map[string]any{}}, "empty": []any{},
			}}, UserOnly: true},
			PartContext: {Stderr: "$context " + odd, Exit: 2},
			PartUser:    {},
		},
		Undelivered: map[string]string{"continue": odd},
	}
}

// corpus is what install writes and dispatch reads, in the forms it is
// written: the index files compact, the grants indented.
func corpus(t testing.TB) map[string][]byte {
	mustMarshal := func(v any, indent bool) []byte {
		var b []byte
		var err error
		if indent {
			b, err = json.MarshalIndent(v, "", "  ")
		} else {
			b, err = json.Marshal(v)
		}
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tb := ToolBinds{
		Package: PackageIdentity{Source: "s", Name: "n", ID: "example.com/n"}, Tool: "t", Runtime: "python", Entry: "main.py",
		Argv: []string{}, Env: nil, Cwd: "", Inputs: []PlannedInput{{Name: "cmd", Type: "string", Required: true}},
		Capabilities: []string{"network"}, Platforms: []string{},
		Files: map[string]FileDigest{"main.py": {SHA256: "aa", Size: 36, Executable: true}, odd: {SHA256: "bb", Size: 1 << 40}},
	}
	hb := HookBinds{
		Package: PackageIdentity{Source: "s", Name: "n"}, Provider: "claude", Hook: "h", Tool: "t", ToolDigest: "00",
		Subject: "tool_call", Phase: "before", NativeEvent: "PreToolUse", AlsoEvents: []string{"PreSkillShellCommand"},
		Effect: "gate", Requirement: "optional", Matcher: []string{"Bash"}, Bindings: nil, TimeoutMS: 120000,
		FailurePolicy: "report", ErrorVisibility: "user",
	}
	out := map[string][]byte{
		"event":        mustMarshal(EventFile{Schema: Schema, Provider: "claude", Version: "2.1.332", Event: "PreToolUse", Native: richNative(), Hooks: []PlannedHook{richHook("s:a", "one")}, Tools: []string{"Bash"}}, false),
		"event-empty":  mustMarshal(EventFile{Schema: Schema, Hooks: []PlannedHook{}}, false),
		"bucket":       mustMarshal(bucket{Schema: Schema, Tool: "Bash", Hooks: []PlannedHook{richHook("s:a", "one"), richHook("s:b", odd)}}, false),
		"bucket-empty": mustMarshal(bucket{Schema: Schema, Tool: "Bash", Hooks: []PlannedHook{{}}}, false),
	}
	for name, binds := range map[string]any{"tool": &tb, "hook": &hb} {
		for _, id := range []string{"", "+" + odd} {
			g, err := NewGrant(name, "claude", tb.Package, "t"+id, binds, "2026-12-02T19:00:00Z")
			if err != nil {
				t.Fatal(err)
			}
			out["grant-"+name+id] = mustMarshal(g, true)
		}
	}
	return out
}

// decoded is what the hand reader makes of data as what dispatch reads
// (an event file, a bucket, a grant-tool or a grant-hook) and whether it
// read it (did not fail), and what encoding/json makes of it.
func decoded(data []byte, as string) (fast, slow any, ok bool, slowErr error) {
	r := &reader{b: data}
	switch as {
	case "event":
		var f, s EventFile
		r.eventFile(&f)
		slowErr = json.Unmarshal(data, &s)
		return f, s, r.ok(), slowErr
	case "bucket":
		var f, s bucket
		r.bucket(&f)
		slowErr = json.Unmarshal(data, &s)
		return f, s, r.ok(), slowErr
	}
	kind := strings.TrimPrefix(as, "grant-")
	g, binds := r.grant(kind)
	var sg Grant
	var sb any = new(ToolBinds)
	if kind == GrantHook {
		sb = new(HookBinds)
	}
	slowErr = json.Unmarshal(data, &struct {
		*Grant
		Binds any `json:"binds"`
	}{&sg, sb})
	return [2]any{*g, binds}, [2]any{sg, sb}, r.ok(), slowErr
}

// The hand reader reads everything install and approve write, as
// encoding/json does: dispatch must never fall back to reflection for an
// honest store.
func TestReadAgrees(t *testing.T) {
	for name, data := range corpus(t) {
		as, _, _ := strings.Cut(name, "-")
		if as == "grant" {
			as, _, _ = strings.Cut(name, "+") // grant-tool, grant-hook
		}
		fast, slow, ok, err := decoded(data, as)
		if err != nil || !ok {
			t.Fatalf("%s as %s: read %t, encoding/json: %v\n%s", name, as, ok, err, data)
		}
		if !reflect.DeepEqual(fast, slow) {
			t.Errorf("%s:\nreader        %#v\nencoding/json %#v", name, fast, slow)
		}
	}
}

// What the reader does not read as encoding/json would, it leaves to it:
// decodeJSON's value and error are then encoding/json's.
func TestReadLeaves(t *testing.T) {
	for _, in := range []string{
		`{"Schema":6}`,                      // a key matched by case
		`{"schema":6,"schema":6}`,           // a key held twice
		`{"schema":6.0}`,                    // a fraction
		`{"schema":1e1}`,                    // an exponent
		`{"schema":99999999999999999999}`,   // out of range
		`{"tool":"\ud800"}`,                 // a lone surrogate
		"{\"tool\":\"\xff\"}",               // invalid UTF-8
		`{"tool":"a","extra":1}`,            // a key no field has
		`{"tool":"a"} x`,                    // something after
		`{"tool":"a",}`,                     // a syntax error
		`{"hooks":[{"tool":{"argv":[1]}}]}`, // a type error
		`{"hooks":[{"tool":{"files":[]}}]}`, // an array for a map
		`{"tool":"a"`,                       // cut short
		`{"schema":-}`,                      // not a number
		`{"schema":01}`,                     // a leading zero
		`{"tool":"` + "\x01" + `"}`,         // a control character
		`[]`,                                // not an object
		`{"hooks":[{"tool":{"root":tru}}]}`, // not a literal
	} {
		r := &reader{b: []byte(in)}
		var b bucket
		r.bucket(&b)
		if r.ok() {
			t.Errorf("the reader read %q", in)
		}
		var got, want bucket
		gotErr := decodeJSON([]byte(in), &got)
		wantErr := json.Unmarshal([]byte(in), &want)
		if !reflect.DeepEqual(got, want) || (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
			t.Errorf("%q: decodeJSON %#v, %v; encoding/json %#v, %v", in, got, gotErr, want, wantErr)
		}
	}
}

// FuzzRead: wherever the hand reader reads bytes, as an index file or a
// grant, encoding/json reads them to the same value.
func FuzzRead(f *testing.F) {
	for _, data := range corpus(f) {
		f.Add(data)
	}
	f.Add([]byte(`{"schema":6,"tool":"a\u00e9\/\n","hooks":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, as := range []string{"event", "bucket"} {
			fast, slow, ok, err := decoded(data, as)
			if ok && (err != nil || !reflect.DeepEqual(fast, slow)) {
				t.Fatalf("as %s, %q:\nreader        %#v\nencoding/json %#v, %v", as, data, fast, slow, err)
			}
		}
		for _, kind := range []string{GrantTool, GrantHook} {
			fast, slow, ok, err := decoded(data, "grant-"+kind)
			if ok && (err != nil || !reflect.DeepEqual(fast, slow)) {
				t.Fatalf("as a %s grant, %q:\nreader        %#v\nencoding/json %#v, %v", kind, data, fast, slow, err)
			}
			g, binds, err := DecodeGrant(data, kind)
			if !ok && err == nil && !reflect.DeepEqual([2]any{*g, binds}, slow) {
				t.Fatalf("as a %s grant, %q: DecodeGrant's %#v %#v, not encoding/json's %#v", kind, data, g, binds, slow)
			}
		}
	})
}

// The index WriteIndex writes is read by hand, whole.
func TestReadIndexWritten(t *testing.T) {
	dir := t.TempDir()
	p := testPlan("1", richHook("s:a", "one"), richHook("s:b", "two"))
	p.Natives["PreToolUse"] = richNative()
	if err := WriteIndex(dir, p, nil); err != nil {
		t.Fatal(err)
	}
	files, err := indexFiles(filepath.Join(dir, "claude.d", mustReadlink(t, filepath.Join(dir, "claude.d", Pointer))))
	if err != nil || len(files) < 3 {
		t.Fatalf("index files %v, %v", files, err)
	}
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		r := &reader{b: data}
		if filepath.Base(filepath.Dir(name)) == "PreToolUse" {
			r.bucket(&bucket{})
		} else {
			r.eventFile(&EventFile{})
		}
		if !r.ok() {
			t.Errorf("%s: the reader failed at byte %d", name, r.i)
		}
	}
}

func mustReadlink(t *testing.T, name string) string {
	s, err := os.Readlink(name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// FuzzDecodeValue: wherever DecodeValue reads bytes, encoding/json reads
// them into an any to the same value.
func FuzzDecodeValue(f *testing.F) {
	for _, data := range corpus(f) {
		f.Add(data)
	}
	f.Add([]byte(`{"a":[1,-0.5e3,true,null,{"b":"\u00e9\n"}],"c":{}}`))
	f.Add([]byte(`{"a":1,"a":2}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, ok := DecodeValue(data)
		if !ok {
			return
		}
		var want any
		if err := json.Unmarshal(data, &want); err != nil || !reflect.DeepEqual(v, want) {
			t.Fatalf("%q: DecodeValue %#v; encoding/json %#v, %v", data, v, want, err)
		}
	})
}

// FuzzDecodeObject: wherever DecodeObject reads bytes, they are one JSON
// object, and encoding/json reads each wanted key to the same value.
func FuzzDecodeObject(f *testing.F) {
	for _, data := range corpus(f) {
		f.Add(data)
	}
	f.Add([]byte(`{"ab":[1,-0.5e3,true,null,{"b":"\u00e9\n"}],"c":{"d":"\ud83d\ude00 \"x\"\t"},"ef":"x\u0041y"}`))
	f.Add([]byte(`{"ab":1,"ab":2,"c":3,"c":4}`))
	f.Add([]byte("{\"ab\":\"\xff\",\"c\":\"\xff\"}"))
	f.Add([]byte(`{"c":[[[[{"x":"\/\b\f\r"}]]]], "ab" : false }`))
	want := func(key string) bool { return len(key)%2 == 0 }
	f.Fuzz(func(t *testing.T, data []byte) {
		values, ok := DecodeObject(data, want)
		if !ok {
			return
		}
		var obj map[string]any
		if err := json.Unmarshal(data, &obj); err != nil || obj == nil {
			t.Fatalf("%q: DecodeObject read %#v; encoding/json %v, %v", data, values, obj, err)
		}
		for k, v := range obj {
			if got, held := values[k]; held != want(k) || held && !reflect.DeepEqual(got, v) {
				t.Fatalf("%q: DecodeObject holds %q as %#v (%t); encoding/json %#v", data, k, got, held, v)
			}
		}
		for k := range values {
			if _, held := obj[k]; !held {
				t.Fatalf("%q: DecodeObject holds %q, encoding/json not", data, k)
			}
		}
	})
}

// TestPlainRun: plainRun stops at the first quote, backslash or control
// byte wherever it lies in the eight-byte steps, and nowhere else.
func TestPlainRun(t *testing.T) {
	for _, stop := range []byte{'"', '\\', 0, '\n', 0x1f} {
		for n := range 20 {
			for at := 0; at <= n; at++ {
				b := bytes.Repeat([]byte{'a'}, n)
				for i := range b {
					b[i] = byte(0x20 + (i*37)%224) // every byte but the stops, UTF-8 or not
					if b[i] == '"' || b[i] == '\\' {
						b[i] = 0x7f
					}
				}
				want := n
				if at < n {
					b[at] = stop
					want = at
				}
				if got := plainRun(b); got != want {
					t.Errorf("plainRun(%q) = %d, want %d", b, got, want)
				}
			}
		}
	}
}
