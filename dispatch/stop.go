package dispatch

import (
	"fmt"

	"dalo/plan"
)

// failurePasses settles whether the failing fail_closed hooks of runs that
// ask for another workflow pass (#FailClosed: continue) may ask for one
// more, and keeps the count of such passes in a row in the store
// (plan.StopPasses). When they may not, each such run's noPass says why,
// for the user; when no hook of runs can ask for such a pass, it does
// nothing.
//
// The draft has fail_closed request another workflow pass and leaves
// repeated continuation to handlers, through workflow.already_continued;
// but a handler that fails decides nothing, and a harness need not end the
// loop (Codex 0.147.0 never does). So dalo asks for at most
// plan.FailClosedPasses passes in a row in one stop: the passes count from
// the last Stop that was not already continued (the harness's
// stop_hook_active false: a new turn), a Stop whose fail_closed hooks all
// ran resets the count, and a pass is asked for only once its count is on
// disk (a pass that could not be counted could be the first of an endless
// loop). Without a session id the passes cannot be counted: the first
// Stop of a turn, known from workflow.already_continued, may still ask
// for one, and no later Stop.
func failurePasses(home, provider string, fields Fields, runs []run) {
	why := passRefused(home, provider, fields, runs)
	if why == "" {
		return
	}
	for i := range runs {
		runs[i].noPass = why
	}
}

// passRefused is failurePasses' decision: "" when the failing hooks may
// ask for another pass (or none can), else why not.
func passRefused(home, provider string, fields Fields, runs []run) string {
	counted, want := false, false
	for _, r := range runs {
		if r.hook.FailurePolicy != plan.PolicyFailClosed || plan.FailClosed[r.hook.Effect] != plan.FailContinue {
			continue
		}
		counted = true
		if r.failure != "" {
			want = true
		}
	}
	if !counted {
		return ""
	}
	again, known := fields["workflow.already_continued"].(bool)
	session, ok := fields.String("session.id")
	if !ok || session == "" {
		switch {
		case !want || (known && !again):
			return ""
		case !known:
			return "the payload names no session and does not say whether this stop was already continued, so dalo cannot count the passes failing hooks ask for"
		}
		return "the payload names no session, so dalo cannot count the passes failing hooks ask for, and this stop was already continued"
	}
	if !known {
		again = true // unknown: count on from what is recorded
	}
	prev := 0
	if again {
		n, err := plan.StopPasses(home, provider, session)
		if err != nil {
			return err.Error()
		}
		prev = n
	}
	switch {
	case !want:
		if !again || prev > 0 {
			// A new turn, or a stop whose hooks ran: the passes in a
			// row start again. A count left behind would only shorten
			// a later loop, so an error here is not worth a word.
			plan.SetStopPasses(home, provider, session, 0)
		}
		return ""
	case prev >= plan.FailClosedPasses:
		return fmt.Sprintf("failing fail_closed hooks already asked for %d workflow passes in a row, the most dalo asks for", prev)
	}
	if err := plan.SetStopPasses(home, provider, session, prev+1); err != nil {
		return err.Error() + "; a pass dalo cannot count could loop the agent forever"
	}
	return ""
}
