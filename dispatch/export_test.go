package dispatch

import (
	"time"

	"dalo/plan"
)

// SetPipeDrain widens or narrows how long stderr is drained, for a test,
// and returns what restores it.
func SetPipeDrain(d time.Duration) (restore func()) {
	old := pipeDrain
	pipeDrain = d
	return func() { pipeDrain = old }
}

// Interrupted calls Interrupt, for a test, and returns what lets handlers
// start again: the interrupt is for the whole process.
func Interrupted() (restore func()) {
	Interrupt()
	return func() {
		live.Lock()
		live.stopped = false
		live.Unlock()
	}
}

// SetLimits sets the limits every handler's response is held to, for a
// test, and returns what restores the rules'.
func SetLimits(l plan.Limits) (restore func()) {
	old := limits
	limits = l
	return func() { limits = old }
}

// SetPortableWait makes handlers run with the portable wait, a goroutine
// for each pipe and the end, as on a kernel without pidfds, and returns
// what restores the polled one.
func SetPortableWait() (restore func()) {
	old := polledRuns
	polledRuns = false
	return func() { polledRuns = old }
}
