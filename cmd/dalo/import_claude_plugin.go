package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"dalo/claudeplugin"
	"dalo/engine"
	"dalo/internal/termtext"
	"dalo/plan"
)

const importClaudeDoc = `Import claude-plugin turns the Claude Code plugin in PATH (the directory
holding .claude-plugin/plugin.json, skills/, agents/, commands/,
hooks/hooks.json) into the package plugins/NAME of the source in --into (the
current directory by default).

  skills and agents     members, copied whole to skills/ and agents/
  command hooks         each a tool and a hook on the draft row of its event,
                        from the newest Claude Code table (PreToolUse to
                        tool_call/before, ...), required, failure policy
                        report; the tool runs the plugin's command through
                        claude-hook.sh, an adapter in the package, which maps
                        its native answer onto a portable result
  everything else       listed under "not imported", with the reason

Each tool asks for no more than dalo can read that it needs: the files its
command names and those they name in turn (a sourced script, an imported
Python module), the capabilities and environment variables their text shows
(each with the file and line it was read at), beside the adapter's own:
{{adapter claims}}. What the text cannot tell
(a path a script computes, files no hook names) is a note on stderr: widen
the tool by hand where it needs more. A program that is no text, or in a
language dalo does not read, claims every capability: narrow it by hand.

A hook on an event whose row admits a blocking effect takes it: a native
exit 2 or deny becomes a deny, and an answer a gate cannot map denies.
Import grants nothing: review and approve the package as any other. It
validates what it writes and prints the diagnostics when it does not
validate; it replaces nothing that exists.

Exit status: 0 imported, and the package validates; 1 nothing written (the
package or a member exists already, the plugin cannot be read, PATH holds
no plugin) or written but not valid; 2 bad usage, a PATH or --into that
is no directory, or an --into in the plugin (the current directory, when
run in it).

Examples:
  # Import a plugin into the source ./agents-src, then register and review it.
  dalo import claude-plugin ~/src/my-plugin --into agents-src
  dalo source add mine agents-src
  dalo plugin review mine:my-plugin --provider claude
`

func init() {
	register(&command{
		name:  "import claude-plugin",
		usage: "PATH [--into SOURCE] [--json]",
		short: "turn a Claude Code plugin into a package",
		doc:   importClaudeDoc,
		flags: func(fs *pflag.FlagSet) {
			fs.String("into", ".", "the source directory to add the package to")
		},
		run: runImportClaude,
	})
}

// checkPluginDir says what is wrong with PATH when it is no directory, in
// a plugin's terms (not a source's): missing, unreadable, or a file, with
// the plugin to give when the file is its plugin.json.
func checkPluginDir(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("plugin directory not found: %s", dir)
	case err != nil:
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("plugin directory %s cannot be read: %v", dir, err)
	case fi.IsDir():
		return nil
	}
	msg := dir + " is a file, not a plugin directory: a Claude Code plugin is a directory, holding .claude-plugin/plugin.json"
	if filepath.Base(dir) == "plugin.json" && filepath.Base(filepath.Dir(dir)) == ".claude-plugin" {
		msg += "; the plugin of this plugin.json is " + filepath.Dir(filepath.Dir(dir))
	}
	return errors.New(msg)
}

// within reports whether dir is root or a directory below it, as the
// file system resolves them (links and all).
func within(dir, root string) bool {
	d, err1 := filepath.EvalSymlinks(dir)
	r, err2 := filepath.EvalSymlinks(root)
	if err1 != nil || err2 != nil {
		return false
	}
	d, err1 = filepath.Abs(d)
	r, err2 = filepath.Abs(r)
	if err1 != nil || err2 != nil {
		return false
	}
	rel, err := filepath.Rel(r, d)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// importReport is what --json prints: the conversion's report, where it
// was written and what validation said of the result there.
type importReport struct {
	*claudeplugin.Report
	Into        string              `json:"into"`
	Valid       bool                `json:"valid"`
	Diagnostics []engine.Diagnostic `json:"diagnostics"`
}

func runImportClaude(e *env, fs *pflag.FlagSet) int {
	const cmd = "import claude-plugin"
	if fs.NArg() != 1 {
		return usageError(e, cmd, "want exactly one PATH, got %d arguments", fs.NArg())
	}
	from := fs.Arg(0)
	into, _ := fs.GetString("into")
	if err := engine.CheckSourceDir(into); err != nil {
		return usageError(e, cmd, "--into: %v", err)
	}
	if err := checkPluginDir(from); err != nil {
		return usageError(e, cmd, "PATH: %v", err)
	}
	if within(into, from) {
		// As 'dalo import claude-plugin .' run in the plugin does with
		// --into's default.
		return usageError(e, cmd, "--into %s is the plugin %s or a directory in it: the package would be written into the plugin itself; import into a source of its own ('dalo init DIR', then --into DIR)", into, from)
	}
	r, tables, err := rulesAndTables()
	if err != nil {
		return fail(e, cmd, err)
	}
	opt, err := claudeplugin.NewOptions(r, tables)
	if err != nil {
		return fail(e, cmd, err)
	}
	tree, rep, err := claudeplugin.Convert(from, opt)
	if err != nil {
		return fail(e, cmd, err)
	}
	staged, v, code := stageNew(e, cmd, tree, into)
	if staged == nil {
		return code
	}
	defer staged.Discard()
	if code := commitNew(e, cmd, staged, into); code != exitOK {
		return code
	}
	out := importReport{Report: rep, Into: into, Valid: v.Valid, Diagnostics: v.Diagnostics}
	if out.Diagnostics == nil {
		out.Diagnostics = []engine.Diagnostic{}
	}
	if e.json {
		writeJSON(e, out)
	} else {
		printImport(e.stdout, &out, v)
	}
	printWiden(e.stderr, cmd, rep)
	if !v.Valid {
		return exitFail
	}
	return exitOK
}

// claimList lists claims by name, with where each was read unless it is
// the adapter's own need, when from is set.
func claimList(cs []claudeplugin.Claim, from bool) string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Name
		if from && c.From != claudeplugin.AdapterFile {
			out[i] += " (" + c.From + ")"
		}
	}
	return strings.Join(out, ", ")
}

// printWiden says on stderr what dalo cannot tell of what the imported
// tools need, for the author to widen a tool by hand.
func printWiden(w io.Writer, cmd string, r *claudeplugin.Report) {
	if len(r.Hooks) == 0 {
		return
	}
	p := func(format string, args ...any) {
		fmt.Fprintf(w, "dalo %s: note: %s\n", cmd, termtext.Escape(fmt.Sprintf(format, args...)))
	}
	p("each tool has only the files, capabilities and environment variables dalo read in the text of its command and the scripts it names; dalo cannot tell all a program does: review them, and widen a tool by hand where it needs more")
	for _, h := range r.Hooks {
		for _, n := range h.Widen {
			p("tool %s: %s", h.ID, n)
		}
	}
	for _, n := range r.Widen {
		p("%s", n)
	}
}

func printImport(w io.Writer, r *importReport, v *engine.Report) {
	p := func(format string, args ...any) { fmt.Fprintln(w, termtext.Escape(fmt.Sprintf(format, args...))) }
	p("imported Claude Code plugin %s into %s as package %s (rows from %s)", r.Plugin, r.Into, r.Package, r.Table)
	for _, wr := range r.Wrote {
		if wr.Dir {
			p("  wrote %s/ (%s)", wr.Path, plural(wr.Files, "file"))
		} else {
			p("  wrote %s", wr.Path)
		}
	}
	if len(r.Members) > 0 {
		p("members:")
		for _, m := range r.Members {
			p("  %s (%s), from %s", m.Ref, m.Requirement, m.From)
		}
	}
	if len(r.Hooks) > 0 {
		p("hooks (required, failure policy %s: Claude Code, too, lets the action proceed when a hook command fails):", claudeplugin.FailurePolicy)
		for _, h := range r.Hooks {
			on := "every call"
			switch {
			case !plan.Matchers[h.Subject][h.Phase]:
				on = ""
			case len(h.ToolNames) > 0:
				on = "tools " + strings.Join(h.ToolNames, ", ")
			case h.Filter != "":
				on = "tool names matching " + h.Filter
			}
			if on != "" {
				on = ", " + on
			}
			p("  %s: %s to %s/%s, effect %s, timeout %d ms%s", h.ID, h.Event, h.Subject, h.Phase, h.Effect, h.TimeoutMS, on)
			p("    from %s: %s", h.From, h.Command)
			if len(h.Files) > 0 {
				p("    files: %s", strings.Join(h.Files, ", "))
			}
			p("    capabilities: %s; env: %s", claimList(h.Capabilities, true), claimList(h.Env, false))
			for _, n := range h.Notes {
				p("    note: %s", n)
			}
		}
	}
	if len(r.NotImported) > 0 {
		p("not imported:")
		for _, it := range r.NotImported {
			p("  %s: %s", it.What, it.Why)
		}
	}
	for _, n := range r.Notes {
		p("note: %s", n)
	}
	for _, n := range blockedNotes(v) {
		p("%s", n)
	}
	if !v.Valid {
		p("the package does not validate:")
		for _, d := range v.Diagnostics {
			p("  %s", d)
		}
		return
	}
	if len(v.Diagnostics) > 0 {
		p("validation warnings:")
		for _, d := range v.Diagnostics {
			p("  %s", d)
		}
	}
	p("it validates; it grants nothing: register the source, then review and approve it ('dalo plugin review SOURCE:%s')", r.Package)
}
