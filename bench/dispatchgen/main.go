// Command dispatchgen supports bench/dispatch.sh: it fills a scratch dalo
// store with installed hooks.
//
//	dispatchgen -home DIR -packages N -payload FILE [-large BYTES]
//
// It installs dispatchtest.Many's store of N packages, 5 hooks each: a Bash
// PreToolUse runs exactly one handler however many packages are installed.
// It prints the handler's staged path, and copies FILE (a recorded
// PreToolUse) to DIR/payload.json. With -large, it also writes
// DIR/large.json: FILE with a command that writes BYTES of Go source
// through a heredoc, the size of what a harness sends when its agent
// writes a large file.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"dalo/dispatch/dispatchtest"
)

func main() {
	home := flag.String("home", "", "store directory")
	n := flag.Int("packages", 10, "packages to install")
	payload := flag.String("payload", "", "recorded PreToolUse payload to copy")
	large := flag.Int("large", 0, "also write large.json, whose command holds this many bytes of source")
	flag.Parse()
	if err := gen(*home, *n, *payload, *large); err != nil {
		fmt.Fprintln(os.Stderr, "dispatchgen:", err)
		os.Exit(1)
	}
}

func gen(home string, n int, payload string, large int) error {
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
	if large > 0 {
		if err := writeLarge(filepath.Join(home, "large.json"), data, large); err != nil {
			return err
		}
	}
	t := p.Events["PreToolUse"][0].Tool
	fmt.Println(filepath.Join(t.Root, t.Entry))
	return nil
}

// writeLarge writes to name the payload data with its tool input's
// command replaced by a heredoc of size bytes of Go source: lines with
// quotes, tabs and a non-ASCII letter, as JSON escapes them.
func writeLarge(name string, data []byte, size int) error {
	var p map[string]any
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	line := "\tif err := f(\"x\"); err != nil { return fmt.Errorf(\"wrap: %w\", err) } // é\n"
	source := strings.Repeat(line, size/len(line)+1)[:size]
	p["tool_input"] = map[string]any{"command": "cat > main.go <<'EOF'\n" + source + "EOF\n"}
	// As a harness's JSON.stringify writes it: < and > as they are.
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		return err
	}
	return os.WriteFile(name, bytes.TrimSuffix(out.Bytes(), []byte("\n")), 0o644)
}
