package store

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"dalo/internal/unidiff"
)

// A FileDiff is how one file a grant binds (a tool's, a skill's or an
// agent's) differs between what is installed and the package now: the
// unified diff of a text file, or why none is shown.
type FileDiff struct {
	Item string `json:"item"`           // "tool guard", "member skill:review"
	File string `json:"file,omitempty"` // its path in the tool or the skill ("" for an agent file)
	Diff string `json:"diff,omitempty"` // unified diff, "" when Note says why there is none
	Note string `json:"note,omitempty"`
}

// maxDiffBytes bounds each side of a file diffed for a person.
const maxDiffBytes = 256 << 10

// FileDiffs reads, for each file u's differences name as changed, added
// or removed, the bytes installed (a tool's staged tree, a member where
// the harness reads it, each only while it has the digest dalo recorded)
// and the bytes now, and diffs them: what a person approving the change
// reads, rather than two digests.
func (s *Store) FileDiffs(u *Update) []FileDiff {
	var acts []MemberAction
	if u.Sel.Table != nil {
		acts, _ = s.MemberActions(u.Sel, u.Sel.Table, os.Getenv)
	}
	var out []FileDiff
	for _, d := range u.Differences {
		if d.Field != "file" && !strings.HasPrefix(d.Field, "file ") {
			continue
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(d.Field, "file"), " ")
		fd := FileDiff{Item: d.Item, File: rel}
		var oldFile, oldSum, newFile string
		switch {
		case strings.HasPrefix(d.Item, "tool "):
			id := strings.TrimPrefix(d.Item, "tool ")
			for _, h := range u.Installed.Hooks {
				if h.Hook.Tool.ID == id && h.Hook.Tool.Root != "" {
					oldFile, oldSum = filepath.Join(h.Hook.Tool.Root, filepath.FromSlash(rel)), h.Hook.Tool.Files[rel]
				}
			}
			newFile = filepath.Join(u.Sel.PkgDir(), filepath.FromSlash(rel))
		case strings.HasPrefix(d.Item, "member "):
			ref := strings.TrimPrefix(d.Item, "member ")
			for _, o := range u.Installed.owned() {
				if o.Ref == ref {
					if p, err := o.file(rel); err == nil {
						oldFile, oldSum = p, o.Files[rel]
					}
				}
			}
			for _, a := range acts {
				if a.Ref == ref && a.Src != "" {
					newFile = a.Src
					if a.Dir {
						newFile = filepath.Join(a.Src, filepath.FromSlash(rel))
					}
				}
			}
		default:
			continue
		}
		old, oerr := readSide(d.Old, oldFile, oldSum)
		cur, nerr := readSide(d.New, newFile, "")
		switch {
		case oerr != "":
			fd.Note = "the installed bytes " + oerr
		case nerr != "":
			fd.Note = "the new bytes " + nerr
		case !isText(old) || !isText(cur):
			fd.Note = "binary file, not shown"
		default:
			name := strings.ReplaceAll(d.Item, " ", "/")
			if rel != "" {
				name += "/" + rel
			}
			fd.Diff = unidiff.Diff(name, old, cur)
			if fd.Diff == "" {
				continue
			}
		}
		out = append(out, fd)
	}
	return out
}

// readSide reads one side of a file diff: nil where the difference says
// the file is absent (text ""), else the file's bytes, checked against
// sum when given; a non-empty string says why they cannot be shown.
func readSide(text, file, sum string) ([]byte, string) {
	if text == "" {
		return nil, ""
	}
	if file == "" {
		return nil, "are not at hand"
	}
	fi, err := os.Stat(file)
	if err != nil {
		return nil, "cannot be read"
	}
	if fi.Size() > maxDiffBytes {
		return nil, "are too large to show"
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, "cannot be read"
	}
	if sum != "" && sha256Hex(data) != sum {
		return nil, "changed since dalo wrote them"
	}
	return data, ""
}

// isText says whether data reads as text: UTF-8 without a NUL byte.
func isText(data []byte) bool { return bytes.IndexByte(data, 0) < 0 && utf8.Valid(data) }
