package hooksfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"

	"dalo/providers"
)

// An Entry is one of dalo's dispatcher entries in a harness's hooks file:
// the JSON the provider table's entry template gives for one native event
// ((*providers.Table).Entry), compact, its members in the template's
// order. What makes it dalo's is its command, at the template's place of
// $command: `<dalo> hook dispatch --provider P --event E`, or the same
// from dalo-hook, `<dalo-hook> dispatch --provider P --event E` (see
// [Command]). Install records read back hold it compact too, whatever
// spacing the record has.
type Entry json.RawMessage

// MarshalJSON writes the entry's bytes as they are, and null for none: an
// install record holds exactly the entry dalo wrote into the harness file.
func (e Entry) MarshalJSON() ([]byte, error) {
	if len(e) == 0 {
		return []byte("null"), nil
	}
	return e, nil
}

// UnmarshalJSON reads an entry back as dalo wrote it: compact, and its
// strings without the HTML escapes (\u0026 for &) that encoding/json adds
// when the install record is written, so that an entry read back is the
// same bytes as the one the table gives.
func (e *Entry) UnmarshalJSON(data []byte) error {
	var b bytes.Buffer
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := compactEntry(&b, dec); err != nil {
		return fmt.Errorf("harness entry: %w", err)
	}
	*e = b.Bytes()
	return nil
}

// compactEntry writes the next JSON value of dec compactly, its members in
// their order, its strings escaped as the harness configuration is written.
func compactEntry(b *bytes.Buffer, dec *json.Decoder) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'), json.Delim('['):
		b.WriteString(tok.(json.Delim).String())
		obj := tok == json.Delim('{')
		for i := 0; dec.More(); i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			if obj {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				writeJSONString(b, k.(string))
				b.WriteByte(':')
			}
			if err := compactEntry(b, dec); err != nil {
				return err
			}
		}
		end, err := dec.Token()
		if err != nil {
			return err
		}
		b.WriteString(end.(json.Delim).String())
		return nil
	}
	switch v := tok.(type) {
	case string:
		writeJSONString(b, v)
	case json.Number:
		b.WriteString(v.String())
	default: // bool, nil
		m, _ := json.Marshal(v)
		b.Write(m)
	}
	return nil
}

// writeJSONString writes s as a JSON string without HTML escapes.
func writeJSONString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	b.Truncate(b.Len() - 1) // Encode's newline
}

// Command is the command of e, a dalo entry of the table t's shape, at the
// place of the template's $command; "" when there is none.
func (e Entry) Command(t *providers.Table) string {
	var v any
	if json.Unmarshal(e, &v) != nil {
		return ""
	}
	for _, k := range t.EntryPath(providers.EntryCommand) {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			if len(x) == 0 {
				return ""
			}
			v = x[0] // dalo's entries hold one command
		default:
			return ""
		}
	}
	s, _ := v.(string)
	return s
}

// Same says whether text, an entry as a hooks file holds it, means e:
// the same JSON value, however it is spaced.
func Same(text []byte, e Entry) bool {
	var a, b any
	if json.Unmarshal(text, &a) != nil {
		return false
	}
	data, err := json.Marshal(e)
	if err != nil {
		panic(err) // an entry of the table's, or one read back, always marshals
	}
	json.Unmarshal(data, &b)
	return reflect.DeepEqual(a, b)
}

// A Record is what dalo wrote into one harness hooks file, so that it
// removes exactly that and notices when the user changed it. Store keeps
// it in the provider's install record; Edit reads it and gives the next.
type Record struct {
	File        string `json:"file"`
	CreatedFile bool   `json:"created_file,omitempty"`
	// CreatedDir is the outermost directory above File that dalo created
	// with it; removing the file removes those directories too, if empty.
	// Whoever writes the file sets it: Edit only computes text.
	CreatedDir   string           `json:"created_dir,omitempty"`
	CreatedHooks bool             `json:"created_hooks,omitempty"`
	Entries      map[string]Entry `json:"entries"`        // native event → entry as written
	Created      map[string]bool  `json:"created_events"` // events whose key dalo added
	// Interior is the text that was between the brackets of an empty
	// container before dalo added to it ("." the document, "hooks", or an
	// event), so that removing dalo's entry restores it byte for byte.
	Interior map[string]string `json:"interior,omitempty"`
}
