package store

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"dalo/engine"
	"dalo/providers"
)

// A PowerUse is a power of a provider table (what a skill or an agent can
// make the harness do by itself) that a member's file uses, with the text
// that uses it: a front-matter key's value, or what a body construct
// captures (an inline command). The text is the package's: escape it.
type PowerUse struct {
	Power providers.MemberPower
	File  string // the file, relative to the skill's directory ("" for an agent)
	Line  int
	Text  string
}

// What a power names, as review and approve show it.
func (u PowerUse) What() string {
	if u.Power.Key != "" {
		return u.Power.Key
	}
	return "inline command"
}

// MemberPowers lists the powers of t that the member a (a skill or an
// agent install writes) uses: the keys of its front matter and the
// constructs of its body the table names, in the order of the file. It
// reads the member's main file: a skill's SKILL.md, an agent's file.
func MemberPowers(t *providers.Table, a *MemberAction) ([]PowerUse, error) {
	kind := engine.ParseRef(a.Ref).Kind
	var powers []providers.MemberPower
	for _, p := range t.MemberPowers {
		if p.Kind == kind {
			powers = append(powers, p)
		}
	}
	if len(powers) == 0 || a.Src == "" {
		return nil, nil
	}
	file, rel := a.Src, ""
	if a.Dir {
		file, rel = filepath.Join(a.Src, "SKILL.md"), "SKILL.md"
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return powersIn(powers, rel, data), nil
}

// powersIn finds powers in a Markdown file with YAML front matter. Keys
// are read line by line: a top-level key (quoted or not) with its value,
// the rest of its line and every more indented line after it; so a value
// is shown as written.
func powersIn(powers []providers.MemberPower, rel string, data []byte) []PowerUse {
	var out []PowerUse
	var lines []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), len(data)+1)
	for sc.Scan() {
		lines = append(lines, strings.TrimSuffix(sc.Text(), "\r"))
	}
	body := 0
	if len(lines) > 0 && strings.TrimPrefix(lines[0], "\ufeff") == "---" {
		for i := 1; i < len(lines); i++ {
			if strings.TrimRight(lines[i], " \t") == "---" {
				body = i + 1
				break
			}
		}
	}
	for i := 1; i < body-1; i++ {
		l := lines[i]
		if l == "" || l[0] == ' ' || l[0] == '\t' || l[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		k = strings.Trim(strings.TrimSpace(k), `"'`)
		for _, p := range powers {
			if p.Key != k {
				continue
			}
			text := strings.TrimSpace(v)
			for j := i + 1; j < body-1 && (lines[j] == "" || lines[j][0] == ' ' || lines[j][0] == '\t'); j++ {
				text += "\n" + lines[j]
			}
			out = append(out, PowerUse{Power: p, File: rel, Line: i + 1, Text: strings.TrimSpace(text)})
		}
	}
	for _, p := range powers {
		if p.Body == "" {
			continue
		}
		re, err := regexp.Compile(p.Body)
		if err != nil {
			continue // the table's tests compile every pattern
		}
		for i := body; i < len(lines); i++ {
			for _, m := range re.FindAllStringSubmatch(lines[i], -1) {
				text := m[0]
				if len(m) > 1 {
					text = m[1]
				}
				out = append(out, PowerUse{Power: p, File: rel, Line: i + 1, Text: text})
			}
		}
	}
	return out
}
