package scenario

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"dalo/internal/fakemodel"
	"dalo/providers"
)

// NativeEvents returns the hook events the harness binary bin (of harness
// name) accepts in its hook configuration, spelt as its configuration
// spells them (PreToolUse), sorted. Each harness says so itself: Claude
// Code's doctor lists the valid events when a settings file names an
// unknown one; Codex's app-server protocol schema enumerates them, and
// GitHub Copilot CLI's API schema, which it unpacks on its first start;
// Qwen Code's hook reference, shipped in its package, lists them. It runs
// the harness in a temporary home, with no model and no network; cache,
// when set, is the XDG cache a harness that unpacks itself there (GitHub
// Copilot CLI) is given, else one in that home.
func NativeEvents(name, bin, cache string) ([]string, error) {
	home, err := os.MkdirTemp("", "dalo-native-events-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(home)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8"}
	var events []string
	switch name {
	case "claude":
		cfg := filepath.Join(home, ".claude")
		if err := os.MkdirAll(cfg, 0o755); err != nil {
			return nil, err
		}
		settings := `{"hooks": {"DaloNoSuchEvent": [{"hooks": [{"type": "command", "command": "true"}]}]}}`
		if err := os.WriteFile(filepath.Join(cfg, "settings.json"), []byte(settings), 0o644); err != nil {
			return nil, err
		}
		cmd := exec.CommandContext(ctx, bin, "doctor")
		cmd.Dir = home
		cmd.Env = append(env, "CLAUDE_CONFIG_DIR="+cfg, "ANTHROPIC_BASE_URL=http://127.0.0.1:9",
			"ANTHROPIC_API_KEY=sk-ant-fake", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1")
		out, err := cmd.CombinedOutput()
		m := regexp.MustCompile(`Unknown hook event "DaloNoSuchEvent"[^\n]*Valid events: ([A-Za-z, ]+)`).FindSubmatch(out)
		if m == nil {
			return nil, fmt.Errorf("%s doctor (%v) listed no valid hook events for an unknown one:\n%s", bin, err, out)
		}
		for _, e := range strings.Split(string(m[1]), ",") {
			events = append(events, strings.TrimSpace(e))
		}
	case "codex":
		dir := filepath.Join(home, "schema")
		cmd := exec.CommandContext(ctx, bin, "app-server", "generate-json-schema", "--out", dir)
		cmd.Env = append(env, "CODEX_HOME="+filepath.Join(home, ".codex"))
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("%s app-server generate-json-schema: %v\n%s", bin, err, out)
		}
		// The protocol spells them as hooks/list does (preToolUse);
		// hooks.json as events are written (PreToolUse).
		if events, err = schemaEnum(filepath.Join(dir, "codex_app_server_protocol.v2.schemas.json"), "HookEventName"); err != nil {
			return nil, err
		}
	case "copilot":
		// Its API schema enumerates the hook types (camelCase, as its
		// hook files spell them: preToolUse), in the package it unpacks
		// on its first start: a shared cache when the caller names one.
		if cache == "" {
			cache = filepath.Join(home, "cache")
		}
		cmd := exec.CommandContext(ctx, bin, "--version")
		cmd.Env = append(env, "XDG_CACHE_HOME="+cache)
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("%s --version: %v\n%s", bin, err, out)
		}
		schemas, _ := filepath.Glob(filepath.Join(cache, "copilot", "pkg", "*", "*", "schemas", "api.schema.json"))
		if len(schemas) == 0 {
			return nil, fmt.Errorf("%s unpacked no schemas/api.schema.json into %s", bin, cache)
		}
		sort.Strings(schemas)
		// As the table spells them (PreToolUse).
		if events, err = schemaEnum(schemas[len(schemas)-1], "HookType"); err != nil {
			return nil, err
		}
	case "qwen":
		// Its hook reference ships in the package: the table of events
		// under "## Hook Events", one row per event.
		pkg, err := filepath.EvalSymlinks(bin)
		if err != nil {
			return nil, err
		}
		doc, err := os.ReadFile(filepath.Join(filepath.Dir(pkg), "bundled", "qc-helper", "docs", "features", "hooks.md"))
		if err != nil {
			return nil, err
		}
		_, section, _ := strings.Cut(string(doc), "\n## Hook Events\n")
		section, _, _ = strings.Cut(section, "\n### ")
		for _, m := range regexp.MustCompile("(?m)^\\| `([A-Za-z]+)` +\\|").FindAllStringSubmatch(section, -1) {
			events = append(events, m[1])
		}
	default:
		return nil, fmt.Errorf("no way known to list the native events of %s", name)
	}
	if len(events) == 0 {
		return nil, fmt.Errorf("%s listed no native events", bin)
	}
	sort.Strings(events)
	return events, nil
}

// schemaEnum reads the enum of the JSON Schema definition def in file, each
// value with its first letter upper-cased (preToolUse: PreToolUse).
func schemaEnum(file, def string) ([]string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var schema struct {
		Definitions map[string]struct {
			Enum []string `json:"enum"`
		} `json:"definitions"`
	}
	if err := json.Unmarshal(b, &schema); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	var out []string
	for _, e := range schema.Definitions[def].Enum {
		if e != "" {
			out = append(out, strings.ToUpper(e[:1])+e[1:])
		}
	}
	return out, nil
}

// UnknownEvents returns, sorted, the events table tb names that are not
// among events, the harness's native events: those its rows use (unless
// unmappedOnly) and those it lists as unmapped, each as its path in the
// table; and the events it both uses and lists as unmapped.
func UnknownEvents(tb *providers.Table, events []string, unmappedOnly bool) (unknown, both []string) {
	if !unmappedOnly {
		for e := range tb.Events {
			if !slices.Contains(events, e) {
				unknown = append(unknown, "events."+e)
			}
		}
	}
	for e := range tb.Unmapped.Events {
		if !slices.Contains(events, e) {
			unknown = append(unknown, "unmapped.events."+e)
		}
		if _, used := tb.Events[e]; used {
			both = append(both, e)
		}
	}
	sort.Strings(unknown)
	sort.Strings(both)
	return unknown, both
}

// nativeEvents asks the harness for the hook events it accepts
// (NativeEvents): every event the table lists as unmapped is one of them,
// so that the reasons it gives speak of events this version has, and none
// is both used and unmapped. The list is logged, so that a new event
// shows. It runs no session. An event the table uses that the harness
// does not accept is logged, not failed: the claims that cite this
// scenario are the unmapped events', and the scenarios whose sessions use
// that event fail on it (the live test TestNativeEvents checks both).
// GitHub Copilot CLI's schema spells agentStop and userPromptSubmitted
// where its settings.json takes Claude Code's Stop and UserPromptSubmit
// too (finding 62): nativeEventsUnmapped looks only for its unmapped ones.
var (
	nativeEvents = &Scenario{
		Name: "native-events", Test: "TestNativeEvents/%s", Harnesses: []string{"claude", "codex", "qwen"},
		Script: noModel,
		Play:   func(w *World, c *Check) error { return playNativeEvents(w, c, false) },
	}
	nativeEventsUnmapped = &Scenario{
		Name: "native-events-unmapped", Test: "TestNativeEventsUnmapped/%s", Harnesses: []string{"copilot"},
		Script: noModel,
		Play:   func(w *World, c *Check) error { return playNativeEvents(w, c, true) },
	}
)

// nativeEvents is in All's list, in its place in the order; the
// unmapped one, Copilot's alone, goes after.
func init() { All = append(All, nativeEventsUnmapped) }

// noModel is the script of a scenario that runs no session.
func noModel(*World) fakemodel.Script { return nil }

// playNativeEvents fails on an unmapped event the harness does not accept
// and on one the table both uses and lists as unmapped, and logs a used
// one it does not accept (unless unmappedOnly, which does not look).
func playNativeEvents(w *World, c *Check, unmappedOnly bool) error {
	events, err := NativeEvents(w.Harness, w.Bin, w.Getenv("XDG_CACHE_HOME"))
	if err != nil {
		return err
	}
	tb := w.Provider
	w.logf("%s: %d native events: %s", w.Harness, len(events), strings.Join(events, " "))
	if unmappedOnly && len(tb.Unmapped.Events) == 0 {
		c.Failf("%s lists no unmapped events to look for", tb.Key())
	}
	unknown, both := UnknownEvents(tb, events, true)
	if unknown != nil {
		c.Failf("%s names native events the harness does not accept: %s (it accepts %s)", tb.Key(), strings.Join(unknown, ", "), strings.Join(events, " "))
	}
	if both != nil {
		c.Failf("%s both uses and lists as unmapped %s", tb.Key(), strings.Join(both, ", "))
	}
	if !unmappedOnly {
		if used, _ := UnknownEvents(tb, events, false); used != nil {
			w.logf("%s: the harness does not accept the events %s", tb.Key(), strings.Join(used, ", "))
		}
	}
	return nil
}
