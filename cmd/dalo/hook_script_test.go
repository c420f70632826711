package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/rogpeppe/go-internal/testscript"

	"dalo/dispatch/dispatchtest"
	"dalo/plan"
	"dalo/providers"
	"dalo/store"
)

// cmdHookfixture prepares the inputs of the dispatch_*.txtar scripts:
//
//	hookfixture plan SRC                    install SRC, a dispatch plan whose tool
//	                                        roots are relative to $WORK, whose
//	                                        empty file digests are to be computed
//	                                        and whose native protocols come from
//	                                        the provider table of its version (its
//	                                        limits, rules and interpreters from
//	                                        the rules), as the
//	                                        dispatch index under $DALO_HOME/plans
//	hookfixture payload PROVIDER FILE OUT   copy a recorded native payload
//	                                        (providers/testdata/recordings) to OUT
func cmdHookfixture(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: hookfixture plan SRC | hookfixture payload PROVIDER FILE OUT")
	}
	switch {
	case args[0] == "plan" && len(args) == 2:
		var p plan.Plan
		ts.Check(json.Unmarshal([]byte(ts.ReadFile(args[1])), &p))
		for _, hooks := range p.Events {
			for i := range hooks {
				t := &hooks[i].Tool
				t.Root = filepath.Join(ts.Getenv("WORK"), t.Root)
				for rel, sum := range t.Files {
					if sum == "" {
						data, err := os.ReadFile(filepath.Join(t.Root, rel))
						ts.Check(err)
						h := sha256.Sum256(data)
						t.Files[rel] = hex.EncodeToString(h[:])
					}
				}
			}
		}
		tables, err := providers.Load()
		ts.Check(err)
		tb, ok := tables.Lookup(p.Provider, p.Version)
		if !ok {
			ts.Fatalf("no provider table %s@%s", p.Provider, p.Version)
		}
		p.Natives = map[string]plan.Native{}
		for ev := range p.Events {
			n, err := store.NativeOf(tb, ev)
			ts.Check(err)
			p.Natives[ev] = n
		}
		// Staged, and approved by grants that bind exactly what it asks (its
		// tool roots and grant references are replaced).
		ts.Check(dispatchtest.Seal(ts.Getenv("DALO_HOME"), &p))
		dir := filepath.Join(ts.Getenv("DALO_HOME"), "plans")
		ts.Check(os.MkdirAll(dir, 0o755))
		ts.Check(plan.WriteIndex(dir, &p, nil))
	case args[0] == "payload" && len(args) == 4:
		versions := map[string]string{"claude": "2.1.233", "codex": "0.147.0"}
		data, err := os.ReadFile(filepath.Join("..", "..", "providers", "testdata", "recordings", args[1], versions[args[1]], args[2]+".json"))
		ts.Check(err)
		ts.Check(os.WriteFile(ts.MkAbs(args[3]), data, 0o644))
	default:
		ts.Fatalf("usage: hookfixture plan SRC | hookfixture payload PROVIDER FILE OUT")
	}
}
