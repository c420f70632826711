package dispatchtest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"dalo/dispatch"
	"dalo/store"
)

// A Row is one native event of a harness with the hook row it serves and
// the effects the harness supports there.
type Row struct {
	Payload string // recording file name without .json: PreToolUse, Stop.continued
	Event   string
	Subject string
	Phase   string
	Effects []string
}

// results are the handler outputs the golden tests use, by kind.
var results = map[string]string{
	"observe":           `{"kind":"observe"}`,
	"abstain":           `{"kind":"abstain"}`,
	"add_context":       `{"kind":"add_context","context":"Review contrast."}`,
	"allow":             `{"kind":"allow"}`,
	"deny":              `{"kind":"deny","reason":"Policy failed."}`,
	"rewrite_input":     `{"kind":"rewrite_input","input":{"command":"echo reviewed"}}`,
	"replace_output":    `{"kind":"replace_output","output":{"stdout":"reviewed","stderr":"","interrupted":false,"isImage":false}}`,
	"continue_workflow": `{"kind":"continue_workflow","reason":"Run the remaining checks."}`,
}

// Golden dispatches, through the plan of the newest provider table of
// provider (see Install), for every row, one real handler per result kind of
// every supported effect, and one failing handler per admitted policy and
// visibility, with the recorded payload on stdin, and compares the native
// answer with goldenDir/<Payload>.<case>.txtar. With update it rewrites
// the files. check, if not nil, is called on every answer.
func Golden(t *testing.T, provider, recordings, goldenDir string, rows []Row, update bool, check func(t *testing.T, event string, out dispatch.Native)) {
	resultKinds, err := store.ResultKinds()
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rows {
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
			for _, kind := range resultKinds[eff] {
				if seen[kind] {
					continue
				}
				seen[kind] = true
				cases = append(cases, tc{kind, Hook{ID: "h", Effect: eff, Script: "#!/bin/sh\nprintf '%s' '" + results[kind] + "'\n"}})
			}
		}
		policies := []string{"report"}
		gate := row.Phase == "before" && (row.Subject == "prompt" || row.Subject == "tool_call") || row.Subject == "workflow"
		if gate {
			policies = append(policies, "fail_closed")
		}
		eff := row.Effects[len(row.Effects)-1]
		for _, pol := range policies {
			for _, vis := range []string{"user", "model_and_user"} {
				cases = append(cases, tc{"failure." + pol + "." + vis, Hook{ID: "h", Effect: eff, Policy: pol, Visibility: vis,
					Script: "#!/bin/sh\necho handler-stderr >&2\nexit 3\n"}})
			}
		}
		for _, c := range cases {
			name := row.Payload + "." + c.name
			t.Run(name, func(t *testing.T) {
				home := t.TempDir()
				h := c.hook
				h.Package, h.Subject, h.Phase = "example:design-review", row.Subject, row.Phase
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
