package dispatch

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"dalo/plan"
)

// A Result is one handler's validated portable result.
type Result struct {
	Kind string          // observe, abstain, add_context, allow, deny, rewrite_input, replace_output, continue_workflow
	Text string          // context (add_context) or reason (deny, continue_workflow)
	JSON json.RawMessage // input (rewrite_input) or output (replace_output), compact
}

// parseResult checks that out is exactly one JSON object of the draft's
// result shapes, with no unknown or duplicate key and nothing after it, and
// that its kind is one of kinds (abstain is always admitted), its key the
// one plan.ResultShapes gives the kind, and its text or rewritten input
// within lim.
func parseResult(out []byte, kinds []string, lim plan.Limits) (*Result, error) {
	if r := readResult(out, kinds, lim); r != nil {
		return r, nil
	}
	return decodeResult(out, kinds, lim)
}

// readResult is parseResult's answer for a result it reads by hand
// (plan.DecodeValue) and accepts whole: a kind admitted and, if its shape
// has one, a text key within the limits. It is nil for anything else, which
// decodeResult reads with encoding/json and says what is wrong with: a
// handler's usual answer, {"kind":"allow"}, costs no reflection.
func readResult(out []byte, kinds []string, lim plan.Limits) *Result {
	v, ok := plan.DecodeValue(out)
	obj, isObj := v.(map[string]any)
	if !ok || !isObj || !utf8.Valid(out) {
		return nil
	}
	kind, _ := obj["kind"].(string)
	shape, known := plan.ResultShapes[kind]
	if !known || !slices.Contains(kinds, kind) {
		return nil
	}
	for k := range obj {
		if k != "kind" && k != shape.Key {
			return nil
		}
	}
	switch shape.Type {
	case "":
		if len(obj) == 1 {
			return &Result{Kind: kind}
		}
	case plan.ShapeText:
		if s, ok := obj[shape.Key].(string); ok && checkText(shape.Key, s, lim.ResultTextBytes) == nil {
			return &Result{Kind: kind, Text: s}
		}
	}
	return nil
}

// decodeResult is parseResult by encoding/json.
func decodeResult(out []byte, kinds []string, lim plan.Limits) (*Result, error) {
	if !utf8.Valid(out) {
		return nil, errors.New("result is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("no result: stdout is empty")
		}
		return nil, fmt.Errorf("result is not JSON: %v", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, fmt.Errorf("result is not a JSON object: starts with %s", short(fmt.Sprint(tok)))
	}
	fields := map[string]json.RawMessage{}
	var order []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("result is not JSON: %v", err)
		}
		key := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("result is not JSON: %v", err)
		}
		if _, dup := fields[key]; dup {
			return nil, fmt.Errorf("result has key %s twice", short(key))
		}
		fields[key] = v
		order = append(order, key)
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("result is not JSON: %v", err)
	}
	// Only JSON's own white space may follow: bytes.TrimSpace would also
	// pass \v, \f and Unicode spaces, which make the output not JSON.
	if rest := bytes.TrimLeft(out[dec.InputOffset():], " \t\n\r"); len(rest) > 0 {
		return nil, errors.New("result has data after its JSON object (only one object is allowed)")
	}
	rawKind, ok := fields["kind"]
	if !ok {
		return nil, errors.New("result has no kind")
	}
	var kind string
	if err := json.Unmarshal(rawKind, &kind); err != nil {
		return nil, errors.New("result kind is not a string")
	}
	shape, known := plan.ResultShapes[kind]
	extra := shape.Key
	if !known {
		return nil, fmt.Errorf("result kind %s is unknown", short(kind))
	}
	for _, k := range order {
		if k != "kind" && k != extra {
			return nil, fmt.Errorf("result of kind %s has unknown key %s", kind, short(k))
		}
	}
	if !slices.Contains(kinds, kind) {
		return nil, fmt.Errorf("result kind %s does not match the declared effect (admitted: %s)", kind, strings.Join(kinds, ", "))
	}
	r := &Result{Kind: kind}
	if extra == "" {
		return r, nil
	}
	raw, ok := fields[extra]
	if !ok {
		return nil, fmt.Errorf("result of kind %s has no %s", kind, extra)
	}
	switch shape.Type {
	case plan.ShapeText:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("result %s is not a string", extra)
		}
		if err := checkText(extra, s, lim.ResultTextBytes); err != nil {
			return nil, err
		}
		r.Text = s
	case plan.ShapeObject:
		if raw[0] != '{' {
			return nil, fmt.Errorf("result %s is not a JSON object", extra)
		}
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return nil, fmt.Errorf("result %s: %v", extra, err)
		}
		if extra == "input" && b.Len() > lim.RewrittenInputBytes {
			return nil, fmt.Errorf("result input is %d bytes, over the %d-byte limit of a rewritten input", b.Len(), lim.RewrittenInputBytes)
		}
		r.JSON = b.Bytes()
	default:
		return nil, fmt.Errorf("result %s has type %q in the plan; run 'dalo plugin install' again", extra, shape.Type)
	}
	return r, nil
}

func checkText(name, s string, max int) error {
	switch {
	case len(s) > max:
		return fmt.Errorf("result %s is %d bytes, over the %d-byte limit", name, len(s), max)
	case strings.IndexByte(s, 0) >= 0:
		return fmt.Errorf("result %s contains a NUL character", name)
	case s == "":
		return fmt.Errorf("result %s is empty", name)
	case strings.TrimSpace(s) == "":
		return fmt.Errorf("result %s is blank: only white space", name)
	}
	return nil
}

// maxQuoted is how many characters of a handler-provided token (a key, a
// kind, the start of its stdout) a diagnostic quotes: the diagnostic may
// reach the model (error_visibility model_and_user), and a handler must not
// be able to push its whole response into the model's context through it.
const maxQuoted = 64

// short quotes at most maxQuoted characters of s, marking a cut.
func short(s string) string {
	q := fmt.Sprintf("%.*q", maxQuoted, s)
	if utf8.RuneCountInString(s) > maxQuoted {
		q += "…"
	}
	return q
}
