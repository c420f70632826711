// Command dispatchgen supports bench/dispatch.sh: it fills a scratch dalo
// store with installed hooks.
//
//	dispatchgen -home DIR -packages N -payload FILE
//
// It installs dispatchtest.Many's store of N packages, 5 hooks each: a Bash
// PreToolUse runs exactly one handler however many packages are installed.
// It prints the handler's staged path, and copies FILE (a recorded
// PreToolUse) to DIR/payload.json.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"dalo/dispatch/dispatchtest"
)

func main() {
	home := flag.String("home", "", "store directory")
	n := flag.Int("packages", 10, "packages to install")
	payload := flag.String("payload", "", "recorded PreToolUse payload to copy")
	flag.Parse()
	if err := gen(*home, *n, *payload); err != nil {
		fmt.Fprintln(os.Stderr, "dispatchgen:", err)
		os.Exit(1)
	}
}

func gen(home string, n int, payload string) error {
	if home == "" || payload == "" {
		return fmt.Errorf("-home and -payload are required")
	}
	p, err := dispatchtest.Many(home, n)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(payload)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(home, "payload.json"), data, 0o644); err != nil {
		return err
	}
	t := p.Events["PreToolUse"][0].Tool
	fmt.Println(filepath.Join(t.Root, t.Entry))
	return nil
}
