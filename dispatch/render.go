package dispatch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"dalo/plan"
)

// Render turns an outcome into the native answer of one event, as the
// event's native protocol n (copied from the provider table into the plan)
// says. Each part of the outcome, in the order context, deny, continue,
// rewrite_input, replace_output, is rendered through the event's channel of
// that name; a part the event has no channel for is reported to the user
// with the event's undelivered message instead (context that only repeats
// a failure diagnostic is dropped: the user already has it). A deny
// channel the table marks user_only (the harness shows its reason to the
// user, never to the model) carries each failure's user diagnostic instead
// of the model-facing text. Last, the user messages go through the user
// channel. The stdout templates of the channels used merge into one JSON
// object; stderr texts are joined; the exit status is the largest.
//
// Nothing in here knows a harness: which native key holds what, and
// which event carries which part, is plan data.
func Render(n *plan.Native, o *Outcome) Native {
	if o.Empty() {
		return Native{}
	}
	r := renderer{proto: n, user: append([]string(nil), o.User...)}
	if len(o.Context) > 0 {
		if !r.use(plan.PartContext, "$context", joinNotes(o.Context)) {
			if ctx := results(o.Context); len(ctx) > 0 {
				r.lost(plan.PartContext, joinNotes(ctx))
			}
		}
	}
	if len(o.Deny) > 0 {
		// A reason the harness shows the user alone is the user's
		// channel there: each failure in it reads as the user's
		// diagnostic, not as the generic text meant for a model.
		reason := joinNotes(o.Deny)
		if n.Channels[plan.PartDeny].UserOnly {
			reason = joinUserNotes(o.Deny)
		}
		if !r.use(plan.PartDeny, "$reason", reason) {
			r.lost(plan.PartDeny, "")
		}
	}
	if len(o.Continue) > 0 && !r.use(plan.PartContinue, "$reason", joinNotes(o.Continue)) {
		r.lost(plan.PartContinue, "")
	}
	if o.UpdatedInput != nil && !r.use(plan.PartRewriteInput, "$input", o.UpdatedInput) {
		r.lost(plan.PartRewriteInput, "")
	}
	if o.UpdatedOutput != nil && !r.use(plan.PartReplaceOutput, "$output", o.UpdatedOutput) {
		r.lost(plan.PartReplaceOutput, "")
	}
	if len(r.user) > 0 && !r.use(plan.PartUser, "$user", joinUser(r.user)) {
		// A table always names a user channel; a plan without one is
		// damaged, and the user must still learn what happened.
		r.stderr = append(r.stderr, joinUser(r.user)+"\n")
		r.exit = max(r.exit, 1)
	}
	return r.answer()
}

type renderer struct {
	proto  *plan.Native
	user   []string
	stdout map[string]any
	stderr []string
	exit   int
}

// use renders part through its channel with placeholder standing for
// value (a string, or compact JSON); false when the event has no channel
// for part.
func (r *renderer) use(part, placeholder string, value any) bool {
	ch, ok := r.proto.Channels[part]
	if !ok {
		return false
	}
	if ch.Stdout != nil {
		filled, _ := fill(ch.Stdout, placeholder, value).(map[string]any)
		r.stdout = merge(r.stdout, filled)
	}
	if ch.Stderr != "" {
		text := value
		if raw, ok := value.(json.RawMessage); ok {
			text = string(raw)
		}
		line := strings.ReplaceAll(ch.Stderr, placeholder, fmt.Sprint(text))
		if !strings.HasSuffix(line, "\n") {
			line += "\n" // stderr is read as lines
		}
		r.stderr = append(r.stderr, line)
	}
	r.exit = max(r.exit, ch.Exit)
	return true
}

// lost tells the user that part could not be delivered on this event.
func (r *renderer) lost(part, context string) {
	msg, ok := r.proto.Undelivered[part]
	if !ok {
		msg = "dalo: " + part + " cannot be delivered on " + r.proto.Harness + " " + r.proto.Event
		if context != "" {
			msg += ":\n$context"
		}
	}
	r.user = append(r.user, strings.ReplaceAll(msg, "$context", context))
}

func (r *renderer) answer() Native {
	var out Native
	if len(r.stdout) > 0 {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.Encode(r.stdout) // decoded JSON templates, strings and raw JSON: cannot fail
		out.Stdout = b.Bytes()
	}
	if len(r.stderr) > 0 {
		out.Stderr = []byte(strings.Join(r.stderr, ""))
	}
	out.Exit = r.exit
	return out
}

// fill copies a template, replacing every string that is exactly
// placeholder by value.
func fill(x any, placeholder string, value any) any {
	switch x := x.(type) {
	case string:
		if x == placeholder {
			return value
		}
		return x
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, v := range x {
			out[k] = fill(v, placeholder, value)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, v := range x {
			out[i] = fill(v, placeholder, value)
		}
		return out
	}
	return x
}

// merge merges object b into a, recursively; b wins on a key both hold
// with a value that is not an object on both sides.
func merge(a, b map[string]any) map[string]any {
	if a == nil {
		a = map[string]any{}
	}
	for k, v := range b {
		am, aok := a[k].(map[string]any)
		bm, bok := v.(map[string]any)
		if aok && bok {
			a[k] = merge(am, bm)
			continue
		}
		a[k] = v
	}
	return a
}
