package dispatch

import "time"

// SetStderrDrain widens or narrows how long stderr is drained, for a test,
// and returns what restores it.
func SetStderrDrain(d time.Duration) (restore func()) {
	old := stderrDrain
	stderrDrain = d
	return func() { stderrDrain = old }
}
