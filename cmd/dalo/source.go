package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"dalo/engine"
	"dalo/internal/cache"
	"dalo/internal/termtext"
	"dalo/plan"
	"dalo/providers"
	"dalo/store"
	"dalo/store/gitrepo"
)

const sourceAddDoc = `Source add registers a source under an identity of your choice: a directory,
or a git repository. The registry is yours: a package cannot add or trust a
source by naming it. References to other sources (kind:source:selector)
resolve through it when you review, approve or install; validate never
consults it.

LOCATION is a git URL (https://, ssh://, file://, or scp-like
user@host:path) or else a source directory: the one holding
plugins/<name>/PLUGIN.toml. A directory is read as it is whenever dalo
reads it. A git source is fetched, with the system git, into a bare
repository in the store and pinned to the commit its ref names now (--ref,
a branch or tag; the remote's default branch without it): every command
reads the packages of that commit, and only 'dalo source update' moves the
pin. Its files are read from git's object store, with no checkout, so no
filter or hook of the repository ever runs.

Git runs hardened: https, ssh and file only (http, git:// and others are
refused), no submodules, never a prompt (GIT_TERMINAL_PROMPT=0; ssh with
-o BatchMode=yes, so it logs in with a key), hooks off, and a timeout of
10 minutes. Credentials written in an https URL are used for that fetch
only and never stored or printed: later fetches get them from a git
credential helper, as git would.

Exit status: 0 added; 1 the id is already registered, the fetch failed, or
the store cannot be written; 2 bad usage, an invalid ID, a transport dalo
does not allow, or a LOCATION that is neither a git URL nor a directory.

Examples:
  dalo source add company ~/src/company-agents
  dalo source add team https://git.example.com/team/agents.git --ref main
  dalo source add ops git@git.example.com:ops/agents.git
`

const sourceListDoc = `Source list prints the registered sources: identity and directory, or for a
git source its URL, the ref it follows and the commit it is pinned to.

--json prints a list of {id, path, git: {url, ref, commit, tree}}: path is
where its packages are read (for a git source, the snapshot of its pinned
commit in the store), git only for a git source.

Examples:
  dalo source list
  dalo --json source list
`

const sourceUpdateDoc = `Source update fetches the ref a git source follows and moves its pin to
the commit the ref names now; with --to, to that commit (whole or
abbreviated: the pin before the current one, even if a force-push has
since removed it upstream, or one a branch or tag there reaches now),
which is how you go back. The store keeps what those two pins reach and
collects the rest a fetch brought. A fetch is bounded (1 GiB); one over it
is refused and changes nothing. Without ID it updates every git source; a
directory source has nothing to fetch.

It prints, per package, what changed: manifest fields, tool files by
digest, hooks, members and the bytes of skills and agents. Installed
packages keep running their staged, approved bytes: nothing a harness runs
changes until you approve it with 'dalo plugin update'. 'dalo plugin
outdated' lists what differs.

A fetch that fails (unreachable URL, unknown ref, no git, a commit that is
not there, a timeout) changes nothing: the previous pin stays in force.

Exit status: 0 updated or already current; 1 a fetch failed or the store
cannot be written; 2 bad usage.

Examples:
  dalo source update team
  dalo source update
  dalo source update team --to 3f2a9c1
`

const sourceRemoveDoc = `Source remove unregisters a source. It refuses while grants or
installations of its packages exist. A git source's repository and
snapshot in the store go with it.

Examples:
  dalo source remove company
`

func init() {
	register(&command{
		name: "source add", usage: "ID LOCATION [--ref REF]", short: "register a source directory or git repository", doc: sourceAddDoc,
		flags: func(fs *pflag.FlagSet) {
			fs.String("ref", "", "the branch or tag of a git source to follow (default: the remote's default branch)")
		},
		run: runSourceAdd,
	})
	register(&command{name: "source list", usage: "[--json]", short: "list registered sources and their pins", doc: sourceListDoc, run: runSourceList})
	register(&command{
		name: "source update", usage: "[ID] [--to COMMIT]", short: "fetch a git source and move its pin", doc: sourceUpdateDoc,
		flags: func(fs *pflag.FlagSet) {
			fs.String("to", "", "pin to this commit instead of the ref's newest")
		},
		run: runSourceUpdate,
	})
	register(&command{name: "source remove", usage: "ID", short: "unregister a source", doc: sourceRemoveDoc, run: runSourceRemove})
}

// openStore opens the store at $DALO_HOME (or its default).
func openStore(e *env, cmd string) (*store.Store, bool) {
	dir, err := plan.Home()
	if err == nil {
		var s *store.Store
		if s, err = store.Open(dir); err == nil {
			s.Progress = e.progress
			s.TablesCache = func() store.TablesCache { return tablesCache(s) }
			return s, true
		}
	}
	fmt.Fprintf(e.stderr, "dalo %s: %v\n", cmd, err)
	return nil, false
}

// tablesCache is the cache of the store's local tables, checked and
// decoded, kept per dalo build in the user's cache directory; nil when
// there is no place for one, as for validation's (validationCache).
func tablesCache(s *store.Store) store.TablesCache {
	dir, err := cache.Dir()
	if err != nil {
		return nil
	}
	build, err := cache.BuildID()
	if err != nil {
		return nil
	}
	return cache.Open(dir, "tables", build, s.LocalTablesDir())
}

// fail reports err for cmd and returns exitFail, or exitUsage for an
// unknown provider: a --provider no table describes is bad usage, in every
// command.
func fail(e *env, cmd string, err error) int {
	if errors.Is(err, providers.ErrUnknownProvider) {
		return usageError(e, cmd, "%v", err)
	}
	fmt.Fprintf(e.stderr, "dalo %s: %v\n", cmd, err)
	return exitFail
}

func runSourceAdd(e *env, fs *pflag.FlagSet) int {
	const cmd = "source add"
	if fs.NArg() != 2 {
		return usageError(e, cmd, "want ID and LOCATION, got %d arguments", fs.NArg())
	}
	if err := engine.CheckSourceID(fs.Arg(0)); err != nil {
		return usageError(e, cmd, "%v", err)
	}
	ref, _ := fs.GetString("ref")
	u, isGit, err := gitrepo.ParseURL(fs.Arg(1))
	if err != nil {
		return usageError(e, cmd, "%v", err)
	}
	if !isGit && ref != "" {
		return usageError(e, cmd, "--ref is for a git URL; %s is a directory", fs.Arg(1))
	}
	if ref != "" {
		if err := gitrepo.CheckRef(ref); err != nil {
			return usageError(e, cmd, "--ref: %v", err)
		}
	}
	s, ok := openStore(e, cmd)
	if !ok {
		return exitFail
	}
	src, err := s.AddSource(fs.Arg(0), fs.Arg(1), ref)
	if errors.Is(err, engine.ErrNoSource) {
		// As for validate: a PATH that is no directory is a bad invocation.
		return usageError(e, cmd, "%v", err)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "dalo %s: %v\nnothing was added\n", cmd, err)
		return exitFail
	}
	if src.Git == nil {
		fmt.Fprintf(e.stdout, "added source %s: %s\n", src.ID, src.Path)
		return exitOK
	}
	fmt.Fprintf(e.stdout, "added source %s: %s, %s at commit %s\n", src.ID, src.Git.URL, src.Git.RefName(), src.Git.Commit)
	if u.HasCredentials() {
		fmt.Fprintf(e.stdout, "  note: the credentials in the URL were used for this fetch only: dalo neither stores nor shows them, so 'dalo source update %s' needs them from a git credential helper\n", src.ID)
	}
	return exitOK
}

func runSourceList(e *env, fs *pflag.FlagSet) int {
	if fs.NArg() != 0 {
		return usageError(e, "source list", "takes no arguments")
	}
	s, ok := openStore(e, "source list")
	if !ok {
		return exitFail
	}
	srcs, err := s.Sources()
	if err != nil {
		return fail(e, "source list", err)
	}
	if e.json {
		if srcs == nil {
			srcs = []store.Source{}
		}
		printJSON(e, srcs)
		return exitOK
	}
	if len(srcs) == 0 {
		fmt.Fprintln(e.stdout, "no sources; add one with 'dalo source add ID PATH|URL'")
	}
	for _, x := range srcs {
		if x.Git != nil {
			fmt.Fprintf(e.stdout, "%s\t%s\t%s\tcommit %s\n", x.ID, x.Git.URL, x.Git.RefName(), x.Git.Commit)
			continue
		}
		fmt.Fprintf(e.stdout, "%s\t%s\n", x.ID, x.Path)
	}
	return exitOK
}

func runSourceUpdate(e *env, fs *pflag.FlagSet) int {
	const cmd = "source update"
	to, _ := fs.GetString("to")
	if fs.NArg() > 1 {
		return usageError(e, cmd, "want at most one source ID, got %d arguments", fs.NArg())
	}
	if to != "" && fs.NArg() != 1 {
		return usageError(e, cmd, "--to pins one source: name its ID")
	}
	if to != "" {
		if err := gitrepo.CheckCommit(to); err != nil {
			return usageError(e, cmd, "--to: %v", err)
		}
	}
	s, ok := openStore(e, cmd)
	if !ok {
		return exitFail
	}
	var ids []string
	if fs.NArg() == 1 {
		ids = []string{fs.Arg(0)}
	} else {
		srcs, err := s.Sources()
		if err != nil {
			return fail(e, cmd, err)
		}
		for _, x := range srcs {
			if x.Git != nil {
				ids = append(ids, x.ID)
			}
		}
		if len(ids) == 0 {
			fmt.Fprintln(e.stdout, "no git sources to update: a directory source is read as it is")
			return exitOK
		}
	}
	installed, err := installedOn(s)
	if err != nil {
		return fail(e, cmd, err)
	}
	code, moved := exitOK, false
	for _, id := range ids {
		up, err := s.UpdateSource(id, to)
		if err != nil {
			fmt.Fprintf(e.stderr, "dalo %s: %s: %v\n", cmd, id, err)
			if src, lerr := s.LookupSource(id); lerr == nil && src.Git != nil {
				fmt.Fprintf(e.stderr, "source %s stays pinned to %s\n", id, src.Git.Commit)
			}
			code = exitFail
			continue
		}
		moved = printSourceUpdate(e.stdout, up, installed) || moved
	}
	if moved {
		fmt.Fprintln(e.stdout, "installed packages keep running the bytes you approved: 'dalo plugin outdated' lists what differs, 'dalo plugin update' moves them")
	}
	return code
}

// printSourceUpdate says what up did, package by package; it says
// whether an installed package is behind now.
func printSourceUpdate(w io.Writer, up *store.SourceUpdate, installed map[string][]string) (behind bool) {
	id, now := up.Source.ID, up.Source.Git
	if now.Commit == up.Old.Commit {
		fmt.Fprintf(w, "%s: %s at %s, unchanged\n", id, now.RefName(), now.Commit)
		return false
	}
	fmt.Fprintf(w, "%s: %s %s -> %s\n", id, now.RefName(), short(up.Old.Commit), short(now.Commit))
	if up.Rewritten {
		fmt.Fprintf(w, "  note: %s does not descend from %s: the history was rewritten upstream (a force-push), or you went back\n", short(now.Commit), short(up.Old.Commit))
	}
	unchanged := 0
	for _, p := range up.Packages {
		where := ""
		if on := installed[p.Package]; len(on) > 0 {
			where = "; installed on " + strings.Join(on, ", ")
		}
		switch p.State {
		case "unchanged":
			unchanged++
			continue
		case "added":
			fmt.Fprintf(w, "  %s: added%s\n", termtext.Escape(p.Package), validNote(p.Valid))
			continue
		case "removed":
			fmt.Fprintf(w, "  %s: removed upstream%s\n", termtext.Escape(p.Package), where)
			if where != "" {
				fmt.Fprintf(w, "    it keeps running what you approved; 'dalo plugin remove %s --provider P' takes it away\n", termtext.Escape(p.Package))
			}
		default:
			fmt.Fprintf(w, "  %s: changed%s%s\n", termtext.Escape(p.Package), validNote(p.Valid), where)
			writeDifferences(w, "    ", p.Differences, nil)
		}
		behind = behind || where != ""
	}
	if unchanged > 0 {
		fmt.Fprintf(w, "  %s unchanged\n", plural(unchanged, "package"))
	}
	return behind
}

func validNote(valid bool) string {
	if valid {
		return ""
	}
	return " (invalid: 'dalo plugin review' shows why)"
}

// installedOn maps each installed package to the providers it is
// installed on.
func installedOn(s *store.Store) (map[string][]string, error) {
	out := map[string][]string{}
	names, err := s.InstalledProviders()
	if err != nil {
		return nil, err
	}
	for _, p := range names {
		in, err := s.Installed(p)
		if err != nil {
			return nil, err
		}
		for _, ip := range in.Packages {
			out[ip.Package] = append(out[ip.Package], p)
		}
	}
	return out, nil
}

// writeDifferences prints diffs side by side, item by item: a whole item
// added or removed on one line, otherwise each field with its old value
// and, after '|', its new one. notes add a word after an item's name.
func writeDifferences(w io.Writer, indent string, diffs []store.Difference, notes map[string]string) {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	last := ""
	for _, d := range diffs {
		note := ""
		if n := notes[d.Item]; n != "" {
			note = ": " + n
		}
		switch {
		case d.Field == "" && d.New != "":
			tw.Flush()
			fmt.Fprintf(&b, "%s%s: added%s\n", indent, cell(d.Item), strings.TrimPrefix(note, ":"))
			last = ""
			continue
		case d.Field == "":
			tw.Flush()
			fmt.Fprintf(&b, "%s%s: removed%s\n", indent, cell(d.Item), strings.TrimPrefix(note, ":"))
			last = ""
			continue
		}
		if d.Item != last {
			tw.Flush()
			fmt.Fprintf(&b, "%s%s%s\n", indent, cell(d.Item), note)
			last = d.Item
		}
		fmt.Fprintf(tw, "%s  %s\t%s\t| %s\n", indent, cell(d.Field), orAbsent(d.Old), orAbsent(d.New))
	}
	tw.Flush()
	for _, line := range strings.SplitAfter(b.String(), "\n") {
		if line != "" {
			fmt.Fprintln(w, strings.TrimRight(line, " \n"))
		}
	}
}

// cell is package text in a column: escaped, a tab or line break that
// would break the columns included.
func cell(s string) string { return termtext.Escape(s) }

func orAbsent(s string) string {
	if s == "" {
		return "-"
	}
	return cell(s)
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}

func runSourceRemove(e *env, fs *pflag.FlagSet) int {
	if fs.NArg() != 1 {
		return usageError(e, "source remove", "want exactly one source ID, got %d arguments", fs.NArg())
	}
	s, ok := openStore(e, "source remove")
	if !ok {
		return exitFail
	}
	if err := s.RemoveSource(fs.Arg(0)); err != nil {
		return fail(e, "source remove", err)
	}
	fmt.Fprintf(e.stdout, "removed source %s\n", fs.Arg(0))
	return exitOK
}
