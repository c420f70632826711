package providers

import (
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	"cuelang.org/go/cue"

	"dalo/internal/shiftand"
)

// A Table is one harness version's provider table, decoded from its CUE
// file after #Provider accepted it. Field names follow the CUE schema.
type Table struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Harness string `json:"harness"`
	Install string `json:"install"`
	// Verified, set only on a local table, says when and by which dalo
	// `dalo providers verify` proved the version on this machine.
	Verified      *Verified              `json:"verified,omitempty"`
	VersionOutput Claim                  `json:"version_output"`
	Headless      Headless               `json:"headless"`
	Config        Config                 `json:"config"`
	Timeout       Timeout                `json:"timeout"`
	Tools         map[string]Claim       `json:"tools"`
	ToolPatterns  map[string]ToolPattern `json:"tool_patterns,omitempty"`
	// MemberPowers are what a skill or an agent can make the harness do
	// beyond adding text to the model's context.
	MemberPowers []MemberPower `json:"member_powers,omitempty"`
	// MemberPowersNone are the kinds a run showed have no power there.
	MemberPowersNone []MemberPowerNone `json:"member_powers_none,omitempty"`
	Events           map[string]Event  `json:"events"`
	// Blocking is how a hook command blocks the native action whatever it
	// prints: its exit status, with the reason on stderr.
	Blocking Blocking `json:"blocking"`
	// Undelivered is what the user reads when an outcome holds a part an
	// event has no channel for, by part ($event, $context placeholders).
	Undelivered map[string]string `json:"undelivered"`
	// Rows is subject → phase → row, for every admitted combination.
	Rows map[string]map[string]Row `json:"rows"`
	// Unmapped is what the harness offers hooks that no row reaches.
	Unmapped Unmapped `json:"unmapped"`

	// File is the table's path below the tables directory.
	File  string    `json:"-"`
	value cue.Value // the table unified with #Provider
	// patterns are ToolPatterns compiled, when the table is loaded:
	// validation asks KnowsTool of every tool name of every hook.
	patterns []toolPattern
	expands  *regexp.Regexp // Config.Hooks.Entry.Expands, compiled
	breaks   *regexp.Regexp // Config.Comments.Breaks, compiled
	key      string         // Key, made when the table is loaded
	local    bool           // read from the user's machine (WithLocal)
	// project is the project directory the table's "project" locations
	// resolve to (see InProject); "" for the user's own scope.
	project string
}

// Verified is a local table's proof: the day (YYYY-MM-DD) `dalo providers
// verify` proved the harness version on the user's machine, and the dalo
// version that did.
type Verified struct {
	Date string `json:"date"`
	Dalo string `json:"dalo"`
}

// A MemberPower is a front-matter key (Key) or a body construct (Body, a
// regular expression whose first group is what to show) of a skill's or
// an agent's file (Kind) that runs code or widens permissions on the
// harness, and what it does there.
type MemberPower struct {
	Kind     string   `json:"kind"`
	Key      string   `json:"key,omitempty"`
	Body     string   `json:"body,omitempty"`
	Does     string   `json:"does"`
	Evidence []string `json:"evidence"`
}

// A MemberPowerNone says that a file of Kind makes the harness do nothing
// by itself, with the run that showed it.
type MemberPowerNone struct {
	Kind     string   `json:"kind"`
	Evidence []string `json:"evidence"`
}

// Headless is how the harness version runs one prompt with nobody at the
// terminal, offline against a model server on loopback, in a scratch
// home: what the live tests and `dalo providers verify` run. Its strings
// are templates ({server}, {home}, {root}, {work}, {prompt}, {tools}; see
// #Provider.headless).
type Headless struct {
	// API is what the model server speaks: anthropic, openai or gemini.
	API   string        `json:"api"`
	Shell HeadlessShell `json:"shell"`
	// Env are the variables a run sets.
	Env map[string]string `json:"env"`
	// Files are the user's own configuration, written before a session.
	Files []HeadlessFile `json:"files,omitempty"`
	// Args is a session's command line after the binary's name; Stream,
	// when set, that of a session whose stdout is the stream of records
	// the harness shows its user.
	Args   []string `json:"args"`
	Stream []string `json:"stream,omitempty"`
	// Updates says how a run keeps the harness from updating itself.
	Updates string `json:"updates"`
	// SessionTimeoutS bounds a session, when set.
	SessionTimeoutS int `json:"session_timeout_s,omitempty"`
	// SharedCache, when set, says the harness unpacks itself into
	// $XDG_CACHE_HOME on its first start: runs may share one cache.
	SharedCache *Claim   `json:"shared_cache,omitempty"`
	Evidence    []string `json:"evidence"`
}

// HeadlessShell is the harness's shell tool: Tool, its native name, and
// Model, the name the model is offered when that is another.
type HeadlessShell struct {
	Tool  string `json:"tool"`
	Model string `json:"model,omitempty"`
}

// A HeadlessFile is a file of the user's own configuration a headless run
// writes first: Path below Root (home, config_home or root).
type HeadlessFile struct {
	Root    string `json:"root"`
	Path    string `json:"path"`
	Content string `json:"content"`
}

// A Claim is a fact with its evidence.
type Claim struct {
	Text     string   `json:"text,omitempty"`
	Evidence []string `json:"evidence"`
}

// Config is where the harness keeps what dalo reads and writes: its
// configuration home, the hooks file dalo adds its entries to, the
// settings that switch hooks off, where it reads instructions, skills and
// agents, and whether it runs hooks only once the user trusted them.
type Config struct {
	Home  Home      `json:"home"`
	Hooks HooksFile `json:"hooks"`
	// Comments, when set, says the harness reads its JSON settings as
	// JSON with comments (// and /* */): dalo reads and edits them so,
	// keeping every comment.
	Comments     *Comments  `json:"comments,omitempty"`
	Off          []Switch   `json:"off,omitempty"`
	Drop         []Drop     `json:"drop,omitempty"`
	Instructions Location   `json:"instructions"`
	Skills       []Location `json:"skills"`
	Agents       Agents     `json:"agents"`
	Trust        Trust      `json:"trust"`
	// Project is where the harness reads a project's own hooks, skills
	// and agents; nil when the table states none.
	Project *Project `json:"project,omitempty"`
}

// Project is a harness's project scope: the per-user file of a project
// dalo writes its entries into (Hooks, Local says the project does not
// commit it), where it reads the project's skills and agents, and whether
// it runs a project's hooks only in a folder the user trusted (Trust,
// stated either way). Status is Supported or Unsupported (then Reason
// says why, and only Trust is set).
type Project struct {
	Status   string       `json:"status"`
	Reason   string       `json:"reason,omitempty"`
	Note     string       `json:"note,omitempty"`
	Evidence []string     `json:"evidence"`
	Hooks    ProjectHooks `json:"hooks"`
	Skills   []Location   `json:"skills,omitempty"`
	Agents   *Location    `json:"agents,omitempty"`
	Trust    Trust        `json:"trust"`
	// Others are files of other harnesses' project scopes whose hooks
	// this harness runs too.
	Others []ProjectOther `json:"others,omitempty"`
}

// A ProjectOther is a file of harness Harness's project scope whose hooks
// a harness runs too, and how (Means).
type ProjectOther struct {
	Harness  string   `json:"harness"`
	Location Location `json:"location"`
	Means    string   `json:"means"`
	Evidence []string `json:"evidence"`
}

// ProjectHooks is the project's file dalo writes its entries into; Local
// is the evidence that each user keeps it for themselves.
type ProjectHooks struct {
	Location
	Local Claim `json:"local"`
}

// Comments says the harness reads its JSON settings as JSON with
// comments. Breaks, when set, matches what the harness keeps of a comment
// and then fails to parse: a file with one such character in a comment is
// a file the harness cannot read.
type Comments struct {
	Evidence []string `json:"evidence"`
	Breaks   *Pattern `json:"breaks,omitempty"`
}

// Home is the harness's configuration home: Env moves it; without Env it
// is Default below the user's home directory.
type Home struct {
	Env     string `json:"env"`
	Default string `json:"default"`
	// Within is the configuration home below the directory Env names,
	// when Env moves the user's home for the harness ("" when Env names
	// the configuration home itself).
	Within   string   `json:"within,omitempty"`
	Evidence []string `json:"evidence"`
}

// HooksFile is the file dalo writes its dispatcher entries into, what the
// harness makes of a JSON object that holds a key twice, and the shape of
// dalo's entry for one native event there.
type HooksFile struct {
	Location
	DuplicateKeys DuplicateKeys `json:"duplicate_keys"`
	Entry         EntryTemplate `json:"entry"`
}

// DuplicateKeys says what the harness reads of an object with a key twice:
// ReadsLast, the last copy; ReadsNone, none of the file's hooks.
type DuplicateKeys struct {
	Reads    string   `json:"reads"`
	Evidence []string `json:"evidence"`
}

// What a harness reads of a JSON object that holds a key twice.
const (
	ReadsLast = "last"
	ReadsNone = "none"
)

// A Switch is a setting that switches the harness's hooks off for the
// user: Key (a top-level key of the JSON file at Location) set to Value.
type Switch struct {
	Location Location `json:"location"`
	// Key is a dotted path into the file's objects (hooksConfig.enabled).
	Key   string `json:"key"`
	Value any    `json:"value,omitempty"`
	// Values, when set, are each a value that switches every hook off: a
	// harness that reads the key by its truthiness.
	Values []any `json:"values,omitempty"`
	// Contains, "command", says Key is a list that switches off each hook
	// whose command it holds, rather than all of them by Value.
	Contains string `json:"contains,omitempty"`
	// Default: Location holds defaults, which the hook file overrides:
	// the switch is off when the hook file sets Key.
	Default bool `json:"default,omitempty"`
	// OwnFile: the switch turns off only the hooks of the file that
	// holds it, so dalo's entries only when they are in that file.
	OwnFile  bool     `json:"own_file,omitempty"`
	Means    string   `json:"means"`
	Evidence []string `json:"evidence"`
}

// Blocking is how a hook command blocks the native action: it exits with
// Exit and writes the reason on stderr.
type Blocking struct {
	Exit     int      `json:"exit"`
	Evidence []string `json:"evidence"`
}

// A Location is a file or directory the harness reads, relative to Root:
// "home" (the user's home directory), "config_home" (Config.Home) or
// "system" (the file system's root).
type Location struct {
	Root   string `json:"root"`
	Path   string `json:"path"`
	Layout string `json:"layout,omitempty"`
	// Env, when set, names a variable that, set, names the file instead
	// (Gemini CLI's GEMINI_CLI_SYSTEM_SETTINGS_PATH).
	Env      string   `json:"env,omitempty"`
	Evidence []string `json:"evidence"`
	// RootOwned says the harness reads the file only when it and every
	// directory above it belong to root and no group or other may write
	// them.
	RootOwned *Claim `json:"root_owned,omitempty"`
}

// Agents says whether the harness has subagents and where it reads them.
type Agents struct {
	Status   string    `json:"status"`
	Location *Location `json:"location,omitempty"`
	Reason   string    `json:"reason,omitempty"`
	Evidence []string  `json:"evidence"`
}

// Trust says whether the harness runs configured hooks only after the
// user reviewed them (Codex's trusted_hash), how, and, when dalo can read
// and record that trust for its own entries (install --trust), where.
type Trust struct {
	Required bool        `json:"required"`
	How      string      `json:"how"`
	Evidence []string    `json:"evidence"`
	State    *TrustState `json:"state,omitempty"`
	// Folders, of a project's trust, is where the harness keeps the
	// folders its user trusted (#ProjectTrust.folders).
	Folders *TrustFolders `json:"folders,omitempty"`
}

// TrustFolders is where a harness keeps the folders its user trusted: a
// JSON array at Key of the file at Location, whose lines starting with //
// it drops. Only the scenarios write it, for their scratch projects.
type TrustFolders struct {
	Location Location `json:"location"`
	Key      string   `json:"key"`
	Evidence []string `json:"evidence"`
}

// TrustState is where the harness keeps the user's trust in each hook: in
// the TOML file at Location, Table."<key>".Field holds the hash the
// harness reports for the hook; List is how dalo asks the harness for each
// hook's key and hash (TrustListCodexAppServer).
type TrustState struct {
	Location Location `json:"location"`
	Table    string   `json:"table"`
	Field    string   `json:"field"`
	List     string   `json:"list"`
	Evidence []string `json:"evidence"`
}

// TrustListCodexAppServer: `codex app-server`, whose hooks/list answers
// each hook's key and current hash.
const TrustListCodexAppServer = "codex-app-server"

// Timeout is how the native config expresses a hook timeout.
type Timeout struct {
	Unit   string           `json:"unit"` // seconds or milliseconds; the entry template says where
	Clamps map[string]Clamp `json:"clamps,omitempty"`
}

// A Clamp is a harness's own maximum timeout for a native event.
type Clamp struct {
	MaxMS    int      `json:"max_ms"`
	Evidence []string `json:"evidence"`
}

// ToolPattern is a family of native tool names a matcher may use besides
// the table's Tools (MCP tools: mcp__<server>__<tool>), as a regular
// expression a name must match (the table anchors it).
type ToolPattern struct {
	Regexp   string   `json:"regexp"`
	Evidence []string `json:"evidence"`
}

// An Event is a native event the table uses, with its native protocol:
// where its payload holds the portable fields, and the channels its output
// offers for each part of a composed outcome (#Part names).
type Event struct {
	OutputIgnored bool               `json:"output_ignored"`
	ToolMatcher   bool               `json:"tool_matcher"`
	Evidence      []string           `json:"evidence"`
	Payload       Payload            `json:"payload"`
	Channels      map[string]Channel `json:"channels"`
	Undelivered   map[string]string  `json:"undelivered,omitempty"`
	// FailedCommand is what the harness does with the action when a hook
	// command fails without an answer (FailedDeny, FailedPass); nil, it
	// lets it go on.
	FailedCommand *FailedCommand `json:"failed_command,omitempty"`
}

// FailedCommand says what a harness does with a native event's action when
// a hook command fails: exits nonzero, cannot start, or is killed.
type FailedCommand struct {
	Does     string   `json:"does"`
	Evidence []string `json:"evidence"`
}

// What a harness does with the action of a failed hook command.
const (
	FailedPass = "pass"
	FailedDeny = "deny"
)

// FailedCommandDenies says whether a failed hook command on event denies
// its action: an entry whose dispatcher cannot run then blocks every call,
// whatever the hooks' failure policies say, unless the entry maps failures
// to a pass.
func (t *Table) FailedCommandDenies(event string) bool {
	f := t.Events[event].FailedCommand
	return f != nil && f.Does == FailedDeny
}

// Payload says where a native payload holds each portable field.
type Payload struct {
	Fields map[string]PayloadField `json:"fields"`
	Actor  *PayloadField           `json:"actor,omitempty"` // the key marking a subagent
}

// A PayloadField is the top-level native key of a portable field.
type PayloadField struct {
	Key      string   `json:"key"`
	Type     string   `json:"type,omitempty"`
	Evidence []string `json:"evidence"`
}

// Unmapped lists the native events and output fields of a harness version
// that no row of the draft's combination table reaches, each with why.
type Unmapped struct {
	Events  map[string]UnmappedClaim `json:"events,omitempty"`
	Outputs map[string]UnmappedClaim `json:"outputs,omitempty"`
}

// An UnmappedClaim is the reason a package author reads for something no
// portable hook reaches, with the evidence that the version has it.
type UnmappedClaim struct {
	Reason   string   `json:"reason"`
	Evidence []string `json:"evidence"`
}

// Status of a row, an effect or a failure delivery.
const (
	Supported   = "supported"
	Unsupported = "unsupported"
	Omitted     = "omitted" // of a hook: optional, fallback omit, unsupported
)

// A Row is one admitted (subject, phase) on this harness version.
type Row struct {
	Status      string                         `json:"status"`
	Reason      string                         `json:"reason,omitempty"`
	NativeEvent string                         `json:"native_event,omitempty"`
	Also        map[string]Also                `json:"also,omitempty"`
	Effects     map[string]Effect              `json:"effects,omitempty"`
	Failures    map[string]map[string]Delivery `json:"failures,omitempty"` // policy → visibility
	Evidence    []string                       `json:"evidence"`
}

// Also is a further native event of a row (#Provider rows.also): the
// effects whose hooks are installed on it too.
type Also struct {
	Effects  []string `json:"effects"`
	Evidence []string `json:"evidence"`
}

// An Effect on a row: supported with the native output of each portable
// result kind, or unsupported with a reason.
type Effect struct {
	Status   string                  `json:"status"`
	Reason   string                  `json:"reason,omitempty"`
	Note     string                  `json:"note,omitempty"`
	Outputs  map[string]NativeOutput `json:"outputs,omitempty"`
	Evidence []string                `json:"evidence"`
}

// A Delivery is how a hook failure reaches its audience.
type Delivery struct {
	Status   string        `json:"status"`
	Reason   string        `json:"reason,omitempty"`
	Note     string        `json:"note,omitempty"`
	Output   *NativeOutput `json:"output,omitempty"`
	Evidence []string      `json:"evidence"`
}

// A NativeOutput is what the dispatcher prints and how it exits. Stdout is
// a template whose placeholders #NativeOutput in cue/provider.cue lists;
// nil means print nothing. Dispatch renders from the event's channels
// (copied into the plan by install, store.NativeOf); a row's outputs are the
// table's claim, which `dalo providers show` prints and the tests hold the
// channels to.
type NativeOutput struct {
	Stdout   map[string]any `json:"stdout,omitempty"`
	Stderr   string         `json:"stderr,omitempty"`
	Exit     int            `json:"exit"`
	Evidence []string       `json:"evidence"`
}

// A Channel is how an event carries one part of a composed outcome, or
// the user's messages (#Channel, #DenyChannel in cue/provider.cue).
type Channel struct {
	NativeOutput
	// UserOnly, on a deny channel only, says with its evidence that the
	// harness shows the reason to the user and never sends it to the
	// model: a failure that denies puts its detailed diagnostic there.
	UserOnly *UserOnly `json:"user_only,omitempty"`
}

// UserOnly is the claim that a deny reason reaches the user alone.
type UserOnly struct {
	Evidence []string `json:"evidence"`
}

// Key is name@version.
func (t *Table) Key() string {
	if t.key != "" {
		return t.key
	}
	return t.Name + "@" + t.Version
}

// Row returns the row of (subject, phase); ok is false for a combination
// draft 0.1 does not admit.
func (t *Table) Row(subject, phase string) (Row, bool) {
	r, ok := t.Rows[subject][phase]
	return r, ok
}

// NativeEvent returns the native event of (subject, phase), or false when
// this version does not support the row.
func (t *Table) NativeEvent(subject, phase string) (string, bool) {
	r, ok := t.Row(subject, phase)
	if !ok || r.Status != Supported {
		return "", false
	}
	return r.NativeEvent, true
}

// AlsoEvents returns the further native events a hook of effect on
// (subject, phase) is installed on, beside the row's own (rows.also),
// sorted.
func (t *Table) AlsoEvents(subject, phase, effect string) []string {
	r, ok := t.Row(subject, phase)
	if !ok || r.Status != Supported {
		return nil
	}
	var out []string
	for ev, a := range r.Also {
		if slices.Contains(a.Effects, effect) {
			out = append(out, ev)
		}
	}
	slices.Sort(out)
	return out
}

// RowOf returns the (subject, phase) a native event serves.
func (t *Table) RowOf(event string) (subject, phase string, ok bool) {
	for s, phases := range t.Rows {
		for p, r := range phases {
			if _, also := r.Also[event]; r.Status == Supported && (r.NativeEvent == event || also) {
				return s, p, true
			}
		}
	}
	return "", "", false
}

// Output returns the native output for a portable result kind of an effect
// on (subject, phase), or false when this version does not support it.
func (t *Table) Output(subject, phase, effect, kind string) (NativeOutput, bool) {
	r, ok := t.Row(subject, phase)
	if !ok || r.Status != Supported {
		return NativeOutput{}, false
	}
	e, ok := r.Effects[effect]
	if !ok || e.Status != Supported {
		return NativeOutput{}, false
	}
	o, ok := e.Outputs[kind]
	return o, ok
}

// FailureOutput returns how a failure under policy reaches visibility's
// audience on (subject, phase), or false when this version cannot do it.
func (t *Table) FailureOutput(subject, phase, policy, visibility string) (NativeOutput, bool) {
	r, ok := t.Row(subject, phase)
	if !ok || r.Status != Supported {
		return NativeOutput{}, false
	}
	d, ok := r.Failures[policy][visibility]
	if !ok || d.Status != Supported || d.Output == nil {
		return NativeOutput{}, false
	}
	return *d.Output, true
}

// KnowsTool says whether name is a native tool name a matcher may use.
func (t *Table) KnowsTool(name string) bool {
	if _, ok := t.Tools[name]; ok {
		return true
	}
	for _, p := range t.patterns {
		if p.matches(name) {
			return true
		}
	}
	return false
}

// A toolPattern is a tool pattern's regular expression compiled, and
// also as a shiftand.Matcher when it is one: a name such as
// mcp__server__tool, matched by regexp's backtracker, cost 350 ns, and
// validating hooks that name hundreds of MCP tools asked it of each.
type toolPattern struct {
	re   *regexp.Regexp
	fast *shiftand.Matcher
}

// patternsBacktracked counts the names a toolPattern asked regexp about:
// a test holds the tables' patterns to none.
var patternsBacktracked atomic.Int64

func (p toolPattern) matches(name string) bool {
	if p.fast != nil {
		return p.fast.MatchString(name)
	}
	patternsBacktracked.Add(1)
	return p.re.MatchString(name)
}

// compilePatterns compiles t's tool patterns, which #Provider accepted
// as regular expressions.
func (t *Table) compilePatterns() error {
	if err := t.compileExpands(); err != nil {
		return err
	}
	t.patterns = nil
	for _, name := range slices.Sorted(maps.Keys(t.ToolPatterns)) {
		re, err := regexp.Compile(t.ToolPatterns[name].Regexp)
		if err != nil {
			// A table compiled from CUE says where the pattern is.
			at := ""
			if pos := t.value.LookupPath(cue.MakePath(cue.Str("tool_patterns"), cue.Str(name), cue.Str("regexp"))).Pos(); pos.IsValid() {
				at = pos.String() + ": "
			}
			return fmt.Errorf("%stool_patterns.%s.regexp: %w", at, name, err)
		}
		fast, _ := shiftand.Compile(t.ToolPatterns[name].Regexp)
		t.patterns = append(t.patterns, toolPattern{re, fast})
	}
	return nil
}

// MatchesNothing reports whether a matcher listing names matches no tool
// of t's harness: names are native, and a hook written for another
// harness's tools (Claude Code's Bash on Gemini CLI) would never run here.
// An empty list matches every covered call.
func (t *Table) MatchesNothing(names []string) bool {
	return len(names) > 0 && !slices.ContainsFunc(names, t.KnowsTool)
}

// UnboundFields returns those of fields, bound by a hook on (subject,
// phase), that the row's native event has no payload key for: the harness
// never gives them there. actor.kind and actor.id are always given, since
// dispatch derives them (main, or the subagent the payload's actor key
// names). An unsupported row has no event, and so nothing to report.
func (t *Table) UnboundFields(subject, phase string, fields []string) []string {
	ev, ok := t.NativeEvent(subject, phase)
	if !ok {
		return nil
	}
	var out []string
	for _, f := range fields {
		if _, ok := t.Events[ev].Payload.Fields[f]; !ok && f != "actor.kind" && f != "actor.id" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// ToolNames lists the native tool names and tool-name families, sorted.
func (t *Table) ToolNames() []string {
	names := make([]string, 0, len(t.Tools)+len(t.ToolPatterns))
	for n := range t.Tools {
		names = append(names, n)
	}
	sort.Strings(names)
	pats := make([]string, 0, len(t.ToolPatterns))
	for n := range t.ToolPatterns {
		pats = append(pats, n)
	}
	sort.Strings(pats)
	return append(names, pats...)
}

// TimeoutClampMS returns the harness's maximum timeout for a native event.
func (t *Table) TimeoutClampMS(event string) (int, bool) {
	c, ok := t.Timeout.Clamps[event]
	return c.MaxMS, ok
}

// NativeTimeout converts a timeout in milliseconds to the native unit,
// rounding up so that a handler never gets less than it declared.
func (t *Table) NativeTimeout(ms int) int {
	if t.Timeout.Unit == "seconds" {
		return (ms + 999) / 1000
	}
	return ms
}

// ConfigHome returns the configuration home: $Env if set, else Default
// under $HOME. getenv is os.Getenv or a test's environment.
func (t *Table) ConfigHome(getenv func(string) string) (string, error) {
	if d := getenv(t.Config.Home.Env); d != "" {
		return filepath.Join(d, filepath.FromSlash(t.Config.Home.Within)), nil
	}
	home := getenv("HOME")
	if home == "" {
		return "", fmt.Errorf("%s: neither %s nor HOME is set", t.Key(), t.Config.Home.Env)
	}
	return filepath.Join(home, filepath.FromSlash(t.Config.Home.Default)), nil
}

// Path resolves a location of this table to a path on this machine.
func (t *Table) Path(l Location, getenv func(string) string) (string, error) {
	if l.Env != "" {
		if p := getenv(l.Env); p != "" {
			return p, nil
		}
	}
	var root string
	switch l.Root {
	case "home":
		if root = getenv("HOME"); root == "" {
			return "", fmt.Errorf("%s: HOME is not set", t.Key())
		}
	case "system":
		root = string(filepath.Separator)
	case "project":
		if t.project == "" {
			return "", fmt.Errorf("%s: %s is a project's, not the user's", t.Key(), l.Path)
		}
		root = t.project
	default:
		var err error
		if root, err = t.ConfigHome(getenv); err != nil {
			return "", err
		}
	}
	return filepath.Join(root, filepath.FromSlash(l.Path)), nil
}

// ErrNoProjectScope says a table states no project scope.
var ErrNoProjectScope = fmt.Errorf("its table states no project scope")

// InProject returns the table as it installs into the project at dir (an
// absolute path): its hooks file, skills and agents are the project's
// (Config.Project), and every "project" location resolves below dir. The
// rest (events, outputs, the user's own settings that switch hooks off,
// the harness's review of each hook) is the table's. An error says why
// the harness has no project scope.
func (t *Table) InProject(dir string) (*Table, error) {
	p := t.Config.Project
	if p == nil {
		return nil, fmt.Errorf("%s: %w", t.Key(), ErrNoProjectScope)
	}
	if p.Status != Supported {
		return nil, fmt.Errorf("%s has no project scope dalo installs into: %s", t.Key(), p.Reason)
	}
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("%s: project directory %s is not absolute", t.Key(), dir)
	}
	c := *t
	c.project = filepath.Clean(dir)
	c.Config.Hooks.Location = p.Hooks.Location
	c.Config.Skills = p.Skills
	if p.Agents != nil {
		l := *p.Agents
		c.Config.Agents = Agents{Status: Supported, Location: &l, Evidence: l.Evidence}
	} else if c.Config.Agents.Status == Supported {
		c.Config.Agents = Agents{Status: Unsupported, Reason: "its table names no project directory of agents", Evidence: p.Evidence}
	}
	// Config.Trust stays the table's: it is the harness's review of each
	// hook (Codex's trusted_hash), which install and doctor check, not the
	// folder trust of p.Trust, which dalo only reports.
	return &c, nil
}

// ProjectDir is the project the table installs into (InProject), or "".
func (t *Table) ProjectDir() string { return t.project }

// Display writes a location as a user reads it: $CLAUDE_CONFIG_DIR/skills/<name>/SKILL.md.
func (t *Table) Display(l Location) string {
	root := "~"
	switch l.Root {
	case "config_home":
		root = "$" + t.Config.Home.Env
		if t.Config.Home.Within != "" {
			root += "/" + t.Config.Home.Within
		}
	case "system":
		root = ""
	case "project":
		root = "<project>"
	}
	s := root + "/" + l.Path
	if l.Layout != "" {
		s += "/" + l.Layout
	}
	return s
}

// SkillDirs returns the directories the harness reads skills from
// (<dir>/<name>/SKILL.md), the first being where dalo installs.
func (t *Table) SkillDirs(getenv func(string) string) ([]string, error) {
	var dirs []string
	for _, l := range t.Config.Skills {
		d, err := t.Path(l, getenv)
		if err != nil {
			return nil, err
		}
		dirs = append(dirs, d)
	}
	return dirs, nil
}

// AgentFile returns the file the harness reads the subagent name from:
// the agents directory joined with its layout, <name> replaced (a file
// name the schema requires); ok is false when the harness has no
// subagents.
func (t *Table) AgentFile(name string, getenv func(string) string) (file string, ok bool, err error) {
	l := t.Config.Agents.Location
	if t.Config.Agents.Status != Supported || l == nil {
		return "", false, nil
	}
	d, err := t.Path(*l, getenv)
	if err != nil {
		return "", false, err
	}
	return filepath.Join(d, strings.Replace(l.Layout, "<name>", name, 1)), true, nil
}
