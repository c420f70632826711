package dispatch

import "time"

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
