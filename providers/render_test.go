package providers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// The table's row outputs are claims about a harness, not what dispatch
// prints: dispatch renders from the event's channels (dispatch.Render).
// Render here is the tests' own, independent reading of a row's claim, so
// that TestOutputsAreChannels can hold the channels to it. It lives in a
// test file because no production code renders row outputs.

// Placeholders are the values a NativeOutput template may take.
var Placeholders = []string{"$context", "$reason", "$input", "$output", "$diagnostic", "$generic", "$user"}

// Render fills the template: every string that is exactly a placeholder is
// replaced by vals[placeholder]. It returns the stdout bytes (nil when the
// output prints nothing), the stderr text and the exit status. A
// placeholder without a value is an error: the dispatcher must never print
// a half-rendered answer.
func (o NativeOutput) Render(vals map[string]any) (stdout []byte, stderr string, exit int, err error) {
	fill := func(s string) (any, error) {
		if !strings.HasPrefix(s, "$") {
			return s, nil
		}
		if !slices.Contains(Placeholders, s) {
			return nil, fmt.Errorf("unknown placeholder %s", s)
		}
		v, ok := vals[s]
		if !ok {
			return nil, fmt.Errorf("no value for %s", s)
		}
		return v, nil
	}
	var walk func(any) (any, error)
	walk = func(x any) (any, error) {
		switch x := x.(type) {
		case string:
			return fill(x)
		case map[string]any:
			out := make(map[string]any, len(x))
			for k, v := range x {
				w, err := walk(v)
				if err != nil {
					return nil, err
				}
				out[k] = w
			}
			return out, nil
		case []any:
			out := make([]any, len(x))
			for i, v := range x {
				w, err := walk(v)
				if err != nil {
					return nil, err
				}
				out[i] = w
			}
			return out, nil
		}
		return x, nil
	}
	if o.Stdout != nil {
		filled, err := walk(o.Stdout)
		if err != nil {
			return nil, "", 0, err
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(filled); err != nil {
			return nil, "", 0, err
		}
		stdout = b.Bytes()
	}
	if o.Stderr != "" {
		// In stderr, a text, placeholders stand anywhere.
		var pairs []string
		rest := o.Stderr
		for _, p := range Placeholders {
			if !strings.Contains(o.Stderr, p) {
				continue
			}
			v, ok := vals[p]
			if !ok {
				return nil, "", 0, fmt.Errorf("no value for %s", p)
			}
			pairs = append(pairs, p, fmt.Sprint(v))
			rest = strings.ReplaceAll(rest, p, "")
		}
		if strings.Contains(rest, "$") {
			return nil, "", 0, fmt.Errorf("unknown placeholder in stderr %q", o.Stderr)
		}
		stderr = strings.NewReplacer(pairs...).Replace(o.Stderr)
	}
	return stdout, stderr, o.Exit, nil
}
