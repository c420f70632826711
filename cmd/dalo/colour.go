package main

import (
	"io"
	"os"
	"regexp"
)

// colourful says whether f is a terminal to write colour to: a terminal
// (see terminal), and NO_COLOR unset or empty, as no-color.org asks.
func colourful(f *os.File) bool {
	return terminal(f) != nil && os.Getenv("NO_COLOR") == ""
}

// A colourer colours what a person reads most on a terminal: the severity
// of a diagnostic (error red, warning yellow), a report's verdict, and
// the correction of a mistake ("did you mean ..."). It sits under
// termtext's writer, so that the text it receives has every control
// character of a package's escaped already, and the only escape
// sequences that reach the terminal are its own. Each Write is coloured
// on its own: dalo writes whole lines.
type colourer struct{ w io.Writer }

const (
	sgrRed    = "\x1b[1;31m"
	sgrYellow = "\x1b[1;33m"
	sgrGreen  = "\x1b[32m"
	sgrBold   = "\x1b[1m"
	sgrReset  = "\x1b[0m"
)

var colourRules = []struct {
	re          *regexp.Regexp
	replacement string
}{
	// FILE:LINE:COLUMN: error E020 ..., FILE: warning W101 ...
	{regexp.MustCompile(`(?m)^(\S+: )error( [EW]\d{3}\b)`), "${1}" + sgrRed + "error" + sgrReset + "${2}"},
	{regexp.MustCompile(`(?m)^(\S+: )warning( [EW]\d{3}\b)`), "${1}" + sgrYellow + "warning" + sgrReset + "${2}"},
	// The summary line of a validation: SOURCE: 2 packages, ..., invalid
	{regexp.MustCompile(`(?m)(, \d+ warnings?, )invalid$`), "${1}" + sgrRed + "invalid" + sgrReset},
	{regexp.MustCompile(`(?m)(, \d+ warnings?, )valid$`), "${1}" + sgrGreen + "valid" + sgrReset},
	{regexp.MustCompile(`(?m)^(did you mean )('[^'\n]*')\?$`), "${1}" + sgrBold + "${2}" + sgrReset + "?"},
}

func (c *colourer) Write(p []byte) (int, error) {
	out := p
	for _, r := range colourRules {
		out = r.re.ReplaceAll(out, []byte(r.replacement))
	}
	if _, err := c.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}
