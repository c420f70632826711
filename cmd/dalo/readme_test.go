package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeCommands holds the README's table of commands to the commands
// themselves: each form it shows names a command dalo has, every flag it
// shows is one of that command's, and a list of choices it shows for a
// flag (--provider claude|codex|...) is the one the command's usage shows.
func TestReadmeCommands(t *testing.T) {
	src, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(src), "\n## Commands\n")
	if !ok {
		t.Fatal("README.md has no section \"Commands\"")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	span := regexp.MustCompile("`([^`]+)`")
	rows := 0
	for _, row := range strings.Split(table, "\n") {
		cells := strings.Split(row, " | ")
		if !strings.HasPrefix(row, "| `dalo ") || len(cells) < 2 {
			continue
		}
		rows++
		for _, m := range span.FindAllStringSubmatch(cells[0], -1) {
			form := strings.ReplaceAll(m[1], `\|`, "|") // escaped in a table
			if strings.HasPrefix(form, "dalo-hook ") || form == "dalo --version" {
				continue
			}
			// "source list [--json]" after "dalo source add ...": the
			// row's forms share its "dalo ".
			form = strings.TrimPrefix(form, "dalo ")
			for _, f := range expandNames(form) {
				checkReadmeForm(t, f)
			}
		}
	}
	if rows < 20 {
		t.Fatalf("found %d rows of commands in README.md's table; its shape changed", rows)
	}
}

// expandNames turns "instruction enable|disable ARGS" into a form per
// command name.
func expandNames(form string) []string {
	words := strings.Fields(form)
	for i, w := range words {
		if strings.HasPrefix(w, "-") || strings.ToUpper(w) == w {
			break
		}
		if alts := strings.Split(w, "|"); len(alts) > 1 && i > 0 {
			var out []string
			for _, a := range alts {
				out = append(out, strings.Join(append(append(append([]string{}, words[:i]...), a), words[i+1:]...), " "))
			}
			return out
		}
	}
	return []string{form}
}

var (
	readmeFlag    = regexp.MustCompile(`--[a-z][a-z-]*`)
	readmeChoices = regexp.MustCompile(`(--[a-z][a-z-]*) ([a-z]+(?:\|[a-zA-Z]+)+)`)
)

func checkReadmeForm(t *testing.T, form string) {
	t.Helper()
	c, _ := lookup(strings.Fields(form))
	if c == nil {
		t.Errorf("README: `dalo %s`: no such command", form)
		return
	}
	fs := c.flagSet(&env{})
	for _, f := range readmeFlag.FindAllString(form, -1) {
		if fs.Lookup(f[2:]) == nil {
			t.Errorf("README: `dalo %s`: dalo %s has no flag %s", form, c.name, f)
		}
	}
	usage := map[string]string{}
	for _, m := range readmeChoices.FindAllStringSubmatch(c.usage, -1) {
		usage[m[1]] = m[2]
	}
	for _, m := range readmeChoices.FindAllStringSubmatch(form, -1) {
		if want, ok := usage[m[1]]; ok && m[2] != want {
			t.Errorf("README: `dalo %s`: %s %s; its usage says %s %s", form, m[1], m[2], m[1], want)
		}
	}
}
