package plan

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Canonical is the canonical JSON of v: compact, fields in declaration
// order, map keys sorted, no HTML escaping. Digests are taken of it, so
// that the same binds always have the same digest.
//
// What dispatch digests before every run (a tool's or a hook's binds, a
// tool's files) is written by hand, byte for byte as encoding/json writes
// it (TestCanonicalAgrees, FuzzCanonical): with reflection, a dispatcher
// paid for encoding/json's cold type caches on every tool call.
func Canonical(v any) ([]byte, error) {
	switch v := v.(type) {
	case ToolBinds:
		return appendToolBinds(nil, &v), nil
	case *ToolBinds:
		if v != nil {
			return appendToolBinds(nil, v), nil
		}
	case HookBinds:
		return appendHookBinds(nil, &v), nil
	case *HookBinds:
		if v != nil {
			return appendHookBinds(nil, v), nil
		}
	case map[string]FileDigest:
		return appendFiles(nil, v), nil
	}
	return canonicalJSON(v)
}

// canonicalJSON is Canonical by encoding/json, for every other type.
func canonicalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// A writer appends canonical JSON: key writes a member's key (with the
// comma before every one but the first of its object).
type writer struct {
	b     []byte
	first bool
}

func (w *writer) open(c byte) {
	w.b = append(w.b, c)
	w.first = true
}

func (w *writer) close(c byte) {
	w.b = append(w.b, c)
	w.first = false
}

func (w *writer) key(k string) {
	if !w.first {
		w.b = append(w.b, ',')
	}
	w.first = false
	w.b = appendString(w.b, k)
	w.b = append(w.b, ':')
}

func (w *writer) str(k, v string) {
	w.key(k)
	w.b = appendString(w.b, v)
}

func (w *writer) num(k string, n int64) {
	w.key(k)
	w.b = strconv.AppendInt(w.b, n, 10)
}

func (w *writer) boolean(k string, v bool) {
	w.key(k)
	w.b = strconv.AppendBool(w.b, v)
}

// strs writes a []string: null when nil.
func (w *writer) strs(k string, s []string) {
	w.key(k)
	if s == nil {
		w.b = append(w.b, "null"...)
		return
	}
	w.open('[')
	for _, e := range s {
		if !w.first {
			w.b = append(w.b, ',')
		}
		w.first = false
		w.b = appendString(w.b, e)
	}
	w.close(']')
}

// list writes an array of n structs, each by elem: null when nil.
func (w *writer) list(k string, isNil bool, n int, elem func(i int)) {
	w.key(k)
	if isNil {
		w.b = append(w.b, "null"...)
		return
	}
	w.open('[')
	for i := range n {
		if i > 0 {
			w.b = append(w.b, ',')
		}
		w.open('{')
		elem(i)
		w.close('}')
	}
	w.close(']')
}

func (w *writer) pkg(p *PackageIdentity) {
	w.key("package")
	w.open('{')
	w.str("source", p.Source)
	w.str("name", p.Name)
	if p.ID != "" {
		w.str("id", p.ID)
	}
	w.close('}')
}

func appendToolBinds(b []byte, t *ToolBinds) []byte {
	w := &writer{b: b}
	w.open('{')
	w.pkg(&t.Package)
	w.str("tool", t.Tool)
	w.str("runtime", t.Runtime)
	w.str("entry", t.Entry)
	w.strs("argv", t.Argv)
	w.strs("env", t.Env)
	w.str("cwd", t.Cwd)
	w.list("inputs", t.Inputs == nil, len(t.Inputs), func(i int) {
		w.str("name", t.Inputs[i].Name)
		w.str("type", t.Inputs[i].Type)
		w.boolean("required", t.Inputs[i].Required)
	})
	w.strs("capabilities", t.Capabilities)
	w.strs("platforms", t.Platforms)
	w.key("files")
	w.b = appendFiles(w.b, t.Files)
	w.first = false
	w.close('}')
	return w.b
}

func appendFiles(b []byte, files map[string]FileDigest) []byte {
	if files == nil {
		return append(b, "null"...)
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	w := &writer{b: b}
	w.open('{')
	for _, name := range names {
		d := files[name]
		w.key(name)
		w.open('{')
		w.str("sha256", d.SHA256)
		w.num("size", d.Size)
		if d.Executable {
			w.boolean("executable", true)
		}
		w.close('}')
	}
	w.close('}')
	return w.b
}

func appendHookBinds(b []byte, h *HookBinds) []byte {
	w := &writer{b: b}
	w.open('{')
	w.pkg(&h.Package)
	w.str("provider", h.Provider)
	w.str("hook", h.Hook)
	w.str("tool", h.Tool)
	w.str("tool_digest", h.ToolDigest)
	w.str("subject", h.Subject)
	w.str("phase", h.Phase)
	w.str("native_event", h.NativeEvent)
	if len(h.AlsoEvents) > 0 {
		w.strs("also_events", h.AlsoEvents)
	}
	w.str("effect", h.Effect)
	w.str("requirement", h.Requirement)
	w.strs("matcher", h.Matcher)
	w.list("bindings", h.Bindings == nil, len(h.Bindings), func(i int) {
		w.str("input", h.Bindings[i].Input)
		w.str("field", h.Bindings[i].Field)
		w.str("type", h.Bindings[i].Type)
	})
	w.num("timeout_ms", int64(h.TimeoutMS))
	w.str("failure_policy", h.FailurePolicy)
	w.str("error_visibility", h.ErrorVisibility)
	w.close('}')
	return w.b
}

// appendString writes s as encoding/json does without HTML escaping: ", \
// and the control characters escaped (\b \f \n \r \t by name), every byte
// of invalid UTF-8 as \ufffd, and U+2028 and U+2029 escaped.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
