package engine

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"testing"

	"cuelang.org/go/cue"

	"dalo/plan"
)

// TestAskAgrees holds ask, which unifies a rule with a whole question, to
// filling the question's fields one at a time, the way it asked before:
// both are unification, and this checks that CUE gives the same
// violations either way, for valid questions and for ones that break
// each rule (unknown subjects, rows no table has, fields of the wrong type).
func TestAskAgrees(t *testing.T) {
	r, err := LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	type question struct {
		def cue.Value
		q   map[string]any
	}
	var qs []question
	subjects := []string{plan.SubjectSession, plan.SubjectPrompt, plan.SubjectToolCall, plan.SubjectWorkflow, "tool-call"}
	phases := []string{plan.PhaseStart, plan.PhaseEnd, plan.PhaseBefore, plan.PhaseAfter, plan.PhaseFailure, plan.PhaseStop, "during"}
	effects := []string{plan.EffectObserve, plan.EffectAddContext, plan.EffectGate, plan.EffectRewriteInput, plan.EffectReplaceOutput, plan.EffectContinueWorkflow, "add_contxt"}
	policies := []string{plan.PolicyReport, plan.PolicyFailOpen, plan.PolicyFailClosed}
	requirements := []string{plan.RequirementRequired, plan.RequirementOptional, plan.RequirementRecommended}
	n := 0
	for _, s := range subjects {
		for _, p := range phases {
			// Every row once, each with another effect, policy and
			// requirement, so that the questions stay few.
			n++
			qs = append(qs, question{r.hookDef, map[string]any{
				"subject": s, "phase": p, "effect": effects[n%len(effects)],
				"failure_policy": policies[n%len(policies)], "requirement": requirements[n%len(requirements)],
				"has_fallback": n%2 == 0, "has_matcher": n%3 == 0,
			}})
		}
	}
	fields := []string{"session.cwd", "session.id", "prompt.text", "tool.name", "tool.call_id", "workflow.last_message", "workflow.already_continued", "tool.nme"}
	types := []string{"string", "path", "boolean", "integer"}
	for i, f := range fields {
		for j, s := range subjects[:4] {
			qs = append(qs, question{r.bindDef, map[string]any{
				"subject": s, "phase": phases[(i+j)%len(phases)], "field": f, "input_type": types[(i+j)%len(types)],
			}})
		}
	}
	for _, kind := range []string{"skill", "agent", "instruction", "plugin", "tool"} {
		for i, rq := range requirements {
			qs = append(qs, question{r.refDef, map[string]any{
				"position": "members", "kind": kind, "requirement": rq,
				"has_fallback": i == 0, "fallback_kind": []string{"skill", "", "agent"}[i],
			}}, question{r.refDef, map[string]any{
				"position": "requires", "kind": kind, "requirement": rq, "has_fallback": false,
			}})
		}
	}
	refused := 0
	for i, x := range qs {
		r.memo = &ruleMemo{m: map[string][]violation{}, verdicts: map[string]bool{}}
		got := r.ask(x.def, []byte(fmt.Sprint(i)), func() map[string]any { return x.q })
		v := x.def
		for k, val := range x.q {
			v = v.FillPath(cue.MakePath(cue.Str(k)), val)
		}
		var want []violation
		if err := v.LookupPath(cue.ParsePath("violations")).Decode(&want); err != nil {
			// A question no manifest can ask (a value the shape
			// refuses): both ways fail, and ask says so.
			if len(got) != 1 || got[0].Code != "E099" {
				t.Errorf("%v: filled fails (%v), ask says %v", x.q, err, got)
			}
			refused++
			continue
		}
		suggestNear(want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%v:\nask     %v\nfilled  %v", x.q, got, want)
		}
	}
	t.Logf("%d questions, %d refused", len(qs), refused)
	if refused == len(qs) {
		t.Fatal("every question was refused: nothing compared")
	}
}

// TestAskBuildsRememberedQuestionOnce: a question answered before is
// found by its key alone, without building it again (building each hook's
// and reference's question was a tenth of what checking a package
// allocated), and its key is written as fmt wrote it, the key the cache
// keeps its answer under.
func TestAskBuildsRememberedQuestionOnce(t *testing.T) {
	r, err := LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	r.memo = &ruleMemo{m: map[string][]violation{}, verdicts: map[string]bool{}}
	key := questionKey(nil, "hook", plan.SubjectPrompt, plan.PhaseBefore, plan.EffectAddContext, plan.PolicyReport, plan.RequirementRequired, strconv.FormatBool(false), strconv.FormatBool(true))
	if want := fmt.Sprintf("hook|%s|%s|%s|%s|%s|%t|%t", plan.SubjectPrompt, plan.PhaseBefore, plan.EffectAddContext, plan.PolicyReport, plan.RequirementRequired, false, true); string(key) != want {
		t.Fatalf("key %q, want %q", key, want)
	}
	built := 0
	question := func() map[string]any {
		built++
		return map[string]any{
			"subject": plan.SubjectPrompt, "phase": plan.PhaseBefore, "effect": plan.EffectAddContext,
			"failure_policy": plan.PolicyReport, "requirement": plan.RequirementRequired,
			"has_fallback": false, "has_matcher": true,
		}
	}
	// The key is learned from a buffer then written over, as a caller's
	// stack is: the answer stays under the key's bytes as they were.
	var kb keyBuf
	first := r.ask(r.hookDef, questionKey(kb[:0], string(key)), question)
	clear(kb[:])
	for range 3 {
		if again := r.ask(r.hookDef, key, question); !slices.Equal(again, first) {
			t.Fatalf("answer %v, then %v", first, again)
		}
	}
	if built != 1 {
		t.Errorf("question built %d times, want once", built)
	}
	parts := []string{"hook", plan.SubjectPrompt, plan.PhaseBefore, plan.EffectAddContext, plan.PolicyReport, plan.RequirementRequired, "false", "true"}
	if n := testing.AllocsPerRun(100, func() {
		var kb keyBuf
		r.ask(r.hookDef, questionKey(kb[:0], parts...), question)
	}); n != 0 {
		t.Errorf("asking a remembered question, key and all, allocates %v times, want 0", n)
	}
}

// TestFreeValuesAskedOnce: a reference kind or an event field no table
// knows is asked of CUE as one placeholder, however many there are, and
// the answer says each as CUE says it asked about the value itself (a
// "did you mean" included).
func TestFreeValuesAskedOnce(t *testing.T) {
	r, err := LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	direct := func(def cue.Value, q map[string]any) []violation {
		var vs []violation
		if err := def.FillPath(cue.Path{}, q).LookupPath(cue.ParsePath("violations")).Decode(&vs); err != nil {
			t.Fatal(err)
		}
		suggestNear(vs)
		return vs
	}
	before := questionsAsked.Load()
	for i := range 40 {
		for _, field := range []string{fmt.Sprintf("session.cdw%d", i), "session.cdw", "tool.nme", "x" + strconv.Itoa(i), "session.cwd"} {
			asked := free(field, r.eventFields, 0)
			q := func(f string) map[string]any {
				return map[string]any{"subject": plan.SubjectToolCall, "phase": "before", "field": f, "input_type": "path"}
			}
			got := said(r.ask(r.bindDef, questionKey(nil, "bind", plan.SubjectToolCall, "before", asked, "path"), func() map[string]any { return q(asked) }), asked, field)
			if want := direct(r.bindDef, q(field)); !reflect.DeepEqual(got, want) {
				t.Fatalf("binding of %s: %+v, want %+v", field, got, want)
			}
		}
		for _, kind := range []string{fmt.Sprintf("tol%d", i), "skil", "agent", "plugin"} {
			for _, fbKind := range []string{"", "skill", fmt.Sprintf("skil%d", i)} {
				k, fb := free(kind, r.refKinds, 0), free(fbKind, r.refKinds, 1)
				q := func(k, fb string) map[string]any {
					return map[string]any{"position": "members", "kind": k, "requirement": "required", "has_fallback": fbKind != "", "fallback_kind": fb}
				}
				got := said(r.ask(r.refDef, questionKey(nil, "ref", "members", k, "required", strconv.FormatBool(fbKind != ""), fb), func() map[string]any { return q(k, fb) }), k, kind, fb, fbKind)
				if want := direct(r.refDef, q(kind, fbKind)); !reflect.DeepEqual(got, want) {
					t.Fatalf("member %s with fallback %q: %+v, want %+v", kind, fbKind, got, want)
				}
			}
		}
	}
	// Each known field and kind once, each mistake's placeholder once:
	// not 40 of each.
	if n := questionsAsked.Load() - before; n > 20 {
		t.Errorf("%d questions asked of CUE, want one for each known value and one for all the mistakes", n)
	}
}
