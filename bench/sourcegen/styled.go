package sourcegen

import (
	"regexp"
	"strings"
)

// WriteStyled creates dir as a source of n packages that hold what
// WriteOwn's hold, written the other ways authors write them: manifests
// with the plugin table in dotted keys, comments, literal and multi-line
// strings, integers with underscores and a provider's table holding a
// float and a date; skills written with CR LF line
// ends, text outside ASCII, a comment line, a description that goes on on
// a second line and their tools as a list; instructions with CR LF and
// text outside ASCII. A validator whose quick ways read only the plainest
// syntax costs more here than on WriteOwn's packages.
func WriteStyled(dir string, n int) error {
	w := &writer{dir: dir, restyle: restyle}
	for i := range n {
		w.ownPkg(i)
	}
	return w.err
}

var (
	pluginTable  = regexp.MustCompile(`(?m)^\[plugin\]\n((?:\w+ = .*\n)+)`)
	pluginKey    = regexp.MustCompile(`(?m)^(\w+ = )`)
	description  = regexp.MustCompile(`(?m)^plugin\.description = "(.*)"$`)
	plainValue   = regexp.MustCompile(`(?m)^(id|entry|runtime|cwd|availability|subject|phase|effect|retry) = "([^"'\\]*)"$`)
	timeout      = regexp.MustCompile(`(?m)^timeout_ms = (\d)000$`)
	arrayHeader  = regexp.MustCompile(`(?m)^\[\[(tool|hook)\]\]$`)
	allowedTools = regexp.MustCompile(`(?m)^allowed-tools: (.*)$`)
	skillSummary = regexp.MustCompile(`(?m)^description: (.*), (for reviews of its area\.)$`)
)

// restyle rewrites the file rel of WriteOwn's as WriteStyled writes it.
func restyle(rel, data string) string {
	switch {
	case strings.HasSuffix(rel, "/PLUGIN.toml"):
		data = pluginTable.ReplaceAllStringFunc(data, func(t string) string {
			return pluginKey.ReplaceAllString(strings.TrimPrefix(t, "[plugin]\n"), "plugin.$1")
		})
		data = description.ReplaceAllString(data, "plugin.description = \"\"\"\n$1\nIts tools check the work; its hooks run them.\"\"\"")
		data = plainValue.ReplaceAllString(data, "$1 = '$2'")
		data = timeout.ReplaceAllString(data, "timeout_ms = ${1}_000 # milliseconds")
		data = arrayHeader.ReplaceAllString(data, "# one more $1\n[[$1]] # of this package")
		data += "\n# read by Claude Code's adapter alone\n[providers.claude]\nmodel = 'sonnet'\ntemperature = 0.2\nreviewed = 2026-01-02\n"
		return strings.Replace(data, "schema_version = 1\n", "schema_version = 1 # Portable Agent Packages 0.1\n", 1)
	case strings.HasSuffix(rel, "/SKILL.md"):
		data = strings.Replace(data, "---\n", "---\n# written by hand\n", 1)
		data = skillSummary.ReplaceAllString(data, "description: $1,\n  $2 Conseils — レビュー")
		data = allowedTools.ReplaceAllString(data, "allowed-tools:\n  - $1\n  - Read\n  - Grep")
		return crlf(strings.ReplaceAll(data, "note what it touches", "note what it touches — à revoir"))
	case strings.HasSuffix(rel, ".md"):
		return crlf(strings.ReplaceAll(data, "note what it touches", "note what it touches — à revoir"))
	}
	return data
}

// crlf ends every line of s with CR LF.
func crlf(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }
