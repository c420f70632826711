// Command probe proves one harness version against its provider table,
// claim by claim, and writes what a person reviews to add the version:
//
//	go run ./internal/live/probe claude@2.1.332
//
// It installs exactly that version (.ci/harnesses) and, when
// providers/<name>/<version>.cue does not exist yet, writes it as a
// candidate from the nearest table of the harness: every mention of the
// nearest version becomes the new one (its install command, its --version
// output as the harness prints it, its recordings), and every finding the
// nearest table cites becomes a doc: reference to that finding, since
// nobody has rerun it on this version. It then records the version's native
// payloads (internal/fakemodel TestRecord*, into
// providers/testdata/recordings/<name>/<version>), compiles the tables (go
// generate ./providers), runs the whole live suite against the version and
// prints each claim of the table: whether every live test it cites passed
// on this version, and where it differs from the nearest table. It lists
// the native events the version has that the nearest version had not, each
// to be mapped to a row or listed as unsupported (unmapped).
//
// A claim whose test fails is what the harness changed: correct the claim
// in the candidate (its status, reason, output or evidence), add what the
// run showed to providers/testdata/README.md as a finding, and run the
// probe again until every claim holds. Then review the diff and commit the
// table, the recordings and the generated files. The probe exits 1 while a
// claim does not hold.
//
// Flags:
//
//	-run regexp  run only the live tests matching regexp (go test -run)
//	-q           print only the claims that do not hold or that differ
//
// It runs from the module root and needs what the live tests need: Go,
// Node.js and npm.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"dalo/internal/live"
	"dalo/internal/scenario"
	"dalo/providers"
)

func main() {
	run := flag.String("run", "", "run only the live tests matching `regexp`")
	quiet := flag.Bool("q", false, "print only the claims that do not hold or that differ")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: go run ./internal/live/probe [-run regexp] [-q] NAME@VERSION\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 || !regexp.MustCompile(`^[a-z][a-z0-9-]*@[0-9]+\.[0-9]+\.[0-9]+$`).MatchString(flag.Arg(0)) {
		flag.Usage()
		os.Exit(2)
	}
	ok, err := probe(flag.Arg(0), *run, *quiet, os.Stdout)
	if err != nil {
		fmt.Fprintf(os.Stderr, "probe: %v\n", err)
		os.Exit(1)
	}
	if !ok {
		os.Exit(1)
	}
}

// probe runs the probe of key and reports whether every claim holds.
func probe(key, run string, quiet bool, out io.Writer) (bool, error) {
	v, err := prepare(key, out)
	if err != nil {
		return false, err
	}
	results, err := os.MkdirTemp("", "dalo-probe-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(results)
	logs, suiteErr := v.runSuite(run, results, out)
	proof, err := live.ReadProof(results)
	if err != nil {
		if suiteErr != nil {
			return false, fmt.Errorf("the live suite: %v", suiteErr)
		}
		return false, err
	}
	fails, unproved, err := v.report(out, proof, logs, quiet)
	if err != nil {
		return false, err
	}
	if v.near != nil {
		if err := reportEvents(out, v.ts, v.table, v.near, v.dir); err != nil {
			return false, err
		}
	}
	if suiteErr != nil && fails == 0 {
		fmt.Fprintf(out, "\nthe live suite failed outside the tests the table cites:\n")
		for _, line := range logs.failures() {
			fmt.Fprintf(out, "  %s\n", line)
		}
		return false, nil
	}
	return fails == 0 && unproved == 0, nil
}

// A probed is one harness version made ready for the live suite: installed,
// its payloads recorded and its table (the candidate, when it had none)
// compiled.
type probed struct {
	key, name, version string
	file               string // the table's file, from the module root
	dir                string // the harness folder (DALO_HARNESS_DIR)
	ts                 *providers.Tables
	table              *providers.Table
	near               *providers.Table // the nearest other table of the harness, or nil
}

// prepare installs key, records its native payloads, writes the candidate
// table when key has none, and compiles the tables.
func prepare(key string, out io.Writer) (*probed, error) {
	v := &probed{key: key}
	v.name, v.version, _ = strings.Cut(key, "@")
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	if err := os.Chdir(root); err != nil {
		return nil, err
	}
	ts, err := providers.LoadFS(os.DirFS("providers"))
	if err != nil {
		return nil, err
	}
	v.near = nearest(ts, v.name, v.version)
	v.file = filepath.Join("providers", v.name, v.version+".cue")
	_, err = os.Stat(v.file)
	exists := err == nil
	if !exists && v.near == nil {
		return nil, fmt.Errorf("no table of %s to start from: a new harness needs its first table written by hand (CONTRIBUTING.md)", v.name)
	}

	step(out, "installing %s (.ci/harnesses)", key)
	dir, err := output(nil, "bash", ".ci/harnesses", key)
	if err != nil {
		return nil, err
	}
	v.dir = strings.TrimSpace(dir)
	bin := filepath.Join(v.dir, key, "node_modules", ".bin", v.name)
	versionOutput, err := output(nil, bin, "--version")
	if err != nil {
		return nil, err
	}
	versionOutput = strings.TrimSpace(versionOutput)

	recordings := filepath.Join("providers", "testdata", "recordings", v.name, v.version)
	step(out, "recording native payloads into %s", recordings)
	env := []string{"DALO_HARNESS_DIR=" + v.dir, "DALO_RECORD=" + key}
	if _, err := output(env, "go", "test", "-count=1", "-run", "^TestRecord("+exported(v.name)+")$", "./internal/fakemodel/"); err != nil {
		return nil, fmt.Errorf("recording: %w", err)
	}

	if !exists {
		step(out, "writing the candidate %s from %s", v.file, v.near.File)
		src, err := os.ReadFile(filepath.Join("providers", v.near.File))
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(v.file, candidate(src, v.near, v.version, versionOutput), 0o644); err != nil {
			return nil, err
		}
	}
	step(out, "compiling the tables (go generate ./providers)")
	if _, err := output(nil, "go", "generate", "./providers"); err != nil {
		return nil, fmt.Errorf("the table does not compile; fix %s:\n%w", v.file, err)
	}
	if v.ts, err = providers.LoadFS(os.DirFS("providers")); err != nil {
		return nil, err
	}
	v.table, _ = v.ts.Lookup(v.name, v.version)
	if v.table.VersionOutput.Text != versionOutput {
		fmt.Fprintf(out, "version_output: the table says %q, %s --version prints %q\n", v.table.VersionOutput.Text, key, versionOutput)
	}
	return v, nil
}

// runSuite runs the live suite (the tests matching run, or all) against
// v's harness, its results into results, and keeps its whole output in a
// file it names.
func (v *probed) runSuite(run, results string, out io.Writer) (*suiteLog, error) {
	step(out, "running the live suite against %s", v.key)
	args := []string{"test", "-count=1", "-json", "-timeout=30m", "./internal/live/"}
	if run != "" {
		args = append(args, "-run", run)
	}
	env := []string{"DALO_HARNESS_DIR=" + v.dir, "DALO_LIVE_TABLES=" + v.key, "DALO_LIVE_RESULTS=" + results}
	logs, suiteErr := testLogs(env, args...)
	if logs != nil {
		path := filepath.Join(os.TempDir(), "dalo-probe-"+v.key+".log")
		if err := os.WriteFile(path, []byte(strings.Join(logs.all, "\n")+"\n"), 0o644); err == nil {
			step(out, "the live suite's whole output: %s", path)
		}
	}
	return logs, suiteErr
}

// report prints each claim of v's table, whether it holds and how it
// differs from the nearest table, and counts those that fail and those no
// live test proved.
func (v *probed) report(out io.Writer, proof live.Proof, logs *suiteLog, quiet bool) (fails, unproved int, err error) {
	claims, err := proof.Claims(v.table)
	if err != nil {
		return 0, 0, err
	}
	near := v.near
	var was map[string]string
	if near != nil {
		if was, err = ownValues(near, near.Version, v.version); err != nil {
			return 0, 0, err
		}
	}
	now, err := ownValues(v.table, v.version, v.version)
	if err != nil {
		return 0, 0, err
	}
	against := "no other table"
	if near != nil {
		against = near.Key()
	}
	fmt.Fprintf(out, "\n%s (%s) against %s: %d claims\n", v.key, v.file, against, len(claims))
	var holds, differs int
	for _, c := range claims {
		state := "holds"
		switch {
		case c.Failed():
			state, fails = "FAILS", fails+1
		case !c.Proved():
			state, unproved = "unproved", unproved+1
		default:
			holds++
		}
		change := ""
		if was != nil {
			if old, ok := was[c.Path]; !ok {
				change = " (new)"
			} else if old != now[c.Path] {
				change = " (differs from " + near.Version + ")"
			}
		}
		if change != "" {
			differs++
		}
		if quiet && state == "holds" && change == "" {
			continue
		}
		fmt.Fprintf(out, "  %-8s %s%s\n", state, c.Path, change)
		for i, test := range c.Tests() {
			if o := c.Outcomes[i]; o != "pass" {
				if o == "" {
					o = "did not run"
				}
				fmt.Fprintf(out, "           %s: %s\n", test, o)
				for _, line := range logs.failure(strings.TrimPrefix(test, "internal/live ")) {
					fmt.Fprintf(out, "             %s\n", line)
				}
			}
		}
		if change != "" && was[c.Path] != "" {
			fmt.Fprintf(out, "           was: %s\n           now: %s\n", was[c.Path], now[c.Path])
		}
	}
	if was != nil {
		var gone []string
		for path := range was {
			if _, ok := now[path]; !ok {
				gone = append(gone, path)
			}
		}
		sort.Strings(gone)
		for _, path := range gone {
			fmt.Fprintf(out, "  removed  %s (a claim of %s)\n", path, near.Key())
		}
	}
	fmt.Fprintf(out, "%d hold, %d fail, %d unproved (no live test passed on %s), %d differ from %s\n",
		holds, fails, unproved, v.version, differs, against)
	return fails, unproved, nil
}

// step prints what the probe does next.
func step(out io.Writer, format string, args ...any) {
	fmt.Fprintf(out, "probe: "+format+"\n", args...)
}

// exported is name with its first letter upper case: the harness's part of
// a recording test's name (TestRecordClaude).
func exported(name string) string {
	return strings.ToUpper(name[:1]) + name[1:]
}

// moduleRoot returns the directory of dalo's go.mod.
func moduleRoot() (string, error) {
	gomod, err := output(nil, "go", "env", "GOMOD")
	if err != nil {
		return "", err
	}
	gomod = strings.TrimSpace(gomod)
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside the dalo module: run the probe from a dalo checkout")
	}
	return filepath.Dir(gomod), nil
}

// output runs a command with env added to the probe's own, its stderr
// passed on, and returns its stdout.
func output(env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String(), nil
}

// nearest returns the table of name closest to version
// (providers.Tables.Nearest, where dalo providers verify starts too); nil
// when name has no other table.
func nearest(ts *providers.Tables, name, version string) *providers.Table {
	t, _ := ts.Nearest(name, version)
	return t
}

// candidate returns the source of the table for version written from the
// nearest table's source: every mention of the nearest version is the new
// one, the harness's --version output is versionOutput, and every finding
// cited is a doc: reference to it, seen on the nearest version.
func candidate(src []byte, near *providers.Table, version, versionOutput string) []byte {
	s := strings.ReplaceAll(string(src), strconvQuote(near.VersionOutput.Text), strconvQuote(versionOutput))
	s = strings.ReplaceAll(s, near.Version, version)
	finding := regexp.MustCompile(`"run: (providers/testdata/README\.md finding [0-9]+)"`)
	s = finding.ReplaceAllString(s, `"doc: $1, seen on `+near.Harness+` `+near.Version+`"`)
	header := fmt.Sprintf("// Candidate written by the probe (go run ./internal/live/probe %s@%s) from\n"+
		"// %s: review every claim it reports before committing, then delete\n// this comment.\n",
		near.Name, version, near.File)
	return []byte(header + s)
}

// strconvQuote is s as a CUE (and JSON) string literal.
func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// ownValues returns, for each claim of t by path, its own values (the
// fields that are neither objects nor evidence) as JSON, with version old
// read as version now, so that the candidate's rewritten texts compare
// equal to its nearest table's.
func ownValues(t *providers.Table, old, now string) (map[string]string, error) {
	b, err := json.Marshal(t)
	if err != nil {
		return nil, err
	}
	b = bytes.ReplaceAll(b, []byte(old), []byte(now))
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	claims, err := t.Claims()
	if err != nil {
		return nil, err
	}
	paths := map[string]bool{}
	for _, c := range claims {
		paths[c.Path] = true
	}
	values := map[string]string{}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			own := map[string]any{}
			for k, e := range v {
				sub := k
				if !regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`).MatchString(k) {
					sub = strconv.Quote(k)
				}
				if path != "" {
					sub = path + "." + sub
				}
				switch e.(type) {
				case map[string]any, []any:
					if k != "evidence" {
						walk(sub, e)
					}
					if _, isObj := e.(map[string]any); !isObj && k != "evidence" {
						if !containsObject(e) {
							own[k] = e
						}
					}
				default:
					own[k] = e
				}
			}
			if paths[path] {
				b, _ := json.Marshal(own)
				values[path] = string(b)
			}
		case []any:
			for i, e := range v {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		}
	}
	walk("", v)
	return values, nil
}

// containsObject reports whether a JSON array holds an object.
func containsObject(v any) bool {
	a, _ := v.([]any)
	for _, e := range a {
		if _, ok := e.(map[string]any); ok {
			return true
		}
	}
	return false
}

// reportEvents prints the native events the table's version has that the
// nearest version had not, and whether the table maps or lists each.
func reportEvents(out io.Writer, ts *providers.Tables, t, near *providers.Table, dir string) error {
	nearBin := filepath.Join(dir, near.Key(), "node_modules", ".bin", near.Name)
	if _, err := output(nil, "bash", ".ci/harnesses", near.Key()); err != nil {
		return err
	}
	now, err := scenario.NativeEvents(t.Name, filepath.Join(dir, t.Key(), "node_modules", ".bin", t.Name), os.Getenv("XDG_CACHE_HOME"))
	if err != nil {
		fmt.Fprintf(out, "\nnative events: %v\n", err)
		return nil
	}
	was, err := scenario.NativeEvents(near.Name, nearBin, os.Getenv("XDG_CACHE_HOME"))
	if err != nil {
		fmt.Fprintf(out, "\nnative events of %s: %v\n", near.Key(), err)
		return nil
	}
	var added []string
	for _, e := range now {
		if !slices.Contains(was, e) {
			added = append(added, e)
		}
	}
	fmt.Fprintf(out, "\nnative events %s has and %s had not: %d\n", t.Key(), near.Key(), len(added))
	for _, e := range added {
		state := "UNLISTED: map it to a row (events, rows) or list it under unmapped.events with a reason"
		if _, ok := t.Events[e]; ok {
			state = "mapped"
		} else if _, ok := t.Unmapped.Events[e]; ok {
			state = "listed as unmapped"
		}
		fmt.Fprintf(out, "  %-20s %s\n", e, state)
	}
	return nil
}

// A suiteLog is the output of each test of a go test -json run.
type suiteLog struct {
	out    map[string][]string // test → its output lines
	all    []string            // every output line, in order
	failed []string            // the tests that failed, in order
}

// testLogs runs go test -json with args and collects each test's output.
func testLogs(env []string, args ...string) (*suiteLog, error) {
	cmd := exec.Command("go", args...)
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	l := &suiteLog{out: map[string][]string{}}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var ev struct{ Action, Test, Output string }
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			continue
		}
		switch ev.Action {
		case "output":
			line := strings.TrimRight(ev.Output, "\n")
			l.out[ev.Test] = append(l.out[ev.Test], line)
			l.all = append(l.all, line)
		case "fail":
			if ev.Test != "" {
				l.failed = append(l.failed, ev.Test)
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		return l, fmt.Errorf("%v\n%s", err, stderr.String())
	}
	return l, nil
}

// failure returns the lines of the output of test and its subtests that
// say what failed: the first line of each error reported, at most twelve.
func (l *suiteLog) failure(test string) []string {
	var names []string
	for name := range l.out {
		if name == test || strings.HasPrefix(name, test+"/") {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	var out []string
	for _, name := range names {
		out = append(out, l.out[name]...)
	}
	var lines []string
	for _, line := range out {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- ") || strings.HasPrefix(t, "harness stdout:") {
			continue
		}
		if regexp.MustCompile(`^[a-z_]+_test\.go:[0-9]+: `).MatchString(t) {
			lines = append(lines, t)
		}
		if len(lines) == 12 {
			break
		}
	}
	return lines
}

// failures returns the tests that failed, each with its first error line.
func (l *suiteLog) failures() []string {
	var lines []string
	for _, test := range l.failed {
		line := test
		if f := l.failure(test); len(f) > 0 {
			line += ": " + f[0]
		}
		lines = append(lines, line)
	}
	return lines
}
