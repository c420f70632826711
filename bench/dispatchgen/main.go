// Command dispatchgen supports bench/dispatch.sh: it fills a scratch dalo
// store with installed hooks, and measures commands run many times.
//
//	dispatchgen gen -home DIR -packages N      write a store of N packages, 5 hooks each
//	dispatchgen measure -n RUNS -stdin FILE -- PROGRAM [ARGS...]
//
// gen installs dispatchtest.Many's store: a Bash PreToolUse runs exactly
// one handler however many packages are installed. It prints the handler's
// staged path, and writes DIR/payload.json (the recorded PreToolUse).
//
// measure prints the median and 90th percentile wall time and the largest
// maximum resident set size of the runs.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"syscall"
	"time"

	"dalo/dispatch/dispatchtest"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: dispatchgen gen|measure ...")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "gen":
		err = gen(os.Args[2:])
	case "measure":
		err = measure(os.Args[2:])
	default:
		err = fmt.Errorf("unknown subcommand %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "dispatchgen:", err)
		os.Exit(1)
	}
}

func gen(args []string) error {
	fs := flag.NewFlagSet("gen", flag.ExitOnError)
	home := fs.String("home", "", "store directory")
	n := fs.Int("packages", 10, "packages to install")
	payload := fs.String("payload", "", "recorded PreToolUse payload to copy")
	fs.Parse(args)
	p, err := dispatchtest.Many(*home, *n)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(*payload)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(*home, "payload.json"), data, 0o644); err != nil {
		return err
	}
	t := p.Events["PreToolUse"][0].Tool
	fmt.Println(filepath.Join(t.Root, t.Entry))
	return nil
}

func measure(args []string) error {
	fs := flag.NewFlagSet("measure", flag.ExitOnError)
	n := fs.Int("n", 200, "runs")
	stdin := fs.String("stdin", "", "file to feed on stdin")
	fs.Parse(args)
	if fs.NArg() == 0 {
		return fmt.Errorf("measure: no program")
	}
	in, err := os.ReadFile(*stdin)
	if err != nil {
		return err
	}
	var times []time.Duration
	var rss int64
	for i := 0; i < *n; i++ {
		cmd := exec.Command(fs.Arg(0), fs.Args()[1:]...)
		cmd.Stdin = bytes.NewReader(in)
		var out bytes.Buffer
		cmd.Stdout = &out
		start := time.Now()
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s: %v", fs.Arg(0), err)
		}
		times = append(times, time.Since(start))
		if m := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss; m > rss {
			rss = m
		}
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	fmt.Printf("median %.2f ms  p90 %.2f ms  max RSS %.1f MB\n", ms(times[len(times)/2]), ms(times[len(times)*9/10]), float64(rss)/1024)
	return nil
}
