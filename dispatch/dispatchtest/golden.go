package dispatchtest

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"dalo/dispatch"
	"dalo/plan"
	"dalo/providers"
)

// A Row is one recorded native event of a harness and the effects to
// dispatch on it: the hook row it serves is the provider table's.
type Row struct {
	Payload string   // recording file name without .json: PreToolUse, Stop.continued
	Event   string   // the native event
	Effects []string // effects the table supports on the event's row
}

// results are the handler outputs the golden tests use, by kind.
var results = map[string]string{
	plan.KindObserve:          `{"kind":"observe"}`,
	plan.KindAbstain:          `{"kind":"abstain"}`,
	plan.KindAddContext:       `{"kind":"add_context","context":"Review contrast."}`,
	plan.KindAllow:            `{"kind":"allow"}`,
	plan.KindDeny:             `{"kind":"deny","reason":"Policy failed."}`,
	plan.KindRewriteInput:     `{"kind":"rewrite_input","input":{"command":"echo reviewed"}}`,
	plan.KindReplaceOutput:    `{"kind":"replace_output","output":{"stdout":"reviewed","stderr":"","interrupted":false,"isImage":false}}`,
	plan.KindContinueWorkflow: `{"kind":"continue_workflow","reason":"Run the remaining checks."}`,
}

// Golden dispatches, through the plan of the newest provider table of
// provider (see Install), for every row, one real handler per result kind of
// every effect (plan.ResultKinds), and one failing handler of the row's
// last effect per failure policy it admits (plan.FailurePolicies) and error
// visibility the table delivers failures to, with the recorded payload on
// stdin, and compares the native answer with
// goldenDir/<Payload>.<case>.txtar. With update it rewrites the files.
// check, if not nil, is called on every answer.
func Golden(t *testing.T, provider, recordings, goldenDir string, rows []Row, update bool, check func(t *testing.T, event string, out dispatch.Native)) {
	ts, err := providers.Load()
	if err != nil {
		t.Fatal(err)
	}
	tb, ok := ts.Newest(provider)
	if !ok {
		t.Fatalf("no provider table %s", provider)
	}
	for _, row := range rows {
		subject, phase, ok := tb.RowOf(row.Event)
		if !ok {
			t.Fatalf("%s: no hook row is served by %s", tb.Key(), row.Event)
		}
		tr, _ := tb.Row(subject, phase)
		for _, eff := range row.Effects {
			if e, ok := tr.Effects[eff]; !ok || e.Status != providers.Supported {
				t.Fatalf("%s: %s/%s (%s) does not support effect %s", tb.Key(), subject, phase, row.Event, eff)
			}
		}
		payload, err := os.ReadFile(filepath.Join(recordings, row.Payload+".json"))
		if err != nil {
			t.Fatal(err)
		}
		type tc struct {
			name string
			hook Hook
		}
		var cases []tc
		seen := map[string]bool{}
		for _, eff := range row.Effects {
			for _, kind := range plan.ResultKinds[eff] {
				if seen[kind] {
					continue
				}
				seen[kind] = true
				cases = append(cases, tc{kind, Hook{ID: "h", Effect: eff, Script: "#!/bin/sh\nprintf '%s' '" + results[kind] + "'\n"}})
			}
		}
		eff := row.Effects[len(row.Effects)-1]
		for _, pol := range plan.FailurePolicies[eff] {
			for _, vis := range slices.Sorted(maps.Keys(tr.Failures[pol])) {
				cases = append(cases, tc{"failure." + pol + "." + vis, Hook{ID: "h", Effect: eff, Policy: pol, Visibility: vis,
					Script: "#!/bin/sh\necho handler-stderr >&2\nexit 3\n"}})
			}
		}
		for _, c := range cases {
			name := row.Payload + "." + c.name
			t.Run(name, func(t *testing.T) {
				home := t.TempDir()
				h := c.hook
				h.Package, h.Subject, h.Phase = "example:design-review", subject, phase
				if _, err := Install(home, provider, map[string][]Hook{row.Event: {h}}); err != nil {
					t.Fatal(err)
				}
				out, err := dispatch.Dispatch(dispatch.Request{Home: home, Provider: provider, Event: row.Event, Payload: payload, Getenv: os.LookupEnv})
				if err != nil {
					t.Fatal(err)
				}
				if check != nil {
					check(t, row.Event, out)
				}
				got := txtar.Format(&txtar.Archive{
					Comment: []byte(fmt.Sprintf("%s %s: %s, %s\nexit %d\n", provider, row.Payload, strings.ReplaceAll(c.name, ".", " "), h.Effect, out.Exit)),
					Files:   []txtar.File{{Name: "stdout", Data: out.Stdout}, {Name: "stderr", Data: out.Stderr}},
				})
				file := filepath.Join(goldenDir, name+".txtar")
				if update {
					if err := os.MkdirAll(goldenDir, 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(file, got, 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(file)
				if err != nil {
					t.Fatalf("%v (run with -update to create it)", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("native answer differs from %s:\n%s\nwant:\n%s", file, got, want)
				}
			})
		}
	}
}
