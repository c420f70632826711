package instruction

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzInstructionBlocks: in any file, the blocks found are where their
// markers are; enabling an instruction of any content writes a block that
// reads back as dalo's and unedited, keeps every other block, is stable,
// and disabling it gives back the file's bytes.
func FuzzInstructionBlocks(f *testing.F) {
	f.Fuzz(func(t *testing.T, data, content []byte) {
		blocks, err := Parse("CLAUDE.md", data)
		var me *MarkerError
		var ee *EncodingError
		if err != nil && !errors.As(err, &me) && !errors.As(err, &ee) {
			t.Fatalf("%q: error %v is no MarkerError or EncodingError", data, err)
		}
		end := 0
		for _, b := range blocks {
			if b.Start < end || b.End > len(data) || !bytes.HasPrefix(data[b.Start:], []byte(beginPrefix)) {
				t.Fatalf("%q: block of %s at [%d:%d]", data, b.ID, b.Start, b.End)
			}
			end = b.End
		}
		in := Asset{ID: ID{Source: "company", Selector: "design-context"}, Package: "company:review-kit", Content: content}
		e, err := Enable("CLAUDE.md", data, in, false)
		if err != nil {
			return
		}
		after, err := Parse("CLAUDE.md", e.After)
		if err != nil {
			t.Fatalf("%q with %q: enabled into %q, which does not parse: %v", data, content, e.After, err)
		}
		var mine *Block
		for _, b := range after {
			if b.ID == in.ID {
				mine = b
			}
		}
		if mine == nil || mine.Edited() || mine.Package != in.Package {
			t.Fatalf("%q with %q: enabled into %q, where the block is %+v", data, content, e.After, mine)
		}
		for _, b := range blocks {
			if b.ID == in.ID {
				continue
			}
			found := false
			for _, a := range after {
				found = found || a.ID == b.ID && bytes.Equal(e.After[a.Start:a.End], data[b.Start:b.End])
			}
			if !found {
				t.Fatalf("%q with %q: enabled into %q, which lost or changed the block of %s", data, content, e.After, b.ID)
			}
		}
		again, err := Enable("CLAUDE.md", e.After, in, false)
		if err != nil || again.Action != ActionUnchanged || !bytes.Equal(again.After, e.After) {
			t.Fatalf("%q with %q: enabling again: %v %+v", data, content, err, again)
		}
		if e.Action != ActionAdd || len(blocks) > 0 {
			return // an update or a file with other blocks: the bytes before are not all the user's
		}
		d, err := Disable("CLAUDE.md", e.After, in.ID, false, e.NewlineAdded)
		if err != nil || !bytes.Equal(d.After, data) {
			t.Fatalf("%q with %q: enabled into %q, disabled into %q (%v)", data, content, e.After, d.After, err)
		}
	})
}
