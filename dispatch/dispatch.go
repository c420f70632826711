package dispatch

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"dalo/plan"
)

// MaxPayload bounds the native JSON read from the harness on stdin.
const MaxPayload = 64 << 20

// maxParallel bounds how many handlers of one event run at once.
const maxParallel = 8

// limits bound every handler's response: the rules' (#Limits), built in.
// A variable only so that tests can lower them.
var limits = plan.DraftLimits

// Native is the dispatcher's answer to the harness.
type Native struct {
	Stdout []byte
	Stderr []byte
	Exit   int
}

// A Request is one native event to dispatch.
type Request struct {
	Home     string // $DALO_HOME
	Provider string // a provider table's name
	Event    string // the native event name
	// Project is the project scope whose plans answer (its id, see
	// plan.PlansDir); "" for the user's own.
	Project string
	Payload []byte // the raw native JSON, as read from stdin
	// PayloadErr, when set, says the payload could not be read whole (too
	// large, read error): every matching hook fails with it.
	PayloadErr error
	Getenv     func(string) (string, bool) // the environment handlers may inherit from
	// FailClosed says, as the harness entry does (--fail-closed), that a
	// required fail_closed hook is installed on the event: a plan that
	// cannot be loaded, or no plan at all, then blocks the action (see
	// Blocked) instead of answering nothing.
	FailClosed bool
	// Starting, when set, is called once before the first handler starts,
	// and not at all when none runs: the command arms its stop signals
	// there (see Interrupt), which costs a thread of their own, so that a
	// dispatch that runs nothing (no hook of the event, none for the tool)
	// does not pay for them.
	Starting func()
}

// Dispatch runs every installed, approved hook of the request's event and
// answers natively, as the event's native protocol in the plan says.
//
// It reads only the plan index files of its event: the event's own and,
// on a tool event, the bucket of the payload's tool name (see
// plan.Load), so its cost does not grow with the number of installed
// packages whose hooks cannot run here.
//
// It fails as a whole, with an error and no answer, when the provider or
// the event is not one any provider table names (plan.Known: a misspelt
// harness entry would otherwise run nothing, silently), or when the plan
// cannot be read (damaged, or of another schema). The command reports it
// on stderr with exit status 1, which the harnesses treat as a
// non-blocking error shown to the user; their blocking status would block
// the action, or on Stop resume the turn again and again.
//
// Unless req.FailClosed: the entry says a required fail_closed hook is
// installed on this event, and the plan that would run it cannot be read
// (or there is none), so the action is blocked (Blocked): what the hook's
// policy would do had it run and failed. Without that, deleting or
// damaging the plan, or running the harness with a store the entry did not
// name, would switch the gate off in silence.
func Dispatch(req Request) (Native, error) {
	out, err := dispatch(req)
	switch {
	case errors.Is(err, plan.ErrNotInstalled) && !req.FailClosed:
		return Native{}, nil
	case err != nil && req.FailClosed:
		if b, ok := Blocked(req.Provider, req.Event, req.Payload, err.Error()); ok {
			return b, nil
		}
	}
	return out, err
}

// Blocked is the answer that blocks the native action of event whatever
// the harness makes of its output, because of why: the provider's blocking
// exit status with the reason on stderr (plan.Blocking, from the tables).
// On an event that carries workflow.already_continued and whose payload
// says the workflow went on already, it blocks no more, so that a
// dispatcher that cannot answer never keeps the agent going without
// bound: it tells the user, with a non-blocking exit 1. ok is false for a
// provider no table names.
func Blocked(provider, event string, payload []byte, why string) (out Native, ok bool) {
	b, ok := plan.Blocking[provider]
	if !ok {
		return Native{}, false
	}
	msg := "dalo: " + why + "; a required fail_closed hook guards " + event + ", so dalo blocks it: run 'dalo doctor'\n"
	if key, ok := b.Continued[event]; ok {
		var p map[string]json.RawMessage
		if json.Unmarshal(payload, &p) == nil && string(p[key]) == "true" {
			return Native{Stderr: []byte("dalo: " + why + "; a required fail_closed hook guards " + event + ", which went on once already, so dalo lets it end: run 'dalo doctor'\n"), Exit: 1}, true
		}
	}
	return Native{Stderr: []byte(msg), Exit: b.Exit}, true
}

func dispatch(req Request) (Native, error) {
	events, ok := plan.Known[req.Provider]
	switch {
	case !ok:
		return Native{}, fmt.Errorf("unknown provider %q: dalo has provider tables for %s", req.Provider, strings.Join(KnownProviders(), ", "))
	case !slices.Contains(events, req.Event):
		return Native{}, fmt.Errorf("unknown native event %q of %s: its events are %s", req.Event, req.Provider, strings.Join(events, ", "))
	}
	// Held from before the index is read until the last handler ends, so
	// that no writer deletes a staged tree this dispatch may still check
	// or run in (see plan.HoldDispatch).
	defer plan.HoldDispatch(req.Home)()
	var (
		fields   Fields
		fieldErr error
		readFor  *plan.Native // the protocol fields were read with
	)
	extract := func(n *plan.Native) {
		readFor = n
		fields, fieldErr = nil, req.PayloadErr
		if fieldErr == nil {
			fields, fieldErr = extractFields(req.Payload, n)
		}
	}
	// On a tool event the payload's tool name picks the bucket to read; a
	// payload without one (or unreadable) reads every bucket, so that each
	// hook with a matcher fails under its policy.
	ef, err := plan.Load(plan.PlansDir(req.Home, req.Project), req.Provider, req.Event, func(n *plan.Native) (string, bool) {
		extract(n)
		if fieldErr != nil {
			return "", true
		}
		name, ok := fields.String("tool.name")
		return name, !ok
	})
	if err != nil {
		return Native{}, err
	}
	if ef == nil || len(ef.Hooks) == 0 {
		return Native{}, nil
	}
	if readFor != &ef.Native {
		extract(&ef.Native) // no bucket was picked, or a retry replaced the generation
	}
	hooks := ef.Hooks
	var runs []run
	for i := range hooks {
		h := &hooks[i]
		r := run{hook: h}
		if fieldErr != nil {
			r.failure = fieldErr.Error()
		} else if len(h.ToolNames) > 0 {
			name, ok := fields.String("tool.name")
			if !ok {
				r.failure = "not run: missing runtime binding: the native payload has no tool.name for the matcher"
			} else if !slices.Contains(h.ToolNames, name) {
				// Only a hook of the tool's bucket is read, and its matcher
				// names the tool, unless the plan was edited: the matcher
				// is held to the grant's before the hook is skipped, so
				// that an edited one cannot silence a gate.
				r.unmatched = true
			}
		}
		runs = append(runs, r)
	}
	if len(runs) == 0 {
		return Native{}, nil
	}
	// Every handler sees the same native payload and its own process, cwd
	// and environment; results compose in hook order whatever the order of
	// completion, so running them concurrently changes no outcome. One
	// run, the usual case of a tool call, runs on this goroutine: a new
	// one would start on a small stack and grow it for the grants' JSON.
	if start := req.Starting; start != nil {
		var once sync.Once
		req.Starting = func() { once.Do(start) }
	}
	if len(runs) == 1 {
		runHook(req, fields, &runs[0])
	} else {
		sem := make(chan struct{}, maxParallel)
		var wg sync.WaitGroup
		for i := range runs {
			wg.Add(1)
			sem <- struct{}{}
			go func(r *run) {
				defer wg.Done()
				defer func() { <-sem }()
				runHook(req, fields, r)
			}(&runs[i])
		}
		wg.Wait()
	}
	failurePasses(req.Home, req.Provider, fields, runs)
	return Render(&ef.Native, compose(runs, limits)), nil
}

// knownProviders is the names of plan.Known, sorted.
// KnownProviders lists the providers dalo has a table for, sorted: what
// --provider may name.
func KnownProviders() []string {
	names := make([]string, 0, len(plan.Known))
	for name := range plan.Known {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// runHook re-checks trust, runs the handler and parses its result, within
// the rules' limits. Trust is checked
// first, for a hook that already failed or that its matcher skips too: a
// failing hook is judged by the policy its grant binds (see checkTrust),
// and a skip by the matcher its grant binds.
func runHook(req Request, fields Fields, r *run) {
	bound, err := checkTrust(req.Home, req.Provider, req.Event, r.hook)
	if bound != nil && (bound.FailurePolicy != r.hook.FailurePolicy || bound.ErrorVisibility != r.hook.ErrorVisibility || bound.Effect != r.hook.Effect) {
		judged := *r.hook
		judged.FailurePolicy, judged.ErrorVisibility, judged.Effect = bound.FailurePolicy, bound.ErrorVisibility, bound.Effect
		r.hook = &judged
	}
	switch {
	case err != nil:
		r.failure = "not run: " + err.Error()
		return
	case r.failure != "":
		return
	case r.unmatched:
		r.skipped = true
		return
	}
	h := r.hook
	// Validation holds timeout_ms to #Limits before install plans it; a
	// plan without a positive timeout is damaged, and a handler is never
	// run without a deadline.
	if h.TimeoutMS <= 0 {
		r.failure = fmt.Sprintf("not run: the plan gives timeout_ms %d; run 'dalo plugin install' again", h.TimeoutMS)
		return
	}
	c, err := newCommand(h, fields, req.Getenv)
	if err != nil {
		r.failure = "not run: " + err.Error()
		return
	}
	if req.Starting != nil {
		req.Starting()
	}
	e := c.run(req.Payload, time.Duration(h.TimeoutMS)*time.Millisecond, limits.ResponseBytes)
	r.stderr = e.stderr
	if e.err != nil {
		r.failure = e.err.Error()
		return
	}
	res, err := parseResult(e.stdout, plan.ResultKinds[h.Effect], limits)
	if err != nil {
		r.failure = "malformed result: " + err.Error()
		return
	}
	r.result = res
}
