package dispatch

import "time"

// SetPipeDrain widens or narrows how long stderr is drained, for a test,
// and returns what restores it.
func SetPipeDrain(d time.Duration) (restore func()) {
	old := pipeDrain
	pipeDrain = d
	return func() { pipeDrain = old }
}
