package instruction

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

var (
	design = Asset{
		ID:      ID{Source: "company", Selector: "design-context"},
		Package: "company:design-review",
		Content: []byte("# Design context\n\n- Prefer design tokens.\n"),
	}
	tone = Asset{
		ID:      ID{Source: "company", Selector: "tone"},
		Package: "company:writing",
		Content: []byte("Write plainly.\n"),
	}
)

// wantBlock spells out a block as the documented marker format says,
// independently of blockText.
func wantBlock(in Asset, body, eol string) string {
	sum := sha256.Sum256([]byte(body))
	return "<!-- dalo:begin instruction:" + in.ID.Selector + " source=" + in.ID.Source + " package=" + in.Package + " sha256=" + hex.EncodeToString(sum[:]) + " -->" + eol +
		body +
		"<!-- dalo:end instruction:" + in.ID.Selector + " source=" + in.ID.Source + " -->" + eol
}

var (
	designLF   = wantBlock(design, "# Design context\n\n- Prefer design tokens.\n", "\n")
	designCRLF = wantBlock(design, "# Design context\r\n\r\n- Prefer design tokens.\r\n", "\r\n")
	toneLF     = wantBlock(tone, "Write plainly.\n", "\n")
)

// TestEnableDisableBytes enables design-context in a file, compares the
// result byte for byte, and checks that disabling restores the original.
func TestEnableDisableBytes(t *testing.T) {
	for _, tc := range []struct {
		name, before, after string
		newlineAdded        bool
	}{
		{name: "LF", before: "# Mine\n\nKeep this.\n", after: "# Mine\n\nKeep this.\n\n" + designLF},
		{name: "CRLF", before: "# Mine\r\n\r\nKeep this.\r\n", after: "# Mine\r\n\r\nKeep this.\r\n\r\n" + designCRLF},
		{name: "BOM", before: "\ufeff# Mine\n", after: "\ufeff# Mine\n\n" + designLF},
		{name: "BOM only", before: "\ufeff", after: "\ufeff" + designLF},
		{name: "BOM CRLF", before: "\ufeff# Mine\r\n", after: "\ufeff# Mine\r\n\r\n" + designCRLF},
		{name: "no final newline", before: "# Mine\nKeep this.", after: "# Mine\nKeep this.\n\n" + designLF, newlineAdded: true},
		{name: "CRLF no final newline", before: "# Mine\r\nKeep this.", after: "# Mine\r\nKeep this.\r\n\r\n" + designCRLF, newlineAdded: true},
		{name: "single line no newline", before: "x", after: "x\n\n" + designLF, newlineAdded: true},
		{name: "empty", before: "", after: designLF},
		{name: "trailing blank lines", before: "# Mine\n\n\n", after: "# Mine\n\n\n\n" + designLF},
		{name: "mixed endings follow the first line", before: "a\r\nb\nc\n", after: "a\r\nb\nc\n\r\n" + designCRLF},
		{
			name:   "other markers are user text",
			before: "<!-- BEGIN managed by other -->\nx\n<!-- END -->\nSee `<!-- dalo:begin instruction:x source=s -->` quoted.\n  <!-- dalo:end instruction:x source=s -->\n<!-- dalo is great -->\n",
			after:  "<!-- BEGIN managed by other -->\nx\n<!-- END -->\nSee `<!-- dalo:begin instruction:x source=s -->` quoted.\n  <!-- dalo:end instruction:x source=s -->\n<!-- dalo is great -->\n\n" + designLF,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := Enable("CLAUDE.md", []byte(tc.before), design, false)
			if err != nil {
				t.Fatal(err)
			}
			if e.Action != ActionAdd || string(e.After) != tc.after || e.NewlineAdded != tc.newlineAdded {
				t.Fatalf("enable: action %s, newline added %v, got\n%q\nwant\n%q", e.Action, e.NewlineAdded, e.After, tc.after)
			}
			again, err := Enable("CLAUDE.md", e.After, design, false)
			if err != nil {
				t.Fatal(err)
			}
			if again.Action != ActionUnchanged || string(again.After) != tc.after {
				t.Fatalf("enable twice: action %s, got %q", again.Action, again.After)
			}
			d, err := Disable("CLAUDE.md", e.After, design.ID, false, e.NewlineAdded)
			if err != nil {
				t.Fatal(err)
			}
			if string(d.After) != tc.before {
				t.Fatalf("disable: got\n%q\nwant\n%q", d.After, tc.before)
			}
			if !strings.HasSuffix(tc.after, string(d.Block)) || !strings.HasPrefix(string(d.Block), "<!-- dalo:begin ") {
				t.Fatalf("disable removed %q, not the block", d.Block)
			}
		})
	}
}

// TestTwoInstructions enables two blocks in one file and disables them in
// both orders: each disable leaves what enabling only the other would.
func TestTwoInstructions(t *testing.T) {
	for _, before := range []string{"# Mine\n", "# Mine", "", "\ufeffa\r\nb"} {
		one := mustEnable(t, before, design)
		both := mustEnable(t, string(one.After), tone)
		toneOnly := mustEnable(t, before, tone)
		newline := one.NewlineAdded

		d, err := Disable("f", both.After, design.ID, false, newline)
		if err != nil {
			t.Fatal(err)
		}
		if string(d.After) != string(toneOnly.After) {
			t.Errorf("%q: disabling the first block left\n%q\nwant\n%q", before, d.After, toneOnly.After)
		}
		d, err = Disable("f", d.After, tone.ID, false, newline)
		if err != nil {
			t.Fatal(err)
		}
		if string(d.After) != before {
			t.Errorf("%q: disabling both left %q", before, d.After)
		}

		d, err = Disable("f", both.After, tone.ID, false, newline)
		if err != nil {
			t.Fatal(err)
		}
		if string(d.After) != string(one.After) {
			t.Errorf("%q: disabling the second block left\n%q\nwant\n%q", before, d.After, one.After)
		}
	}
}

func mustEnable(t *testing.T, before string, in Asset) *Edit {
	t.Helper()
	e, err := Enable("f", []byte(before), in, false)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestUserText checks that text the user writes around and after dalo's
// blocks is kept when a block is updated or removed.
func TestUserText(t *testing.T) {
	e := mustEnable(t, "top\n", design)
	withAfter := string(e.After) + "\nbelow, added by the user\n"

	changed := design
	changed.Content = []byte("New guidance.\n")
	u, err := Enable("f", []byte(withAfter), changed, false)
	if err != nil {
		t.Fatal(err)
	}
	want := "top\n\n" + wantBlock(changed, "New guidance.\n", "\n") + "\nbelow, added by the user\n"
	if u.Action != ActionUpdate || string(u.After) != want {
		t.Fatalf("update: %s\n%q\nwant\n%q", u.Action, u.After, want)
	}
	d, err := Disable("f", u.After, design.ID, false, false)
	if err != nil {
		t.Fatal(err)
	}
	if string(d.After) != "top\n\nbelow, added by the user\n" {
		t.Fatalf("disable: %q", d.After)
	}

	// The user's last line had no line ending, so enable added one; text
	// the user then writes after the block keeps its own final newline.
	e = mustEnable(t, "Use tabs.", design)
	d, err = Disable("f", append(e.After, "\nMy text after dalo.\n"...), design.ID, false, e.NewlineAdded)
	if err != nil {
		t.Fatal(err)
	}
	if want := "Use tabs.\n\nMy text after dalo.\n"; string(d.After) != want {
		t.Fatalf("disable after user text: %q, want %q", d.After, want)
	}
}

func TestInstructionContentNormalized(t *testing.T) {
	in := design
	in.Content = []byte("\ufeffline one\r\nline two")
	e := mustEnable(t, "a\n", in)
	if want := "a\n\n" + wantBlock(in, "line one\nline two\n", "\n"); string(e.After) != want {
		t.Fatalf("got %q\nwant %q", e.After, want)
	}
	in.Content = []byte("ok\n<!-- dalo:end instruction:x source=y -->\n")
	if _, err := Enable("f", nil, in, false); err == nil || !strings.Contains(err.Error(), ":2: an instruction cannot contain a dalo marker line") {
		t.Fatalf("marker in instruction: %v", err)
	}
}

func TestConflict(t *testing.T) {
	e := mustEnable(t, "mine\n", design)
	edited := strings.Replace(string(e.After), "Prefer design tokens.", "Prefer my tokens.", 1)

	for _, op := range []string{"enable", "disable"} {
		var err error
		if op == "enable" {
			_, err = Enable("CLAUDE.md", []byte(edited), design, false)
		} else {
			_, err = Disable("CLAUDE.md", []byte(edited), design.ID, false, false)
		}
		var ce *ConflictError
		if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), "CLAUDE.md:3: the block of instruction:design-context (source company) was edited") {
			t.Fatalf("%s an edited block: %v", op, err)
		}
	}

	f, err := Enable("CLAUDE.md", []byte(edited), design, true)
	if err != nil {
		t.Fatal(err)
	}
	if f.Action != ActionTakeOver || string(f.After) != string(e.After) {
		t.Fatalf("--force enable: %s %q", f.Action, f.After)
	}
	d, err := Disable("CLAUDE.md", []byte(edited), design.ID, true, false)
	if err != nil {
		t.Fatal(err)
	}
	if string(d.After) != "mine\n" {
		t.Fatalf("--force disable: %q", d.After)
	}

	// Another package of the same source enabling the same instruction
	// is an update of an unedited block, so the marker says who owns it.
	other := design
	other.Package = "company:other"
	u, err := Enable("CLAUDE.md", e.After, other, false)
	if err != nil || u.Action != ActionUpdate || !strings.Contains(string(u.After), "package=company:other ") {
		t.Fatalf("other package: %v %v", err, u)
	}
}

func TestMalformedMarkers(t *testing.T) {
	good := designLF
	begin, _, _ := strings.Cut(good, "# Design")
	for _, tc := range []struct{ name, data, want string }{
		{"begin without fields", "a\n<!-- dalo:begin instruction:x -->\n", "f:2: malformed begin marker: want"},
		{"begin unclosed comment", "<!-- dalo:begin instruction:x source=s package=s:p sha256=00\n", "f:1: malformed begin marker: it must end the line with \"-->\""},
		{"bad digest", "<!-- dalo:begin instruction:x source=s package=s:p sha256=00 -->\n<!-- dalo:end instruction:x source=s -->\n", "f:1: malformed begin marker: \"sha256=00\" is not sha256="},
		{"bad package", strings.Replace(good, "package=company:design-review", "package=design-review", 1), "f:1: malformed begin marker: \"package=design-review\""},
		{"end without begin", "x\n<!-- dalo:end instruction:x source=s -->\n", "f:2: end marker of instruction:x (source s) without a begin marker"},
		{"no end", "x\n" + begin, "f:2: the block of instruction:design-context (source company) has no end marker"},
		{"nested", begin + begin, "f:2: begin marker inside the block of instruction:design-context (source company) opened at line 1"},
		{"mismatched end", begin + "<!-- dalo:end instruction:tone source=company -->\n", "f:2: end marker of instruction:tone (source company) closes the block of instruction:design-context (source company) opened at line 1"},
		{"duplicate", good + good, "f:6: a second block of instruction:design-context (source company) (the first begins at line 1)"},
		{"trailing space", strings.Replace(good, " -->\n", " --> \n", 1), "f:1: malformed begin marker: it must end"},
		{"end with extra field", strings.Replace(good, "source=company -->", "source=company sha256=x -->", 1), "f:5: malformed end marker"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for op, run := range map[string]func() error{
				"enable":  func() error { _, err := Enable("f", []byte(tc.data), tone, false); return err },
				"disable": func() error { _, err := Disable("f", []byte(tc.data), design.ID, true, false); return err },
			} {
				err := run()
				var me *MarkerError
				if !errors.As(err, &me) || !strings.HasPrefix(err.Error(), tc.want) {
					t.Errorf("%s: got %v, want %s...", op, err, tc.want)
				}
			}
		})
	}
}

func TestNotEnabled(t *testing.T) {
	_, err := Disable("f", []byte("mine\n"+toneLF), design.ID, false, false)
	if !errors.Is(err, ErrNotEnabled) {
		t.Fatalf("got %v", err)
	}
}

// TestMarkersInFences: dalo does not parse Markdown. A marker line in a
// fenced code block is a marker (the error says how to quote one); an
// indented one, or one inside a line, is the user's text.
func TestMarkersInFences(t *testing.T) {
	end := "<!-- dalo:end instruction:alpha source=rv -->"
	_, err := Enable("f.md", []byte("```\n"+end+"\n```\n"), design, false)
	var me *MarkerError
	if !errors.As(err, &me) || me.Line != 2 || !strings.Contains(err.Error(), "must be indented") {
		t.Fatalf("fenced end marker: %v", err)
	}
	for _, quoted := range []string{"```\n    " + end + "\n```\n", "Write `" + end + "` to close.\n"} {
		e, err := Enable("f.md", []byte(quoted), design, false)
		if err != nil || e.Action != ActionAdd || !strings.HasPrefix(string(e.After), quoted) {
			t.Errorf("%q: %v %+v", quoted, err, e)
		}
	}
}

// TestNotUTF8Text: a file in UTF-16, with or without its byte order mark,
// or holding a NUL byte, is refused whole: a UTF-8 block appended to it
// would be text no harness reads as one encoding.
func TestNotUTF8Text(t *testing.T) {
	utf16 := func(bom, s string) string {
		b := []byte(bom)
		for _, r := range s {
			b = append(b, byte(r), 0)
		}
		return string(b)
	}
	for _, tc := range []struct{ name, data string }{
		{"UTF-16 LE with its mark", utf16("\xff\xfe", "Be brief.\n")},
		{"UTF-16 BE mark", "\xfe\xff\x00B\x00e\n"},
		{"UTF-16 without a mark", utf16("", "Be brief.\n")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for op, run := range map[string]func() error{
				"enable":  func() error { _, err := Enable("CLAUDE.md", []byte(tc.data), tone, false); return err },
				"disable": func() error { _, err := Disable("CLAUDE.md", []byte(tc.data), design.ID, true, false); return err },
			} {
				err := run()
				if err == nil || !strings.Contains(err.Error(), "CLAUDE.md is not UTF-8 text") {
					t.Errorf("%s: got %v, want CLAUDE.md is not UTF-8 text", op, err)
				}
			}
		})
	}
}
