package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"text/template"

	"github.com/rogpeppe/go-internal/testscript"

	"dalo/cmd/internal/hookdispatch"
	"dalo/providers"
)

// update rewrites the golden sections of the scripts whose cmp fails
// (testscript's UpdateScripts): go test ./cmd/dalo -run TestScript -update,
// or UPDATE_SCRIPTS=1 in the environment, as after changing a help text.
// Read the diff before committing it.
var update = flag.Bool("update", os.Getenv("UPDATE_SCRIPTS") != "", "update testscript golden sections")

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"dalo": func() {
			os.Exit(run(os.Args[1:], &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr}))
		},
		"dalo-hook": func() {
			os.Exit(hookdispatch.Hook(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
		},
		"fakeharness": func() { os.Exit(fakeHarness()) },
	})
}

// TestScript runs the conformance suite under testdata/script. Besides the
// standard commands, a script can use:
//
//	exits N PROGRAM [ARGS...]   run PROGRAM like exec and require exit status N
//	genfile FILE BYTES [FILL]   grow FILE (created with its directories if
//	                            missing) to exactly BYTES bytes by appending
//	                            FILL repeated, or a sparse hole without FILL
//	gentext OUT TEMPLATE        write OUT (and its directories) from the
//	                            text/template file TEMPLATE, with
//	                            {{repeat S N}} and {{range seq N}}
//	gentree DIR N               create N empty files DIR/f1 ... DIR/fN
//	githttpd NAME ROOT [U:P]    serve the git repositories under ROOT over
//	                            https on loopback (git http-backend), at
//	                            $NAME (see githttpd_test.go)
//
// and the condition [root] (running as root, when permissions do not stop
// reads). $CLAUDE_PLUGINS is testdata/claude-plugins, real Claude Code
// plugins for 'dalo import claude-plugin'; $VALIDATE is testdata/validate,
// the packages of the validation rules' scripts, one directory a case, read
// in place (validate writes nothing into a source). Git commits made in a script have
// fixed authors and dates, so their ids are the same in every run; $DALOBIN
// is a PATH with dalo and without git, $PATH_BEFORE the PATH to restore.
//
// '! exec' only says that a command failed, and the draft gives exit 1
// (invalid) and exit 2 (bad usage) different meanings. The generators make
// the inputs of the limit cases (a 1 MiB manifest, 4096 entries, a 64 MiB
// file) inside the script instead of committing them.
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "../../testdata/script",
		UpdateScripts:       *update,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			// The real Claude Code plugins the import scripts read.
			plugins, err := filepath.Abs("../../testdata/claude-plugins")
			if err != nil {
				return err
			}
			env.Setenv("CLAUDE_PLUGINS", plugins)
			corpus, err := filepath.Abs("../../testdata/validate")
			if err != nil {
				return err
			}
			env.Setenv("VALIDATE", corpus)
			// In a cmpenv golden $$ is a $ dalo printed itself (a table's
			// "$CLAUDE_CONFIG_DIR/settings.json", an argv's "${input.cwd}"):
			// os.Expand reads "$$" as the variable "$".
			env.Setenv("$", "$")
			// The harnesses, as a user has them installed: fakeharness
			// (fakeharness_test.go) on PATH under the name of each harness
			// a provider table describes.
			bin := filepath.Join(env.WorkDir, ".harnesses")
			if err := os.Mkdir(bin, 0o755); err != nil {
				return err
			}
			ts, err := providers.Load()
			if err != nil {
				return err
			}
			names := map[string]bool{}
			for _, t := range ts.All() {
				names[t.Name] = true
			}
			for name := range names {
				script := "#!/bin/sh\nexec fakeharness " + name + " \"$@\"\n"
				if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
					return err
				}
			}
			env.Setenv("PATH", bin+string(os.PathListSeparator)+env.Getenv("PATH"))
			// Git, for the scripts that build repositories: the machine's
			// configuration left out, commits dated so that their ids are
			// the same in every run. $DALOBIN holds dalo alone, for a PATH
			// without git.
			for k, v := range map[string]string{
				"GIT_CONFIG_NOSYSTEM": "1",
				"GIT_AUTHOR_NAME":     "Author", "GIT_AUTHOR_EMAIL": "author@example.com", "GIT_AUTHOR_DATE": "2026-11-02T10:00:00Z",
				"GIT_COMMITTER_NAME": "Author", "GIT_COMMITTER_EMAIL": "author@example.com", "GIT_COMMITTER_DATE": "2026-11-02T10:00:00Z",
			} {
				env.Setenv(k, v)
			}
			self, err := exec.LookPath("dalo")
			if err != nil {
				return err
			}
			env.Setenv("DALOBIN", filepath.Dir(self))
			env.Setenv("PATH_BEFORE", env.Getenv("PATH"))
			// Validation's cache, in the script's own directory; and the
			// store of a script that sets no DALO_HOME: testscript's HOME,
			// /no-home, is on the real filesystem, where a suite run as
			// root would make it.
			env.Setenv("XDG_CACHE_HOME", filepath.Join(env.WorkDir, ".cache"))
			env.Setenv("XDG_DATA_HOME", filepath.Join(env.WorkDir, ".local", "share"))
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":       cmdExits,
			"hookfixture": cmdHookfixture,
			"genfile":     cmdGenfile,
			"gentext":     cmdGentext,
			"gentree":     cmdGentree,
			"githttpd":    cmdGithttpd,
		},
		Condition: func(cond string) (bool, error) {
			if cond == "root" {
				return os.Geteuid() == 0, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
	})
}

func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits N PROGRAM [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: %v", err)
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exits: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}

func cmdGenfile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: genfile FILE BYTES [FILL]")
	}
	size, err := strconv.ParseInt(args[1], 10, 64)
	if err != nil {
		ts.Fatalf("genfile: %v", err)
	}
	name := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(filepath.Dir(name), 0o777))
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o666)
	ts.Check(err)
	defer f.Close()
	fi, err := f.Stat()
	ts.Check(err)
	if fi.Size() > size {
		ts.Fatalf("genfile: %s already has %d bytes", args[0], fi.Size())
	}
	if len(args) == 2 {
		ts.Check(f.Truncate(size))
		return
	}
	fill := bytes.Repeat([]byte(args[2]), int(size-fi.Size())/len(args[2])+1)
	_, err = f.WriteAt(fill[:size-fi.Size()], fi.Size())
	ts.Check(err)
}

func cmdGentext(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: gentext OUT TEMPLATE")
	}
	t, err := template.New(args[1]).Funcs(template.FuncMap{
		"repeat": strings.Repeat,
		"seq": func(n int) []int {
			s := make([]int, n)
			for i := range s {
				s[i] = i + 1
			}
			return s
		},
	}).Parse(ts.ReadFile(args[1]))
	ts.Check(err)
	var b bytes.Buffer
	ts.Check(t.Execute(&b, nil))
	out := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(filepath.Dir(out), 0o777))
	ts.Check(os.WriteFile(out, b.Bytes(), 0o666))
}

func cmdGentree(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: gentree DIR N")
	}
	n, err := strconv.Atoi(args[1])
	if err != nil {
		ts.Fatalf("gentree: %v", err)
	}
	dir := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(dir, 0o777))
	for i := 1; i <= n; i++ {
		ts.Check(os.WriteFile(fmt.Sprintf("%s/f%d", dir, i), nil, 0o666))
	}
}
