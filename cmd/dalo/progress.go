package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"dalo/internal/termtext"
)

// progressDelay is how long work runs before its progress line shows: a
// fetch that answers at once prints nothing.
var progressDelay = 300 * time.Millisecond

// progressTick is how often the line's seconds are rewritten.
var progressTick = time.Second

// terminal returns f when it is a terminal that takes cursor movement (not
// TERM=dumb), else nil: a log or a pipe gets no carriage returns.
func terminal(f *os.File) io.Writer {
	if !isTerminal(f) || os.Getenv("TERM") == "dumb" {
		return nil
	}
	return f
}

// progress shows on the terminal that work which can take seconds is
// under way, what it is and for how long: one line on stderr, rewritten
// in place and erased when the work ends, so that nothing of it stays in
// what the command prints. Only on a terminal, and never with --json. It
// returns the function that ends it.
func (e *env) progress(what string) (done func()) {
	if e.tty == nil || e.json {
		return func() {}
	}
	what = termtext.Escape(what)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	shown := false
	go func() {
		defer wg.Done()
		start := time.Now()
		wait := time.NewTimer(progressDelay)
		defer wait.Stop()
		select {
		case <-stop:
			return
		case <-wait.C:
		}
		tick := time.NewTicker(progressTick)
		defer tick.Stop()
		for {
			shown = true
			fmt.Fprintf(e.tty, "\r\x1b[Kdalo: %s (%ds)", what, int(time.Since(start).Seconds()))
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		close(stop)
		wg.Wait()
		if shown {
			fmt.Fprint(e.tty, "\r\x1b[K")
		}
	}
}
