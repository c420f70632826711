//go:build race

package engine

// raceEnabled says the race detector instruments this build: it changes
// what the heap holds, so a memory bound measured under it is no bound of
// what users run.
const raceEnabled = true
