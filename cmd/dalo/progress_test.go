package main

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer that the progress goroutine and the test
// may share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Progress is one line on the terminal, rewritten in place and erased when
// the work ends; nothing when stderr is no terminal, with --json, or when
// the work ends before the line would show.
func TestProgress(t *testing.T) {
	defer func(d, tick time.Duration) { progressDelay, progressTick = d, tick }(progressDelay, progressTick)
	progressDelay, progressTick = 0, 5*time.Millisecond

	tty := &syncBuffer{}
	e := &env{tty: tty}
	done := e.progress("fetching https://example.com/\x1b[2Jrepo.git")
	for !strings.Contains(tty.String(), "(0s)") {
		time.Sleep(time.Millisecond)
	}
	done()
	out := tty.String()
	const line = "\r\x1b[Kdalo: fetching https://example.com/\\x1b[2Jrepo.git (0s)"
	if !strings.HasPrefix(out, line) || !strings.HasSuffix(out, "\r\x1b[K") {
		t.Errorf("terminal got %q, want lines %q and an erased line at the end", out, line)
	}
	time.Sleep(4 * progressTick)
	if tty.String() != out {
		t.Errorf("progress wrote after it ended: %q", strings.TrimPrefix(tty.String(), out))
	}

	quiet := &syncBuffer{}
	for name, e := range map[string]*env{"no terminal": {}, "--json": {tty: quiet, json: true}} {
		e.progress("fetching")()
		if quiet.String() != "" {
			t.Errorf("%s: wrote %q", name, quiet.String())
		}
	}

	progressDelay = time.Hour
	(&env{tty: quiet}).progress("fetching")()
	if quiet.String() != "" {
		t.Errorf("quick work: wrote %q", quiet.String())
	}
}
