package engine

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
)

// Severity says whether a diagnostic makes a package invalid.
type Severity string

const (
	// Error makes the package it concerns invalid (or, at a required
	// reference, blocks it), and validation exits 1.
	Error Severity = "error"
	// Warning is shown and reported but changes no validity: a visible
	// omission, or what a provider will do differently.
	Warning Severity = "warning"
)

// A Diagnostic is one finding about a source. Codes are stable and listed in
// docs/diagnostics.md. File is relative to the source root with forward
// slashes; Line and Column are 1-based (columns count bytes) and zero only
// when the finding is about a file or directory as a whole.
type Diagnostic struct {
	Severity Severity `json:"severity"`
	Code     string   `json:"code"`
	Message  string   `json:"message"`
	File     string   `json:"file"`
	Line     int      `json:"line"`
	Column   int      `json:"column"`
	Field    string   `json:"field"`
}

// String formats d the way the human report prints it:
// plugins/x/PLUGIN.toml:14:11: error E031 hook[0].effect: message
func (d Diagnostic) String() string {
	b := d.Append(nil)
	return string(b)
}

// Append appends what String returns to b, without fmt: a report of
// 26,000 warnings (a source of Claude Code skills with keys of its own)
// spent a tenth of its validation formatting them. (Not AppendText:
// encoding.TextAppender would make encoding/json v2 write a finding as
// a string.)
func (d Diagnostic) Append(b []byte) []byte {
	switch {
	case d.Line > 0:
		b = append(b, d.File...)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(d.Line), 10)
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(d.Column), 10)
	case d.File == "":
		b = append(b, '.')
	default:
		b = append(b, d.File...)
	}
	b = append(b, ": "...)
	b = append(b, d.Severity...)
	b = append(b, ' ')
	b = append(b, d.Code...)
	if d.Field != "" {
		b = append(b, ' ')
		b = append(b, d.Field...)
	}
	b = append(b, ": "...)
	return append(b, d.Message...)
}

// Pos is a position in a file.
type Pos struct {
	Line, Column int
}

// sortDiagnostics orders ds by file, position, code and message, keeping
// the order of equal ones. They are gathered in order of file
// (gatherDiagnostics) and most files' findings in order of line, so that
// they are often in order already: a stable sort of 160,000 findings in
// order still compared and moved them, a twentieth of validating them.
func sortDiagnostics(ds []Diagnostic) {
	if !slices.IsSortedFunc(ds, compareDiagnostics) {
		slices.SortStableFunc(ds, compareDiagnostics)
	}
}

func compareDiagnostics(a, b Diagnostic) int {
	return cmp.Or(
		cmp.Compare(a.File, b.File),
		cmp.Compare(a.Line, b.Line),
		cmp.Compare(a.Column, b.Column),
		cmp.Compare(a.Code, b.Code),
		cmp.Compare(a.Message, b.Message),
	)
}

// diagList collects diagnostics about one file.
type diagList struct {
	file  string
	doc   string // what the file is, for messages: "" a manifest
	diags []Diagnostic
	// once indexes the warnings of diags while indexOnce holds it, so
	// that warnTextOnce need not compare each with all: packages of forty
	// hooks with a few unknown tool names each have some 200 findings.
	once map[onceKey]bool
}

type onceKey struct{ code, field, msg string }

// warningsCompared counts the diagnostics warnTextOnce compared a warning
// with, one by one: a test holds the provider findings to none.
var warningsCompared atomic.Int64

// indexOnce indexes l's warnings for warnTextOnce until the returned
// function is called.
func (l *diagList) indexOnce() (done func()) {
	l.once = make(map[onceKey]bool, len(l.diags))
	for _, d := range l.diags {
		if d.Severity == Warning {
			l.once[onceKey{d.Code, d.Field, d.Message}] = true
		}
	}
	return func() { l.once = nil }
}

func (l *diagList) add(sev Severity, code string, pos Pos, field, format string, args ...any) {
	msg, ok := "", false
	if format == "%s" && len(args) == 1 {
		// A finding made elsewhere whole (why a path is missing, a
		// front matter's finding): fmt would copy it for nothing.
		msg, ok = args[0].(string)
	}
	if !ok {
		msg = sprintf(format, args...)
	}
	l.diags = append(l.diags, Diagnostic{
		Severity: sev,
		Code:     code,
		Message:  msg,
		File:     l.file,
		Line:     pos.Line,
		Column:   pos.Column,
		Field:    field,
	})
}

// sprintf is fmt.Sprintf for the verbs findings are written with, %s,
// %q, %d and %v of a string or an int, without fmt's reflection; any
// other verb, flag or argument goes to fmt. Formatting was a fifth of a
// validation whose packages had 160 findings each.
func sprintf(format string, args ...any) string {
	var buf [256]byte
	b, next, whole := buf[:0], 0, format
	for {
		i := strings.IndexByte(format, '%')
		if i < 0 {
			break
		}
		b = append(b, format[:i]...)
		if i+1 == len(format) {
			return fmt.Sprintf(whole, args...)
		}
		verb := format[i+1]
		format = format[i+2:]
		if verb == '%' {
			b = append(b, '%')
			continue
		}
		if next == len(args) {
			return fmt.Sprintf(whole, args...)
		}
		switch a := args[next].(type) {
		case string:
			switch verb {
			case 's', 'v':
				b = append(b, a...)
			case 'q':
				b = appendQuote(b, a)
			default:
				return fmt.Sprintf(whole, args...)
			}
		case int:
			if verb != 'd' && verb != 'v' {
				return fmt.Sprintf(whole, args...)
			}
			b = strconv.AppendInt(b, int64(a), 10)
		default:
			return fmt.Sprintf(whole, args...)
		}
		next++
	}
	if next != len(args) {
		return fmt.Sprintf(whole, args...)
	}
	return string(append(b, format...))
}

// appendQuote is strconv.AppendQuote, which decodes rune by rune, with
// a way around it for what nearly every quoted value is: printable ASCII
// without a quote or backslash, which it leaves as it is.
func appendQuote(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > '~' || c == '"' || c == '\\' {
			return strconv.AppendQuote(b, s)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

func (l *diagList) errorf(code string, pos Pos, field, format string, args ...any) {
	l.add(Error, code, pos, field, format, args...)
}

func (l *diagList) warnf(code string, pos Pos, field, format string, args ...any) {
	l.add(Warning, code, pos, field, format, args...)
}

// warnOnce is warnf unless the list already holds the same warning: the
// provider findings are added each time capabilities are computed for the
// package, and a report never says one thing twice.
func (l *diagList) warnOnce(code string, pos Pos, field, format string, args ...any) {
	l.warnTextOnce(code, pos, field, sprintf(format, args...))
}

// warnTextOnce is warnOnce of the message msg, which it keeps as it is:
// a message many packages are given is held once.
func (l *diagList) warnTextOnce(code string, pos Pos, field, msg string) {
	if l.once != nil {
		k := onceKey{code, field, msg}
		if l.once[k] {
			return
		}
		l.once[k] = true
	} else {
		warningsCompared.Add(int64(len(l.diags)))
		for _, d := range l.diags {
			if d.Severity == Warning && d.Code == code && d.Field == field && d.Message == msg {
				return
			}
		}
	}
	l.diags = append(l.diags, Diagnostic{Severity: Warning, Code: code, Message: msg, File: l.file, Line: pos.Line, Column: pos.Column, Field: field})
}

func (l *diagList) hasErrors() bool {
	for _, d := range l.diags {
		if d.Severity == Error {
			return true
		}
	}
	return false
}
