package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/spf13/pflag"

	"dalo/engine"
	"dalo/internal/cache"
	"dalo/internal/termtext"
)

const validateDoc = `Validate checks an author source without a store: it discovers every
plugins/<name>/PLUGIN.toml, checks each package against PLUGIN.toml schema 1,
tool descriptor 1 and hook descriptor 1, resolves references within the source
and reads the front matter of the skills and agents they name. It never runs a
tool, grants trust or changes a harness configuration.

It prints one line per diagnostic (file:line:column: severity code field:
message), then a grid of hooks by provider, then a summary line. --json
prints report schema 1 instead.

A package whose manifest and directory did not change since an earlier
run is not checked again: the answer comes from a cache under
$XDG_CACHE_HOME/dalo (or ~/.cache/dalo), keyed by everything it depends on
(the manifest's bytes, the name, type, permissions and size of every entry
of the package directory, the source id, the user, and this build of
dalo). The report is the same with and without it; the cache may be
deleted at any time. A cache directory another user owns, or that others
may write, is not used (a warning says so). --no-cache neither reads nor
writes it. Only validate and vet use it: review, approve and install
always check afresh.

--source-id must be one 'dalo source add' would accept, as its rule says:
{{source id rule}}.

Exit status: 0 valid; 1 invalid, no package found, or a required reference
unresolved; 2 bad usage (an invalid --source-id among them) or a SOURCE
that is missing or not a directory (a source is the directory holding
plugins/<name>/PLUGIN.toml, not a manifest).

Examples:
  dalo plugin validate examples/packages/source
  dalo --json plugin validate --source-id company ./source
  dalo vet --provider claude@2.1.233 ./source
`

func init() {
	for _, name := range []string{"plugin validate", "vet"} {
		register(&command{
			name:  name,
			usage: "[--json] [--source-id ID] [--provider NAME@VERSION]... SOURCE",
			short: "validate an author source",
			doc:   validateDoc,
			flags: func(fs *pflag.FlagSet) {
				fs.String("source-id", engine.DefaultSourceID, "source identity for explicit same-source references")
				fs.StringArray("provider", nil, "report hook support for this provider@version (repeatable; a bare name means its newest version)")
				fs.Bool("no-cache", false, "check every package afresh, without reading or writing the validation cache")
			},
			run: runValidate(name),
		})
	}
}

func runValidate(name string) func(*env, *pflag.FlagSet) int {
	return func(e *env, fs *pflag.FlagSet) int {
		if fs.NArg() != 1 {
			return usageError(e, name, "want exactly one SOURCE directory, got %d arguments", fs.NArg())
		}
		id, _ := fs.GetString("source-id")
		// engine.Load reads an empty id as the default; one given on the
		// command line is checked as written.
		if fs.Changed("source-id") {
			if err := engine.CheckSourceID(id); err != nil {
				return usageError(e, name, "--source-id: %v", err)
			}
		}
		provs, _ := fs.GetStringArray("provider")
		keys, err := engine.ResolveProviders(provs)
		if err != nil {
			return usageError(e, name, "%v", err)
		}
		// A large source takes seconds: say so on the terminal, from when
		// discovery knows how many packages there are.
		done := func() {}
		sized := func(packages int, manifestBytes, largest int64) {
			limitMemory(packages, manifestBytes, largest)
			done = e.progress(fmt.Sprintf("validating %d packages", packages))
		}
		opts := engine.Options{SourceID: id, Providers: keys, Sized: sized}
		if noCache, _ := fs.GetBool("no-cache"); !noCache {
			if c := validationCache(e, name, fs.Arg(0), id); c != nil {
				defer c.Close()
				opts.Cache = c
			}
		}
		rep, err := engine.Validate(fs.Arg(0), opts)
		done()
		if errors.Is(err, engine.ErrSourceID) {
			return usageError(e, name, "--source-id: %v", err)
		}
		if errors.Is(err, engine.ErrNoSource) {
			return usageError(e, name, "%v", err)
		}
		if err != nil {
			fmt.Fprintf(e.stderr, "dalo %s: %v\n", name, err)
			return exitUsage
		}
		if e.json {
			writeJSON(e, rep)
		} else {
			// Few writes for the report, not one per line: a large source's
			// grid has a line per hook, and its warnings as many lines again.
			// Each write is a system call, through the scheduler: the
			// report of 1,000 packages of bench/sourcegen's toolbox shape
			// is 8.7 MB, 2,132 writes of bufio's 4 KiB.
			w := bufio.NewWriterSize(e.stdout, reportBuffer)
			printReport(w, rep)
			w.Flush()
		}
		if !rep.Valid {
			return exitFail
		}
		return exitOK
	}
}

// reportBuffer is how many bytes of a report validate writes at a time.
const reportBuffer = 64 << 10

// validationCache returns the cache of package checks of the source root
// validated as id, or nil when there is no place for one (no home
// directory, or one that cannot be made), no identity of this build to
// key it by, or the cache directory is one others could write: then
// validation checks every package, as with --no-cache. The last is said
// on stderr, once a run: the user would want to know that a cache others
// could write is not used, and every run is slower until they fix it.
func validationCache(e *env, name, root, id string) *cache.Cache {
	dir, err := cache.Dir()
	var unsafe *cache.UnsafeError
	if errors.As(err, &unsafe) {
		fmt.Fprintf(e.stderr, "dalo %s: warning: not using the validation cache: %s; only a directory of yours that no one else can write is used (--no-cache skips the cache)\n", name, termtext.Escape(err.Error()))
	}
	if err != nil {
		return nil
	}
	build, err := cache.BuildID()
	if err != nil {
		return nil
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil
	}
	return cache.Open(dir, "validate", build, abs+"\x00"+id)
}

func printReport(w io.Writer, rep *engine.Report) {
	errs, warns := 0, 0
	var line []byte
	for _, d := range rep.Diagnostics {
		line = d.Append(line[:0])
		if termtext.PrintableASCII(line, false) == len(line) {
			w.Write(append(line, '\n')) // the common case, not copied
		} else {
			fmt.Fprintln(w, termtext.Escape(string(line)))
		}
		if d.Severity == engine.Error {
			errs++
		} else {
			warns++
		}
	}
	printGrid(w, rep, len(rep.Diagnostics) > 0)
	verdict := "valid"
	if !rep.Valid {
		verdict = "invalid"
	}
	fmt.Fprintf(w, "%s: %s, %s, %s, %s\n", termtext.Escape(rep.Source.Path), plural(len(rep.Packages), "package"), plural(errs, "error"), plural(warns, "warning"), verdict)
}

// printGrid prints hooks by provider: one row per hook, one column per
// provider version, each cell supported, omitted or unsupported ("blocks"
// when a required hook cannot be activated there), then the reasons.
// What a provider does with a hook says nothing of its package: the hooks
// of an invalid package read "package invalid", and those of a package a
// required reference blocks "blocked by" the references, each explained
// below the grid. A blank line separates the grid from diagnostics above
// it, if any.
func printGrid(w io.Writer, rep *engine.Report, below bool) {
	held := heldPackages(rep)
	caps := rep.Capabilities
	provs := caps.Providers
	// A row a hook, named PACKAGE/HOOK once, not once a provider (a
	// tenth of the grid's cost), in the order of the names.
	type hookRow struct {
		name string
		engine.CapabilityRow
	}
	hooks := make([]hookRow, len(caps.Rows))
	for i, r := range caps.Rows {
		hooks[i] = hookRow{r.Package + "/" + r.Hook, r}
	}
	if len(hooks) == 0 {
		return
	}
	sort.Slice(hooks, func(i, j int) bool { return hooks[i].name < hooks[j].name })
	cell := func(h *hookRow, i int) string {
		if s, ok := held[h.Package]; ok {
			return s
		}
		if a := h.Answers[i]; a.BlocksActivation {
			return a.Status + " (blocks activation)"
		}
		return h.Answers[i].Status
	}
	width := len("hook")
	for _, h := range hooks {
		width = max(width, len(h.name))
	}
	widths := make([]int, len(provs))
	for i, p := range provs {
		widths[i] = len(p)
		for h := range hooks {
			widths[i] = max(widths[i], len(cell(&hooks[h], i)))
		}
	}
	// line writes a row, each column padded as %-*s pads (by runes) and
	// the padding at its end trimmed; fmt for each cell was a sixth of a
	// run with every answer cached.
	var b []byte
	col := func(s string, width int) {
		b = append(b, s...)
		for n := utf8.RuneCountInString(s); n < width; n++ {
			b = append(b, ' ')
		}
	}
	line := func(first string, rest []string) {
		b = b[:0]
		col(first, width)
		for i, r := range rest {
			b = append(b, "  "...)
			col(r, widths[i])
		}
		b = append(bytes.TrimRight(b, " "), '\n')
		w.Write(b)
	}
	if below {
		fmt.Fprintln(w)
	}
	line("hook", provs)
	row := make([]string, len(provs))
	for h := range hooks {
		for i := range provs {
			row[i] = cell(&hooks[h], i)
		}
		line(hooks[h].name, row)
	}
	// The reasons below the grid, a line each, written as they are made:
	// those of 1,000 packages are a megabyte.
	for _, h := range hooks {
		if _, ok := held[h.Package]; ok {
			continue
		}
		for i, p := range provs {
			if a := h.Answers[i]; a.Reason != "" {
				fmt.Fprintf(w, "  %s on %s: %s\n", h.name, p, termtext.Escape(a.Reason))
			}
		}
	}
	var notes []byte
	// Why a package in the grid is blocked, once per reference.
	noted := map[string]bool{}
	for _, h := range hooks {
		name := h.Package
		if noted[name] || !strings.HasPrefix(held[name], "blocked") {
			continue
		}
		noted[name] = true
		for _, r := range rep.Blocked(name) {
			why := r.Resolution
			if r.Reason != "" {
				why += ": " + r.Reason
			}
			notes = fmt.Appendf(notes, "  %s: blocked by required %s, %s\n", name, termtext.Escape(r.Ref), termtext.Escape(why))
		}
	}
	w.Write(notes)
	fmt.Fprintln(w)
}

// heldPackages is, by package name, what keeps a package's hooks from
// running anywhere, which the grid shows instead of the provider's answer:
// "package invalid", or "blocked by" its required references.
func heldPackages(rep *engine.Report) map[string]string {
	held := map[string]string{}
	for _, p := range rep.Packages {
		if !p.Valid {
			held[p.Name] = "package invalid"
			continue
		}
		if refs := rep.Blocked(p.Name); len(refs) > 0 {
			held[p.Name] = blockedCell(refs)
		}
	}
	return held
}

// blockedCell is the grid's cell for the hooks of a package the
// references refs block: up to three named, else two and how many more,
// each named and explained below the grid. A package requiring 200
// missing members made a cell of each of them, to whose width every row
// of a 10,000-hook grid was padded: 810 MB of report.
func blockedCell(refs []engine.Reference) string {
	const named = 3
	b := []byte("blocked by ")
	for i, r := range refs {
		if i > 0 {
			b = append(b, ", "...)
		}
		if i == named-1 && len(refs) > named {
			b = fmt.Appendf(b[:len(b)-2], " and %d more", len(refs)-i)
			break
		}
		b = append(b, termtext.Escape(r.Ref)...)
	}
	return string(b)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
