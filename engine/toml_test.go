package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestDuplicateKeys proves that a document go-toml refuses for defining
// something twice is told apart by the walk, not by go-toml's wording, and
// that the finding names the full field path of the second definition.
func TestDuplicateKeys(t *testing.T) {
	head := "schema_version = 1\n[plugin]\nname = \"a\"\ndescription = \"A package.\"\n"
	tool := "[[tool]]\nschema_version = 1\nid = \"t\"\n"
	tests := []struct {
		name, src   string
		code, field string
		pos         Pos
		msg         string
	}{
		{"key in a table", head + "name = \"b\"\n",
			"E009", "plugin.name", Pos{5, 1}, "key plugin.name is already defined at line 3, column 1"},
		{"key at the root", "schema_version = 1\nschema_version = 2\n",
			"E009", "schema_version", Pos{2, 1}, "key schema_version is already defined at line 1, column 1"},
		{"table", head + "[plugin]\n",
			"E009", "plugin", Pos{5, 2}, "table plugin is already defined at line 2, column 2"},
		{"key in an array of tables", head + tool + "[[tool.inputs]]\nname = \"x\"\nname = \"y\"\n",
			"E009", "tool[0].inputs[0].name", Pos{10, 1}, "key tool[0].inputs[0].name is already defined at line 9, column 1"},
		{"key in a later element", head + tool + tool + "[[tool.inputs]]\nname = \"x\"\ntype = \"string\"\ntype = \"path\"\n",
			"E009", "tool[1].inputs[0].type", Pos{14, 1}, "key tool[1].inputs[0].type is already defined at line 13, column 1"},
		{"dotted key into a value", head + "[providers]\nx = 1\nx.y = 2\n",
			"E009", "providers.x", Pos{7, 1}, "key providers.x is already defined at line 6, column 1"},
		{"header over an inline table", head + "[providers]\nx = {a = 1}\n[providers.x]\n",
			"E009", "providers.x", Pos{7, 12}, "table providers.x is already defined at line 6, column 1"},
		{"array of tables over an array", head + "[providers]\nx = [1]\n[[providers.x]]\n",
			"E009", "providers.x", Pos{7, 13}, "table providers.x is already defined at line 6, column 1"},
		{"syntax error", head + "version = \"1\n",
			"E008", "", Pos{5, 13}, "basic strings cannot have new lines"},
		{"syntax error before a duplicate", head + "version = \"1\nname = \"b\"\n",
			"E008", "", Pos{5, 13}, "basic strings cannot have new lines"},
	}
	lim := &Limits{TOMLNesting: 32, StringBytes: 16384, ArrayEntries: 1024}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &diagList{}
			if m := decodeManifest([]byte(tt.src), lim, l); m != nil {
				t.Fatalf("decoded a document go-toml should refuse")
			}
			if len(l.diags) != 1 {
				t.Fatalf("got %d diagnostics, want 1: %v", len(l.diags), l.diags)
			}
			d := l.diags[0]
			if d.Code != tt.code || d.Field != tt.field || (Pos{d.Line, d.Column}) != tt.pos {
				t.Errorf("got %s %q at %d:%d, want %s %q at %d:%d (%s)", d.Code, d.Field, d.Line, d.Column, tt.code, tt.field, tt.pos.Line, tt.pos.Column, d.Message)
			}
			if tt.msg != "" && d.Message != tt.msg {
				t.Errorf("message %q, want %q", d.Message, tt.msg)
			}
		})
	}
}

// TestRedefinitionsTOMLAllows proves that what TOML allows to be defined
// again (a table a header made on the way, an array of tables growing)
// decodes without a finding.
func TestRedefinitionsTOMLAllows(t *testing.T) {
	src := "schema_version = 1\n[plugin.x]\na = 1\n[plugin]\nname = \"a\"\ndescription = \"d\"\n" +
		"[[tool]]\nid = \"a\"\n[[tool]]\nid = \"b\"\n[[tool.inputs]]\nname = \"x\"\n[[tool.inputs]]\nname = \"x\"\n"
	l := &diagList{}
	m := decodeManifest([]byte(src), &Limits{TOMLNesting: 32, StringBytes: 16384, ArrayEntries: 1024}, l)
	if m == nil || len(l.diags) != 0 {
		t.Fatalf("refused a valid document: %v", l.diags)
	}
	if _, ok := m.spans["tool[1].inputs[1].name"]; !ok {
		t.Errorf("no position for tool[1].inputs[1].name")
	}
}

// TestReaderLimits proves the limits the reader enforces before anything
// else looks at the data, inside providers as elsewhere, each at its own
// position.
func TestReaderLimits(t *testing.T) {
	head := "schema_version = 1\n[plugin]\nname = \"a\"\ndescription = \"A package.\"\n"
	tests := []struct {
		name, src   string
		code, field string
		pos         Pos
	}{
		{"long key in a provider table", head + "[providers.x]\n\"" + strings.Repeat("k", 20000) + "\" = 1\n",
			"E015", "providers.x", Pos{6, 1}},
		{"long key in a header", head + "[providers." + strings.Repeat("k", 16385) + "]\n",
			"E015", "providers", Pos{5, 12}},
		{"long dotted key", head + "[providers.x]\na." + strings.Repeat("k", 16385) + " = 1\n",
			"E015", "providers.x.a", Pos{6, 3}},
		{"long key in an inline table", head + "[providers.x]\na = [{ " + strings.Repeat("k", 16385) + " = 1 }]\n",
			"E015", "providers.x.a[0]", Pos{6, 8}},
		{"long string in provider data", head + "[providers.x]\na = [[\"" + strings.Repeat("s", 16385) + "\"]]\n",
			"E015", "providers.x.a[0][0]", Pos{6, 7}},
		{"empty arrays nested too deep", head + "[providers.x]\na = [\n" + strings.Repeat("[", 30) + strings.Repeat("]", 30) + "\n]\n",
			"E014", "providers.x.a[0]" + strings.Repeat("[0]", 29), Pos{7, 30}},
		{"empty arrays too deep outside providers", head + "[[tool]]\nargv = [\n  " + strings.Repeat("[", 31) + strings.Repeat("]", 31) + "]\n",
			"E014", "tool[0].argv[0]" + strings.Repeat("[0]", 29), Pos{7, 32}},
		{"array of tables too long", head + strings.Repeat("[[providers.x.t]]\n", 1025),
			"E016", "providers.x.t", Pos{1029, 15}},
	}
	lim := &Limits{TOMLNesting: 32, StringBytes: 16384, ArrayEntries: 1024}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &diagList{}
			if m := decodeManifest([]byte(tt.src), lim, l); m != nil {
				t.Fatalf("decoded a document over a limit")
			}
			if len(l.diags) != 1 {
				t.Fatalf("got %d diagnostics, want 1: %v", len(l.diags), l.diags)
			}
			d := l.diags[0]
			if d.Code != tt.code || d.Field != tt.field || (Pos{d.Line, d.Column}) != tt.pos {
				t.Errorf("got %s %q at %d:%d, want %s %q at %d:%d (%s)", d.Code, d.Field, d.Line, d.Column, tt.code, tt.field, tt.pos.Line, tt.pos.Column, d.Message)
			}
		})
	}
}

// TestProvidersNotIndexed proves that what providers.<name> holds is read
// within the limits but not indexed: a megabyte of it adds no positions.
func TestProvidersNotIndexed(t *testing.T) {
	var b strings.Builder
	b.WriteString("schema_version = 1\n[plugin]\nname = \"a\"\ndescription = \"A package.\"\n[providers.x]\n")
	for i := range 500 {
		fmt.Fprintf(&b, "a%d = [%s7]\n", i, strings.Repeat("7,", 999))
	}
	b.WriteString("[providers.y]\nb = { c = [{ d = 1 }] }\n")
	l := &diagList{}
	m := decodeManifest([]byte(b.String()), &Limits{TOMLNesting: 32, StringBytes: 16384, ArrayEntries: 1024}, l)
	if m == nil {
		t.Fatalf("refused: %v", l.diags)
	}
	if len(m.spans) > 20 {
		t.Errorf("%d positions indexed, want those of the fields outside providers.<name>", len(m.spans))
	}
	for _, p := range []string{"plugin.name", "providers.x", "providers.y"} {
		if _, ok := m.spans[p]; !ok {
			t.Errorf("no position for %s", p)
		}
	}
	// The shape sees each provider's table, not what it holds.
	shape := shapeData(m.data)["providers"].(map[string]any)
	if x := shape["x"].(map[string]any); len(x) != 0 {
		t.Errorf("shape data holds %d entries of providers.x", len(x))
	}
}

// TestLineStarts: the start of every line, in one allocation.
func TestLineStarts(t *testing.T) {
	for _, src := range []string{"", "a", "\n", "a\nb", "a\nb\n", "\n\n", "k = 1\r\n[t]\r\nx = \"\"\"\n\n\"\"\"\n"} {
		want := []int{0}
		for i := 0; i < len(src); i++ {
			if src[i] == '\n' {
				want = append(want, i+1)
			}
		}
		if got := lineStarts([]byte(src)); !slices.Equal(got, want) {
			t.Errorf("lineStarts(%q) = %v, want %v", src, got, want)
		}
	}
	if raceEnabled {
		return
	}
	src := []byte(strings.Repeat("key = \"value\"\n", 200))
	if n := testing.AllocsPerRun(10, func() { lineStarts(src) }); n != 1 {
		t.Errorf("lineStarts allocates %v times, want 1", n)
	}
}
