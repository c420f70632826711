package providers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// An EntryTemplate is how dalo's dispatcher entry for one native event is
// written into the harness's hooks file, one element of hooks.<event>
// (config.hooks.entry): a JSON object whose members are written in the
// template's order, with placeholders for what dalo fills in.
type EntryTemplate struct {
	Template json.RawMessage `json:"template"`
	// Matcher is the value of the member whose value is EntryMatcher, on an
	// event that takes a tool matcher: every tool.
	Matcher  string   `json:"matcher,omitempty"`
	Evidence []string `json:"evidence"`
	// Expands, when set, is what the harness rewrites in its settings'
	// strings before it runs a command (see [Table.Expanded]).
	Expands *Pattern `json:"expands,omitempty"`
}

// A Pattern is an RE2 regular expression a table states, with evidence.
type Pattern struct {
	Regexp   string   `json:"regexp"`
	Evidence []string `json:"evidence"`
}

// The placeholders of an entry template, each a whole string value.
const (
	EntryCommand = "$command" // the dispatcher's command line
	EntryTimeout = "$timeout" // its timeout, a number in timeout.unit
	EntryMatcher = "$matcher" // Matcher on an event with a tool matcher; elsewhere the member is left out
)

// Entry is dalo's entry for event: the template with command, timeout (in
// the table's unit) and, on an event that takes a tool matcher, the
// matcher; compact JSON, in the template's order.
func (t *Table) Entry(event, command string, timeout int) ([]byte, error) {
	n, err := parseTemplate(t.Config.Hooks.Entry.Template)
	if err != nil {
		return nil, fmt.Errorf("%s: config.hooks.entry: %w", t.Key(), err)
	}
	fill := map[string]json.RawMessage{EntryTimeout: json.RawMessage(strconv.Itoa(timeout))}
	fill[EntryCommand], _ = marshalString(command)
	if t.Events[event].ToolMatcher {
		fill[EntryMatcher], _ = marshalString(t.Config.Hooks.Entry.Matcher)
	}
	var b bytes.Buffer
	n.write(&b, fill)
	return b.Bytes(), nil
}

// EntryPath is where in an entry the placeholder p is: the keys of the
// objects on the way, "" standing for any element of an array. Install
// finds the command of an entry of dalo's there.
func (t *Table) EntryPath(p string) []string {
	n, err := parseTemplate(t.Config.Hooks.Entry.Template)
	if err != nil {
		return nil
	}
	path, _ := n.find(p)
	return path
}

// TimeoutField is the key of the entry's member that holds the timeout.
func (t *Table) TimeoutField() string {
	path := t.EntryPath(EntryTimeout)
	if len(path) == 0 {
		return ""
	}
	return path[len(path)-1]
}

// checkEntry checks that the entry template is a JSON object that holds
// the command and the timeout each once, as member values, and a matcher
// placeholder only when the table gives a matcher.
func (t *Table) checkEntry() error {
	n, err := parseTemplate(t.Config.Hooks.Entry.Template)
	if err != nil {
		return err
	}
	if n.kind != '{' {
		return errors.New("the template is not a JSON object")
	}
	for _, p := range []string{EntryCommand, EntryTimeout, EntryMatcher} {
		_, count := n.find(p)
		switch {
		case p == EntryMatcher && count == 0:
		case p == EntryMatcher && t.Config.Hooks.Entry.Matcher == "":
			return fmt.Errorf("the template has %s but the entry gives no matcher", p)
		case count != 1:
			return fmt.Errorf("the template has %s %d times, as a member's value; want once", p, count)
		}
	}
	return nil
}

func marshalString(s string) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // as the harness configuration is written
	err := enc.Encode(s)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), err
}

// A tnode is a JSON value of a template, its members in order.
type tnode struct {
	kind    byte // '{', '[', or 0 for a scalar
	keys    []string
	elems   []*tnode // members' values, in the order of keys; or an array's elements
	scalar  json.RawMessage
	literal string // the string a scalar is, when it is one
}

func parseTemplate(raw json.RawMessage) (*tnode, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	n, err := parseNode(dec)
	if err != nil {
		return nil, fmt.Errorf("the template: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("the template: more than one value")
	}
	return n, nil
}

func parseNode(dec *json.Decoder) (*tnode, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		n := &tnode{kind: '{'}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := parseNode(dec)
			if err != nil {
				return nil, err
			}
			n.keys = append(n.keys, k.(string))
			n.elems = append(n.elems, v)
		}
		_, err := dec.Token()
		return n, err
	case json.Delim('['):
		n := &tnode{kind: '['}
		for dec.More() {
			v, err := parseNode(dec)
			if err != nil {
				return nil, err
			}
			n.elems = append(n.elems, v)
		}
		_, err := dec.Token()
		return n, err
	}
	if s, ok := tok.(string); ok {
		b, err := marshalString(s)
		return &tnode{scalar: b, literal: s}, err
	}
	b, err := json.Marshal(tok)
	return &tnode{scalar: b}, err
}

// find returns the path to the first string value p, and how many there are.
func (n *tnode) find(p string) (path []string, count int) {
	switch n.kind {
	case 0:
		if n.scalar[0] == '"' && n.literal == p {
			return []string{}, 1
		}
	case '{':
		for i, v := range n.elems {
			sub, c := v.find(p)
			if c > 0 && count == 0 {
				path = append([]string{n.keys[i]}, sub...)
			}
			count += c
		}
	case '[':
		for _, v := range n.elems {
			sub, c := v.find(p)
			if c > 0 && count == 0 {
				path = append([]string{""}, sub...)
			}
			count += c
		}
	}
	return path, count
}

// write writes n compactly, each placeholder string replaced by its value
// in fill; a member whose value is a placeholder without one is left out.
func (n *tnode) write(b *bytes.Buffer, fill map[string]json.RawMessage) {
	switch n.kind {
	case 0:
		if v, ok := fill[n.literal]; ok && n.scalar[0] == '"' {
			b.Write(v)
			return
		}
		b.Write(n.scalar)
	case '{':
		b.WriteByte('{')
		first := true
		for i, v := range n.elems {
			if v.kind == 0 && v.literal == EntryMatcher && v.scalar[0] == '"' && fill[EntryMatcher] == nil {
				continue
			}
			if !first {
				b.WriteByte(',')
			}
			first = false
			k, _ := marshalString(n.keys[i])
			b.Write(k)
			b.WriteByte(':')
			v.write(b, fill)
		}
		b.WriteByte('}')
	case '[':
		b.WriteByte('[')
		for i, v := range n.elems {
			if i > 0 {
				b.WriteByte(',')
			}
			v.write(b, fill)
		}
		b.WriteByte(']')
	}
}
