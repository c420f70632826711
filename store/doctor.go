package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"dalo/providers"
	"dalo/store/plan"
)

// A Finding is one thing doctor checked.
type Finding struct {
	Status  string `json:"status"` // ok, problem, unverified
	Subject string `json:"subject"`
	Message string `json:"message"`
}

// Doctor checks, without writing, that the store, the staged digests, the
// dispatch plans and the harness entries agree. It reads like a dispatch
// does and takes no lock.
func (s *Store) Doctor() []Finding {
	var out []Finding
	add := func(status, subject, format string, args ...any) {
		out = append(out, Finding{status, subject, fmt.Sprintf(format, args...)})
	}
	if fi, err := os.Stat(s.Dir); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			add("ok", s.Dir, "no store yet: nothing registered, approved or installed")
			return out
		}
		add("problem", s.Dir, "%v", err)
		return out
	} else if !fi.IsDir() {
		add("problem", s.Dir, "not a directory")
		return out
	}
	srcs, err := s.Sources()
	if err != nil {
		add("problem", s.path("sources.json"), "%v", err)
	} else {
		for _, x := range srcs {
			if fi, err := os.Stat(x.Path); err != nil || !fi.IsDir() {
				add("problem", "source "+x.ID, "%s is not a readable directory", x.Path)
			} else {
				add("ok", "source "+x.ID, "%s", x.Path)
			}
		}
	}
	// The ledger, file by file, so that one corrupt grant does not hide
	// the others.
	grants := map[string]*plan.Grant{}
	if ents, err := os.ReadDir(s.path("grants")); err == nil {
		for _, e := range ents {
			if isTemp(e.Name()) || !strings.HasSuffix(e.Name(), ".json") {
				continue
			}
			g, err := s.Grant(strings.TrimSuffix(e.Name(), ".json"))
			if err != nil {
				add("problem", "ledger", "%v", err)
				continue
			}
			grants[g.ID] = g
		}
		add("ok", "ledger", "%s", nouns(len(grants), "grant"))
	} else if !errors.Is(err, fs.ErrNotExist) {
		add("problem", "ledger", "%v", err)
	}
	ts, err := providers.Load()
	if err != nil {
		add("problem", "providers", "%v", err)
		return out
	}
	names, err := s.InstalledProviders()
	if err != nil {
		add("problem", "installs", "%v", err)
		return out
	}
	used := map[string]bool{}
	complete := true // every install record read: the unused staged trees are known
	for _, name := range names {
		in, err := s.Installed(name)
		if err != nil {
			add("problem", name, "%v", err)
			complete = false
			continue
		}
		for _, ip := range in.Packages {
			for _, d := range ip.Staged {
				used[d] = true
			}
		}
		if len(in.Packages) == 0 && len(in.Harness.Entries) == 0 {
			continue
		}
		t, err := ts.Resolve(name)
		if err != nil {
			add("problem", name, "%v", err)
			continue
		}
		out = append(out, s.doctorProvider(t, in, grants)...)
	}
	if ents, err := os.ReadDir(s.path("staged")); err == nil && complete {
		for _, e := range ents {
			if !used[e.Name()] && !isTemp(e.Name()) {
				add("problem", "staged "+e.Name(), "no installed package uses it; the next install or remove deletes it")
			}
		}
	}
	return out
}

func (s *Store) doctorProvider(t *providers.Table, in *Installed, grants map[string]*plan.Grant) []Finding {
	var out []Finding
	add := func(status, subject, format string, args ...any) {
		out = append(out, Finding{status, subject, fmt.Sprintf(format, args...)})
	}
	name := t.Name
	want, werr := PlanOf(t, in)
	have, err := s.ReadPlan(name)
	switch {
	case werr != nil:
		add("problem", name+" plan", "%v", werr)
	case errors.Is(err, fs.ErrNotExist) && len(want.Events) == 0:
	case err != nil:
		add("problem", name+" plan", "%v", err)
	default:
		a, _ := plan.Canonical(have)
		b, _ := plan.Canonical(want)
		if string(a) != string(b) {
			add("problem", name+" plan", "%s does not match what is installed; run 'dalo plugin install' again", s.planPath(name))
		} else {
			add("ok", name+" plan", "%s", nouns(len(have.Events), "native event"))
		}
	}
	if werr == nil {
		out = append(out, s.doctorIndex(name, want)...)
	}
	for _, ip := range in.Packages {
		subj := name + " " + ip.Package
		for _, h := range ip.Hooks {
			for _, ref := range []plan.GrantRef{h.Hook.ToolGrant, h.Hook.HookGrant} {
				g := grants[ref.ID]
				switch {
				case g == nil:
					add("problem", subj, "hook %s will not run: grant %s was revoked; approve it again or remove the package", h.Hook.Hook, ref.ID)
				case g.Digest != ref.Digest:
					add("problem", subj, "hook %s will not run: grant %s changed since install; install again", h.Hook.Hook, ref.ID)
				}
			}
			if bad := VerifyStaged(h.Hook.Tool.Root, toDigests(h.Hook.Tool.Files)); len(bad) > 0 {
				add("problem", subj, "staged tool %s differs from its approved bytes: %s", h.Hook.Tool.ID, strings.Join(bad, ", "))
			}
		}
		for _, c := range changedOwned(&ip) {
			add("problem", subj, "%s", c)
		}
		for _, o := range append(append([]OwnedTree(nil), ip.Skills...), ip.Agents...) {
			if _, err := os.Lstat(o.Path); err != nil {
				add("problem", subj, "%s is missing; install again", o.Path)
			}
		}
		add("ok", subj, "installed: %s, %s, %s", nouns(len(ip.Hooks), "hook"), nouns(len(ip.Skills), "skill"), nouns(len(ip.Agents), "agent"))
	}
	// The harness entries.
	file := in.Harness.File
	if file == "" {
		file, _ = configFile(t)
	}
	doc, err := readConfig(file)
	if err != nil {
		add("problem", file, "%v", err)
		return out
	}
	var owned []found
	if doc != nil {
		if _, _, owned, err = scanConfig(file, doc, name); err != nil {
			add("problem", file, "%v", err)
			return out
		}
	}
	seen := map[string]bool{}
	for _, f := range owned {
		rec, ok := in.Harness.Entries[f.event]
		switch {
		case !ok:
			add("problem", file, "dalo entry for %s is not in the store: no installed package needs it; remove it by hand", f.event)
		case !sameEntry(doc[f.val.start:f.val.end], rec):
			add("problem", file, "dalo entry for %s was changed since dalo wrote it", f.event)
		default:
			if prog := commandProgram(rec.Hooks[0].Command); !canRun(prog) {
				add("problem", file, "dalo entry for %s calls %s, which is missing or cannot run: the harness cannot dispatch, so its hooks do not run; run 'dalo plugin install' again", f.event, prog)
				break
			}
			add("ok", file, "dalo entry for %s present", f.event)
		}
		seen[f.event] = true
	}
	events := make([]string, 0, len(want.Events))
	for ev := range want.Events {
		events = append(events, ev)
	}
	sort.Strings(events)
	for _, ev := range events {
		if !seen[ev] {
			add("problem", file, "dalo entry for %s is missing; run 'dalo plugin install' again", ev)
		}
	}
	if t.Config.Trust.Required && len(owned) > 0 {
		add("unverified", file, "%s runs only hooks the user trusted; whether dalo's entries are trusted cannot be verified (%s keeps no trust record dalo can read): check its /hooks review", t.Harness, t.Key())
	}
	return out
}

func toDigests(files map[string]string) map[string]plan.FileDigest {
	out := make(map[string]plan.FileDigest, len(files))
	for p, d := range files {
		out[p] = plan.FileDigest{SHA256: d}
	}
	return out
}

// doctorIndex checks that the dispatch index, what dispatch actually reads,
// holds for every event exactly the hooks and native protocol of want.
func (s *Store) doctorIndex(name string, want *plan.Plan) []Finding {
	subj := name + " dispatch index"
	var bad []string
	for _, ev := range sortedKeys(want.Events) {
		ef, err := plan.Load(s.path("plans"), name, ev, func(*plan.Native) (string, bool) { return "", true })
		if err != nil {
			return []Finding{{"problem", subj, err.Error()}}
		}
		if ef == nil {
			bad = append(bad, ev+" is missing")
			continue
		}
		a, _ := plan.Canonical(struct {
			N plan.Native
			H []plan.PlannedHook
		}{ef.Native, ef.Hooks})
		b, _ := plan.Canonical(struct {
			N plan.Native
			H []plan.PlannedHook
		}{want.Natives[ev], want.Events[ev]})
		if string(a) != string(b) {
			bad = append(bad, ev+" differs")
		}
	}
	switch {
	case len(bad) > 0:
		return []Finding{{"problem", subj, strings.Join(bad, ", ") + "; run 'dalo plugin install' again"}}
	case len(want.Events) == 0:
		return nil
	}
	return []Finding{{"ok", subj, nouns(len(want.Events), "native event")}}
}

// commandProgram is the program of a command line shellQuote wrote: its
// first word, unquoted.
func commandProgram(cmd string) string {
	if !strings.HasPrefix(cmd, "'") {
		prog, _, _ := strings.Cut(cmd, " ")
		return prog
	}
	var b strings.Builder
	for rest := cmd[1:]; ; {
		i := strings.IndexByte(rest, '\'')
		if i < 0 {
			return b.String() + rest
		}
		b.WriteString(rest[:i])
		if !strings.HasPrefix(rest[i:], `'\''`) {
			return b.String()
		}
		b.WriteByte('\'')
		rest = rest[i+4:]
	}
}

// canRun says whether path is a regular file someone may execute.
func canRun(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// nouns counts n of word in English: "1 hook", "2 hooks", "0 hooks".
func nouns(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
