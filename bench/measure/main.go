// Command measure runs a command several times and prints, on one line,
// the median, fastest and slowest wall time in milliseconds (process start
// to exit), the largest peak resident set size in KiB (from the kernel's
// rusage, as GNU time reports it), the exit status of the last run, the
// median CPU time (user plus system) in milliseconds, which other load on
// the machine skews less than wall time, the 90th percentile wall time and
// the least CPU time (a best-of-N figure, which load inflates least):
//
//	go run ./bench/measure -n 5 -- dalo plugin validate DIR
//	412.30 405.10 430.90 101464 0 780.20 428.00 771.10
//
// With -stdin FILE every run reads FILE on its standard input (a harness's
// native payload, for dispatch). With -before CMD, sh runs CMD before every
// run, unmeasured: it edits a manifest before each re-validation, or undoes
// an install before the next.
//
// One warm-up run, not counted, comes first so that every counted run
// reads the source from the page cache.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"time"
)

func main() {
	n := flag.Int("n", 5, "counted runs")
	stdin := flag.String("stdin", "", "a file every run reads on its standard input")
	before := flag.String("before", "", "a shell command run before every run, not measured")
	flag.Parse()
	args := flag.Args()
	if len(args) == 0 || *n < 1 {
		fmt.Fprintln(os.Stderr, "usage: measure [-n RUNS] [-stdin FILE] -- COMMAND [ARGS...]")
		os.Exit(2)
	}
	var in []byte
	if *stdin != "" {
		var err error
		if in, err = os.ReadFile(*stdin); err != nil {
			fmt.Fprintf(os.Stderr, "measure: %v\n", err)
			os.Exit(1)
		}
	}
	var walls, cpus []float64
	var peak int64
	status := 0
	for i := 0; i <= *n; i++ {
		if *before != "" {
			if out, err := exec.Command("sh", "-c", *before).CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "measure: -before: %v\n%s", err, out)
				os.Exit(1)
			}
		}
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Stdin = bytes.NewReader(in)
		start := time.Now()
		err := cmd.Run()
		wall := time.Since(start)
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			status = ee.ExitCode()
		case err != nil:
			fmt.Fprintf(os.Stderr, "measure: %v\n", err)
			os.Exit(1)
		default:
			status = 0
		}
		if i == 0 {
			continue // warm-up
		}
		walls = append(walls, float64(wall.Microseconds())/1000)
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			peak = max(peak, int64(ru.Maxrss)) // KiB on Linux; int32 on some 32-bit systems
			cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			cpus = append(cpus, float64(cpu.Microseconds())/1000)
		}
	}
	slices.Sort(walls)
	cpu, best := 0.0, 0.0
	if len(cpus) > 0 {
		slices.Sort(cpus)
		cpu, best = cpus[len(cpus)/2], cpus[0]
	}
	fmt.Printf("%.2f %.2f %.2f %d %d %.2f %.2f %.2f\n", walls[len(walls)/2], walls[0], walls[len(walls)-1], peak, status, cpu, walls[len(walls)*9/10], best)
}
