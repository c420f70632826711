package dispatch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"dalo/plan"
)

// A Note is a text a hook (its Source: "package/hook", or "dalo" for the
// dispatcher itself) contributes to the model-facing side of an outcome.
type Note struct {
	Source string
	Text   string
	// Failure marks a model_and_user failure diagnostic: the user already
	// has it, so an event that cannot reach the model may drop it.
	Failure bool
	// UserText is the note as the user reads it, when it differs from
	// Text: a failure's detailed diagnostic (naming the hook, with the
	// handler's stderr). A channel that reaches the user alone (a deny
	// channel with UserOnly) carries it instead of Text.
	UserText string
}

// An Outcome is the composition of every hook run on one native event, in
// stable hook-identity order. It is portable: [Render] writes it natively.
type Outcome struct {
	Context []Note // model-visible context: add_context results and model_and_user diagnostics
	Deny    []Note // non-empty: the pre-action gate denies (prompt or tool call); the reasons
	// Continue non-empty: another workflow pass is requested, with these reasons.
	Continue      []Note
	UpdatedInput  json.RawMessage // the one agreed rewrite of the tool input, compact JSON
	UpdatedOutput json.RawMessage // the one agreed replacement of the tool output
	User          []string        // diagnostics for the user channel only, never for the model
}

// Empty reports whether o asks the harness for nothing at all.
func (o *Outcome) Empty() bool {
	return len(o.Context) == 0 && len(o.Deny) == 0 && len(o.Continue) == 0 &&
		o.UpdatedInput == nil && o.UpdatedOutput == nil && len(o.User) == 0
}

// joinNotes renders notes as model-facing text, each named by its source.
func joinNotes(notes []Note) string {
	var b strings.Builder
	for i, n := range notes {
		if i > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "[%s] %s", n.Source, n.Text)
	}
	return b.String()
}

// joinUserNotes renders notes for a channel only the user reads: each
// note's UserText where it has one, else the note as joinNotes has it.
func joinUserNotes(notes []Note) string {
	var b strings.Builder
	for i, n := range notes {
		if i > 0 {
			b.WriteString("\n\n")
		}
		if n.UserText != "" {
			b.WriteString(n.UserText)
			continue
		}
		fmt.Fprintf(&b, "[%s] %s", n.Source, n.Text)
	}
	return bound(b.String(), maxUserText)
}

// results returns the notes that are not failure diagnostics.
func results(notes []Note) []Note {
	var r []Note
	for _, n := range notes {
		if !n.Failure {
			r = append(r, n)
		}
	}
	return r
}

// joinUser renders the user messages as one bounded text.
func joinUser(msgs []string) string {
	return bound(strings.Join(msgs, "\n"), maxUserText)
}

// Bounds of what the user channel carries.
const (
	maxUserText   = 16 << 10
	maxUserStderr = 2 << 10
)

// A run is what happened to one hook: a result, or a failure.
type run struct {
	hook    *plan.PlannedHook
	result  *Result
	failure string // non-empty: the hook failed; a diagnostic without handler stderr
	stderr  string // the handler's stderr (bounded), shown to the user with a failure only
	// unmatched says the hook's matcher does not name the call's tool;
	// skipped, that its grant confirmed that matcher: it has no part in
	// the outcome.
	unmatched, skipped bool
	// noPass, when set, says why a failing fail_closed hook of this event
	// may not ask for another workflow pass (see failurePasses).
	noPass string
}

func source(h *plan.PlannedHook) string { return h.Package + "/" + h.Hook }

// compose applies each failed hook's policy and composes the results in the
// order of runs (stable hook-identity order). The rules:
//
//   - report and fail_open leave the action unchanged; the diagnostic goes
//     to the user, and with model_and_user also to the model as context,
//     cut to the plan's result_text_bytes.
//   - fail_closed does what the rules (plan.FailClosed) say for the
//     hook's effect: deny the action (gate, rewrite_input) or ask for
//     another workflow pass (continue_workflow), with the diagnostic
//     as the model-facing reason under model_and_user, and a generic reason
//     naming the hook under user; where the deny reason reaches the user
//     alone (the table's user_only), it is the user's diagnostic instead
//     (see Render). The passes asked for in a row are bounded
//     (plan.FailClosedPasses, see failurePasses): past the bound, or when
//     they cannot be counted, a failure asks for no other pass, and the
//     user is told why.
//   - Contexts are kept, each named by its hook, up to maxContext of the
//     plan's limits joined; notes past it are dropped whole from the end,
//     and the user is told which (see capContext).
//   - Any deny denies the action. Allows beside it lose, and the user is
//     told which hooks allowed and which denied; rewrites beside it are not
//     applied, and the user is told.
//   - Rewrites that agree (equal JSON) apply once. Different rewrites deny
//     the call: running the original input could be exactly what one of the
//     rewriting hooks exists to prevent, and picking one rewrite would
//     silently overrule the other. Model and user see the conflict.
//   - Replacements that agree apply once. Different replacements leave the
//     real output unchanged (a post-action hook cannot undo the action) and
//     the user sees the conflict.
//   - Continue requests all apply, reasons joined; allow, observe and abstain
//     ask for nothing.
func compose(runs []run, lim plan.Limits) *Outcome {
	o := &Outcome{}
	var allows, denies []string
	var rewrites, replaces []Note // Text holds the JSON
	for _, r := range runs {
		if r.skipped {
			continue
		}
		h, src := r.hook, source(r.hook)
		if r.failure != "" {
			if applyFailure(o, h, r, lim) == plan.FailDeny {
				denies = append(denies, src)
			}
			continue
		}
		switch r.result.Kind {
		case plan.KindAddContext:
			o.Context = append(o.Context, Note{Source: src, Text: r.result.Text})
		case plan.KindDeny:
			o.Deny = append(o.Deny, Note{Source: src, Text: r.result.Text})
			denies = append(denies, src)
		case plan.KindAllow:
			allows = append(allows, src)
		case plan.KindRewriteInput:
			rewrites = append(rewrites, Note{Source: src, Text: string(r.result.JSON)})
		case plan.KindReplaceOutput:
			replaces = append(replaces, Note{Source: src, Text: string(r.result.JSON)})
		case plan.KindContinueWorkflow:
			o.Continue = append(o.Continue, Note{Source: src, Text: r.result.Text})
		}
	}
	if len(o.Deny) > 0 {
		if len(allows) > 0 {
			o.User = append(o.User, fmt.Sprintf("dalo: conflicting hook results: %s allowed, %s denied; the action is denied (deny wins over allow)",
				strings.Join(allows, ", "), strings.Join(denies, ", ")))
		}
		if len(rewrites) > 0 {
			o.User = append(o.User, fmt.Sprintf("dalo: the input rewrite of %s was not applied: the action is denied by %s",
				strings.Join(sources(rewrites), ", "), strings.Join(denies, ", ")))
		}
		capContext(o, lim)
		return o
	}
	if len(rewrites) > 0 {
		if agree(rewrites) {
			o.UpdatedInput = json.RawMessage(rewrites[0].Text)
		} else {
			names := strings.Join(sources(rewrites), ", ")
			o.Deny = append(o.Deny, Note{Source: "dalo", Text: "Hooks " + names + " rewrote this tool input differently; the call was blocked rather than run with either rewrite or the original."})
			o.User = append(o.User, "dalo: conflicting input rewrites by "+names+"; the tool call is denied")
		}
	}
	if len(replaces) > 0 {
		if agree(replaces) {
			o.UpdatedOutput = json.RawMessage(replaces[0].Text)
		} else {
			o.User = append(o.User, "dalo: conflicting output replacements by "+strings.Join(sources(replaces), ", ")+"; the tool output is left unchanged")
		}
	}
	capContext(o, lim)
	return o
}

// contextNotes is how many full-size notes the joined model context holds.
// The draft bounds each text a handler returns (16 KiB, the plan's
// result_text_bytes) and wants diagnostics bounded, but a sum over however
// many hooks match one event is not bounded. Four notes' worth (64 KiB
// with the reference limits; the hooks' names and the separators count)
// keeps every context of an ordinary composition while one event can no
// longer flood the model.
const contextNotes = 4

// maxContext is the most bytes of joined model context (joinNotes of
// Outcome.Context, names and separators included) one event carries.
func maxContext(lim plan.Limits) int { return contextNotes * lim.ResultTextBytes }

// capContext keeps the notes of o.Context, in hook-identity order, while
// their join fits maxContext, and drops the rest whole (a cut note would
// read as the hook's complete context). The user is told which hooks'
// context the model did not get, never silently.
func capContext(o *Outcome, lim plan.Limits) {
	max, size := maxContext(lim), 0
	for i, n := range o.Context {
		if i > 0 {
			size += len("\n\n")
		}
		size += len("[") + len(n.Source) + len("] ") + len(n.Text)
		if size > max {
			dropped := sources(o.Context[i:])
			o.Context = o.Context[:i]
			o.User = append(o.User, fmt.Sprintf("dalo: the hooks' context exceeds %d bytes; the model did not get the context of %s",
				max, strings.Join(dropped, ", ")))
			return
		}
	}
}

// applyFailure applies the failure policy of h and returns what a
// fail_closed failure did (plan.FailDeny, plan.FailContinue), or "". What a
// fail_closed hook does comes from its effect (plan.FailClosed, compiled
// from #FailClosed). The diagnostic is cut to lim.ResultTextBytes, the
// bound of any text a handler can put before the model: under
// model_and_user it is model context.
func applyFailure(o *Outcome, h *plan.PlannedHook, r run, lim plan.Limits) string {
	src := source(h)
	failure := bound(r.failure, lim.ResultTextBytes)
	user := fmt.Sprintf("dalo: hook %s failed (%s): %s", src, h.FailurePolicy, failure)
	if s := cleanStderr(r.stderr); s != "" {
		user += "\n  stderr: " + strings.ReplaceAll(s, "\n", "\n  ")
	}
	o.User = append(o.User, user)
	model := "This hook failed; the details were shown to the user."
	if h.ErrorVisibility == plan.VisibilityModelAndUser {
		model = "This hook failed: " + failure + "."
	}
	if h.FailurePolicy == plan.PolicyFailClosed {
		switch plan.FailClosed[h.Effect] {
		case plan.FailDeny:
			o.Deny = append(o.Deny, Note{Source: src, Text: model + " The action was blocked (fail_closed).", UserText: user})
			return plan.FailDeny
		case plan.FailContinue:
			if r.noPass != "" {
				o.User = append(o.User, "dalo: hook "+src+" is fail_closed, but "+r.noPass+"; not asking for another pass")
				return ""
			}
			o.Continue = append(o.Continue, Note{Source: src, Text: model + " Another pass was requested (fail_closed)."})
			return plan.FailContinue
		}
	}
	if h.ErrorVisibility == plan.VisibilityModelAndUser {
		o.Context = append(o.Context, Note{Source: src, Text: model, Failure: true})
	}
	return ""
}

func sources(ns []Note) []string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = n.Source
	}
	return s
}

// agree reports whether every JSON value of ns is the same, whatever the
// order of object keys.
func agree(ns []Note) bool {
	first := canonical(ns[0].Text)
	for _, n := range ns[1:] {
		if !bytes.Equal(canonical(n.Text), first) {
			return false
		}
	}
	return true
}

func canonical(s string) []byte {
	var v any
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return []byte(s)
	}
	b, _ := json.Marshal(v) // sorts object keys
	return b
}

func cleanStderr(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\x00", "")
	return bound(strings.TrimSpace(s), maxUserStderr)
}

// bound cuts s to at most max bytes, on a rune boundary, marking the cut.
func bound(s string, max int) string {
	if len(s) <= max {
		return s
	}
	const mark = " …(truncated)"
	cut := max - len(mark)
	for cut > 0 && cut < len(s) && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + mark
}
