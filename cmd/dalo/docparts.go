package main

import (
	"fmt"
	"regexp"
	"strings"

	"dalo/claudeplugin"
	"dalo/engine"
	"dalo/plan"
	"dalo/providers"
	"dalo/store"
)

// docParts are the parts of the commands' help that the provider tables
// and the rules state. A doc writes {{name}} where one goes, so that a
// harness added, a path moved or a rule changed changes the help with it:
// the help never restates what a table or the rules say.
var docParts = map[string]func() (string, error){
	// The providers dalo has tables for: "claude, codex, ...".
	"providers": func() (string, error) {
		return strings.Join(store.Providers(), ", "), nil
	},
	// The same as a usage line offers them: "claude|codex|...".
	"provider choices": func() (string, error) {
		return strings.Join(store.Providers(), "|"), nil
	},
	// Each provider's hooks file, a line each, as its newest table says.
	"hooks files": func() (string, error) {
		return providerLines(func(t *providers.Table) string { return t.Display(t.Config.Hooks.Location) })
	},
	// Each provider's global instruction file, a line each.
	"instruction files": func() (string, error) {
		return providerLines(func(t *providers.Table) string {
			l := t.Config.Instructions
			s := t.Display(l)
			if l.Root == "config_home" {
				s += fmt.Sprintf(" (default ~/%s/%s)", t.Config.Home.Default, l.Path)
			}
			return s + ", global"
		})
	},
	// Where each provider's project scope is, a line each: the per-user
	// file sync writes its entries into, and the skills and agents.
	"project scopes": func() (string, error) {
		return providerLines(func(t *providers.Table) string {
			p := t.Config.Project
			if p == nil || p.Status != providers.Supported {
				return "none dalo installs into"
			}
			// Project locations, below the project's directory.
			s := p.Hooks.Path
			for _, l := range p.Skills {
				s += ", skills in " + l.Path
			}
			if p.Agents != nil {
				s += ", agents in " + p.Agents.Path
			}
			return s
		})
	},
	// The harnesses whose own trust of a hook --trust records.
	"trust harnesses": func() (string, error) {
		var names []string
		for _, t := range newestTables() {
			if t.Config.Trust.Required {
				names = append(names, t.Harness)
			}
		}
		return strings.Join(names, ", "), nil
	},
	// #SourceIDRule: what a source id is, in words.
	"source id rule": func() (string, error) {
		r, err := engine.LoadRules()
		if err != nil {
			return "", err
		}
		return wrapText(r.SourceIDRule(), 75), nil
	},
	// The references of the members a grant approves: "skill:NAME or agent:NAME".
	"member refs": func() (string, error) {
		refs := make([]string, len(plan.MemberKinds))
		for i, k := range plan.MemberKinds {
			refs[i] = k + ":NAME"
		}
		return strings.Join(refs, " or "), nil
	},
	// What claude-hook.sh itself needs, which every imported tool claims.
	"adapter claims": func() (string, error) {
		return strings.Join(claudeplugin.AdapterCapabilities, " and ") + ", " + strings.Join(claudeplugin.AdapterEnv, " and "), nil
	},
}

// docPart matches where a doc names one of docParts.
var docPart = regexp.MustCompile(`\{\{([a-z ]+)\}\}`)

// expandDoc is doc with each {{name}} replaced by docParts[name]. A part
// that cannot be made reads as what it is and why; a name docParts lacks
// is a bug, which TestDocParts catches.
func expandDoc(doc string) string {
	return docPart.ReplaceAllStringFunc(doc, func(m string) string {
		f, ok := docParts[docPart.FindStringSubmatch(m)[1]]
		if !ok {
			panic("help names an unknown part " + m)
		}
		s, err := f()
		if err != nil {
			return fmt.Sprintf("(%s: %v)", m, err)
		}
		return s
	})
}

// newestTables is the newest shipped table of each provider, by name.
func newestTables() []*providers.Table {
	ts, err := providers.Load()
	if err != nil {
		return nil
	}
	var out []*providers.Table
	for _, name := range store.Providers() {
		if t, ok := ts.Newest(name); ok {
			out = append(out, t)
		}
	}
	return out
}

// providerLines is a line for each provider, "  NAME  what", what being
// what of its newest table, the names padded to one column.
func providerLines(what func(*providers.Table) string) (string, error) {
	ts := newestTables()
	if len(ts) == 0 {
		return "", fmt.Errorf("no provider tables")
	}
	width := 0
	for _, t := range ts {
		width = max(width, len(t.Name))
	}
	var b strings.Builder
	for i, t := range ts {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "  %-*s  %s", width, t.Name, what(t))
	}
	return b.String(), nil
}

// wrapText breaks s into lines of at most width bytes at its spaces, as
// the help texts are written.
func wrapText(s string, width int) string {
	var b strings.Builder
	n := 0
	for i, w := range strings.Fields(s) {
		switch {
		case i == 0:
		case n+1+len(w) > width:
			b.WriteByte('\n')
			n = 0
		default:
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}
