package claudeplugin

import (
	"encoding/json"
	"fmt"
	"math"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"unicode"

	"dalo/engine"
	"dalo/internal/lazyregexp"
	"dalo/internal/termtext"
	"dalo/plan"
	"dalo/providers"
	"dalo/scaffold"
)

// Options configure Convert.
type Options struct {
	Rules *engine.Rules // the layout of a source and the limits
	// Claude is the Claude Code provider table whose rows the hooks take:
	// the newest one.
	Claude *providers.Table
	// Targets are the newest tables of the other harnesses a package may
	// be installed on: an agent member is optional where one of them
	// cannot install agents, so that it does not block the package there.
	Targets []*providers.Table
}

// NewOptions returns the options of an import with the embedded rules and
// provider tables: the newest table of each harness.
func NewOptions(r *engine.Rules, ts *providers.Tables) (Options, error) {
	claude, ok := ts.Newest("claude")
	if !ok {
		return Options{}, fmt.Errorf("no Claude Code provider table")
	}
	opt := Options{Rules: r, Claude: claude}
	seen := map[string]bool{}
	for _, t := range ts.All() {
		if !seen[t.Name] {
			seen[t.Name] = true
			if n, _ := ts.Newest(t.Name); n != nil {
				opt.Targets = append(opt.Targets, n)
			}
		}
	}
	return opt, nil
}

// A Report says what Convert made of a plugin and what it could not.
type Report struct {
	Plugin      string    `json:"plugin"`  // the plugin's name, from plugin.json or its directory
	Package     string    `json:"package"` // the portable package's name
	Table       string    `json:"table"`   // the provider table the rows come from: claude@2.1.233
	Wrote       []Written `json:"wrote"`   // what the import adds to the source
	Members     []Member  `json:"members"`
	Hooks       []Hook    `json:"hooks"`
	NotImported []Item    `json:"not_imported"` // what does not map, and why
	Notes       []string  `json:"notes"`        // what maps with a difference
	// Widen is what dalo cannot tell of what the tools need, for the
	// author to widen a tool by hand (each hook has its own, too).
	Widen []string `json:"widen"`
}

// Written is one item added to the source: a directory (with the number
// of files in it) or a file.
type Written struct {
	Path  string `json:"path"`
	Dir   bool   `json:"dir"`
	Files int    `json:"files"`
}

// A Member is a skill or agent of the plugin, now a member of the package.
type Member struct {
	Ref         string `json:"ref"`
	Requirement string `json:"requirement"`
	From        string `json:"from"` // its path in the plugin
}

// A Hook is a command hook of the plugin, now a tool and a hook.
type Hook struct {
	ID            string   `json:"id"`   // of both the tool and the hook
	From          string   `json:"from"` // hooks/hooks.json PreToolUse[0].hooks[0]
	Command       string   `json:"command"`
	Event         string   `json:"event"`
	Subject       string   `json:"subject"`
	Phase         string   `json:"phase"`
	Effect        string   `json:"effect"`
	Requirement   string   `json:"requirement"`
	FailurePolicy string   `json:"failure_policy"`
	TimeoutMS     int      `json:"timeout_ms"`
	ToolNames     []string `json:"tool_names,omitempty"` // the matcher's tool names
	Filter        string   `json:"filter,omitempty"`     // a matcher the adapter applies as an extended regular expression
	Notes         []string `json:"notes,omitempty"`      // what maps with a difference
	// What its tool is given, the least dalo can read that it needs:
	// the plugin's files its command names and the files they name in
	// turn (beside the command file and the adapter), the capabilities
	// and environment variables, each with where dalo read it.
	Files        []string `json:"files"`
	Capabilities []Claim  `json:"capabilities"`
	Env          []Claim  `json:"env"`
	// Widen is what dalo cannot tell of what the tool needs: the author
	// widens the tool by hand.
	Widen []string `json:"widen,omitempty"`
}

// An Item is something of the plugin that was not imported, and why.
type Item struct {
	What string `json:"what"`
	Why  string `json:"why"`
}

// Requirement and FailurePolicy of every imported hook. Required: a
// harness that cannot run it blocks the package there, rather than leaving
// it out. Report: Claude Code lets the action proceed when a hook command
// fails or times out, and so does report; what blocks natively (exit 2, a
// deny) is a result the adapter maps, not a failure.
const (
	Requirement   = plan.RequirementRequired
	FailurePolicy = plan.PolicyReport
)

// blockingKinds are the portable result kinds that a blocking answer of a
// Claude Code hook (exit 2, decision "block", a deny) becomes, in the order
// claude-hook.sh maps it: a deny where the event can deny, a continuation
// where it can continue the workflow, context where the model reads the
// answer, an observation where nothing reads it. A hook takes the first
// effect of its row that answers one of them, in this order: never an
// effect that cannot block where the row has one that can.
var blockingKinds = []string{plan.KindDeny, plan.KindContinueWorkflow, plan.KindAddContext, plan.KindObserve}

// effectFor returns the effect a hook on row takes.
func effectFor(row providers.Row) string {
	effects := make([]string, 0, len(row.Effects))
	for e := range row.Effects {
		effects = append(effects, e)
	}
	sort.Strings(effects)
	for _, k := range blockingKinds {
		for _, e := range effects {
			if ef := row.Effects[e]; ef.Status == providers.Supported {
				if _, ok := ef.Outputs[k]; ok {
					return e
				}
			}
		}
	}
	return ""
}

// defaultTimeoutMS is Claude Code's timeout of a command hook that sets
// none: ten minutes (read from 2.1.233's hook runner).
const defaultTimeoutMS = 600000

// metadata are plugin.json fields that describe the plugin without doing
// anything: listed together as not carried.
var metadata = []string{"$schema", "author", "homepage", "repository", "license", "keywords", "displayName", "metadata"}

// notMapped says why a component of a plugin has no portable form, by its
// plugin.json field; its default location, if any, is in defaultDirs.
var notMapped = map[string]string{
	"commands":     "slash commands: draft 0.1 has no member kind for commands",
	"mcpServers":   "MCP servers: outside draft 0.1",
	"lspServers":   "language servers: outside draft 0.1",
	"outputStyles": "output styles: draft 0.1 has no form for them",
	"themes":       "themes: draft 0.1 has no form for them",
	"monitors":     "monitors: draft 0.1 has no form for them",
	"workflows":    "workflows: draft 0.1 has no form for them",
	"channels":     "channels (MCP servers): outside draft 0.1",
	"userConfig":   "user configuration prompted at enable time: draft 0.1 has no form for it",
	"dependencies": "plugin dependencies: a package requires packages of a source (plugin.requires), not plugins of a marketplace",
	"settings":     "settings Claude Code applies with the plugin: draft 0.1 has no form for them",
}

// defaultPaths are where Claude Code finds the components of notMapped
// when plugin.json does not say.
var defaultPaths = map[string]string{
	"commands":     "commands",
	"mcpServers":   ".mcp.json",
	"lspServers":   ".lsp.json",
	"outputStyles": "output-styles",
	"themes":       "themes",
	"monitors":     "monitors",
	"workflows":    "workflows",
	"settings":     "settings.json",
}

// converter holds one conversion.
type converter struct {
	p       *plugin
	opt     Options
	rep     *Report
	tree    *scaffold.Tree
	claimed map[string]bool // plugin files accounted for
	member  map[string]bool // plugin files a member took
	copied  map[string]bool // paths in the source written
	pkgDir  string
	// written counts the files of each item added to the source.
	written map[string]int
	order   []string
}

// Convert reads the Claude Code plugin in dir and returns the files of the
// portable package it becomes, with members and hooks, and the report of
// what mapped and what did not. It writes nothing; the caller stages the
// tree in a source, validates it there and commits it.
func Convert(dir string, opt Options) (*scaffold.Tree, *Report, error) {
	lim := opt.Rules.Limits
	p, err := readPlugin(dir, lim)
	if err != nil {
		return nil, nil, err
	}
	c := &converter{p: p, opt: opt, rep: &Report{Table: opt.Claude.Key()}, tree: &scaffold.Tree{}, claimed: map[string]bool{}, member: map[string]bool{}, copied: map[string]bool{}, written: map[string]int{}}
	c.rep.Members, c.rep.Hooks, c.rep.NotImported, c.rep.Notes, c.rep.Widen = []Member{}, []Hook{}, []Item{}, []string{}, []string{}
	c.rep.NotImported = append(c.rep.NotImported, p.unread...)

	man := &object{values: map[string]json.RawMessage{}}
	const manifestPath = ".claude-plugin/plugin.json"
	if !p.has(manifestPath) && p.has(".claude-plugin/marketplace.json") {
		return nil, nil, fmt.Errorf("%s is a plugin marketplace, not a plugin: import one of its plugins (the directories its .claude-plugin/marketplace.json lists)", dir)
	}
	if !p.has(manifestPath) && !p.hasComponent() {
		return nil, nil, notPlugin(dir, p)
	}
	if p.has(manifestPath) {
		if man, err = p.readObject(manifestPath); err != nil {
			return nil, nil, err
		}
		c.claimed[manifestPath] = true
	}
	name, ok := man.str("name")
	if !ok || strings.TrimSpace(name) == "" {
		name = filepath.Base(filepath.Clean(dir))
		c.note("the plugin has no name in %s: the package takes its directory's, %s", manifestPath, name)
	}
	c.rep.Plugin = name
	c.rep.Package = packageName(name)
	if c.rep.Package == "" {
		return nil, nil, fmt.Errorf("the plugin's name %q has no letter or digit to make a package name of", name)
	}
	if c.rep.Package != name {
		c.note("the package is named %s: %q is no package name (lowercase letters and digits in words joined by hyphens)", c.rep.Package, name)
	}
	c.pkgDir = opt.Rules.Layout.Dir("plugin", c.rep.Package)
	desc, _ := man.str("description")
	if strings.TrimSpace(desc) == "" {
		desc = "Imported from the Claude Code plugin " + name + "."
		c.note("the plugin has no description: the manifest says %q", desc)
	}
	version, _ := man.str("version")

	var unknown, meta []string
	for _, k := range man.keys {
		switch {
		case k == "name" || k == "description" || k == "version" || k == "skills" || k == "agents" || k == "hooks":
		case slices.Contains(metadata, k):
			meta = append(meta, k)
		case notMapped[k] != "":
		default:
			unknown = append(unknown, k)
		}
	}
	if len(meta) > 0 {
		c.skip(manifestPath+" "+strings.Join(meta, ", "), "metadata PLUGIN.toml has no field for")
	}
	for _, k := range unknown {
		c.skip(manifestPath+" "+k, "a field draft 0.1 has no form for")
	}
	for f := range p.files {
		if strings.HasPrefix(f, ".claude-plugin/") && !c.claimed[f] {
			c.skip(f, "marketplace and plugin metadata of Claude Code")
		}
	}

	members := c.skills(man)
	members = append(members, c.agents(man)...)
	c.rep.Members = append(c.rep.Members, members...)
	c.components(man)
	handlers, err := c.hookConfigs(man)
	if err != nil {
		return nil, nil, err
	}
	var hooks []*hookOut
	ids := map[string]int{}
	for _, h := range handlers {
		if out := c.hook(h, ids); out != nil {
			hooks = append(hooks, out)
		}
	}
	c.rest(hooks)
	for _, h := range hooks {
		c.rep.Hooks = append(c.rep.Hooks, h.Hook)
	}

	var m strings.Builder
	writeManifest(&m, c.rep, name, desc, version, members, hooks)
	c.add(c.pkgDir+"/"+opt.Rules.Layout.File("plugin"), []byte(m.String()), false)
	if len(hooks) > 0 {
		c.add(c.pkgDir+"/"+AdapterFile, Adapter(lim.ResultTextBytes), true)
	}
	for _, it := range c.order {
		dir := slices.ContainsFunc(c.tree.Files(), func(f scaffold.File) bool { return strings.HasPrefix(f.Path, it+"/") })
		c.rep.Wrote = append(c.rep.Wrote, Written{Path: it, Dir: dir, Files: c.written[it]})
	}
	sort.Slice(c.rep.NotImported, func(i, j int) bool { return c.rep.NotImported[i].What < c.rep.NotImported[j].What })
	return c.tree, c.rep, nil
}

func (c *converter) note(format string, args ...any) {
	c.rep.Notes = append(c.rep.Notes, fmt.Sprintf(format, args...))
}

func (c *converter) skip(what, why string) {
	c.rep.NotImported = append(c.rep.NotImported, Item{What: what, Why: why})
}

// add adds a file to the tree and counts it under its item.
func (c *converter) add(p string, data []byte, exec bool) {
	c.tree.Add(p, data, exec)
	parts := strings.SplitN(p, "/", 3)
	it := parts[0]
	if len(parts) > 1 {
		it += "/" + parts[1]
	}
	if _, ok := c.written[it]; !ok {
		c.order = append(c.order, it)
	}
	c.written[it]++
}

// copyFile copies the plugin's file rel to dst in the source, once.
func (c *converter) copyFile(rel, dst string) error {
	c.claimed[rel] = true
	if c.copied[dst] {
		return nil
	}
	b, err := c.p.read(rel, c.opt.Rules.Limits.FileBytes)
	if err != nil {
		return err
	}
	c.add(dst, b, c.p.exec[rel])
	c.copied[dst] = true
	return nil
}

var nonName = lazyregexp.New(`[^a-z0-9]+`)

// packageName makes a package name of a plugin's name: lowercase letters
// and digits in words joined by single hyphens.
func packageName(name string) string {
	return strings.Trim(nonName.ReplaceAllString(strings.ToLower(name), "-"), "-")
}

// skills maps the plugin's skill directories onto skill members: those
// of skills/ and those plugin.json names.
func (c *converter) skills(man *object) []Member {
	var dirs []string
	for d := range c.p.dirs {
		if path.Dir(d) == "skills" {
			dirs = append(dirs, d)
		}
	}
	sort.Strings(dirs)
	if v, ok := man.values["skills"]; ok {
		ps, err := paths(v)
		if err != nil {
			c.skip(".claude-plugin/plugin.json skills", "it "+err.Error())
		}
		for _, p := range ps {
			if !slices.Contains(dirs, p) {
				dirs = append(dirs, p)
			}
		}
	}
	var out []Member
	seen := map[string]string{}
	for _, d := range dirs {
		skill := path.Join(d, "SKILL.md")
		switch {
		case d == ".":
			c.skip("SKILL.md", "the plugin root as a skill: a skill member is a directory of its own")
			continue
		case strings.HasPrefix(d, "../"):
			c.skip(d, "a skill outside the plugin")
			continue
		case !c.has(skill):
			if c.p.dirs[d] {
				// A directory under skills/ without SKILL.md: its
				// files are listed with the rest.
				continue
			}
			c.skip(d, "plugin.json names it as a skill, but the plugin has no "+skill)
			continue
		}
		sel := path.Base(d)
		if b, err := c.p.head(skill, c.opt.Rules.Limits.FrontMatterBytes+len("---\n")); err == nil {
			// Claude Code knows a skill by the name in its front
			// matter; the Agent Skills format puts it in a directory of
			// that name.
			if n := frontMatterName(b); n != "" && n != sel && packageName(n) == n {
				c.note("the skill %s is named %s in its front matter: it is skills/%s in the source", d, n, n)
				sel = n
			}
		}
		if prev, dup := seen[sel]; dup {
			c.skip(d, "a skill named "+sel+" is imported already, from "+prev)
			continue
		}
		seen[sel] = d
		ref := "skill:" + sel
		for _, f := range c.p.under(d) {
			if err := c.copyFile(f, c.opt.Rules.Layout.Dir("skill", sel)+"/"+strings.TrimPrefix(f, d+"/")); err != nil {
				c.skip(f, err.Error())
			}
			c.member[f] = true
		}
		out = append(out, Member{Ref: ref, Requirement: Requirement, From: d})
	}
	return out
}

// frontMatterName returns the name: of a Markdown file's YAML front
// matter when it is written plainly on one line, or "".
func frontMatterName(b []byte) string {
	lines := strings.Split(string(b), "\n")
	if len(lines) == 0 || strings.TrimSpace(lines[0]) != "---" {
		return ""
	}
	for _, l := range lines[1:] {
		l = strings.TrimRight(l, "\r")
		if l == "---" {
			break
		}
		if v, ok := strings.CutPrefix(l, "name:"); ok {
			return strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	return ""
}

func (c *converter) has(rel string) bool { return c.p.has(rel) }

// agents maps the plugin's agent files onto agent members: those
// plugin.json names, or else those of agents/.
func (c *converter) agents(man *object) []Member {
	var files []string
	if v, ok := man.values["agents"]; ok {
		ps, err := paths(v)
		if err != nil {
			c.skip(".claude-plugin/plugin.json agents", "it "+err.Error())
		}
		for _, p := range ps {
			if c.p.dirs[p] {
				files = append(files, c.p.under(p)...)
			} else {
				files = append(files, p)
			}
		}
	} else {
		for _, f := range c.p.under("agents") {
			if path.Dir(f) == "agents" {
				files = append(files, f)
			}
		}
	}
	var out []Member
	seen := map[string]string{}
	for _, f := range files {
		sel := strings.TrimSuffix(path.Base(f), ".md")
		switch {
		case !strings.HasSuffix(f, ".md"):
			if !c.claimed[f] && c.has(f) {
				c.skip(f, "not an agent: an agent is a Markdown file")
				c.claimed[f] = true
			}
			continue
		case !c.has(f):
			c.skip(f, "plugin.json names it as an agent, but the plugin has no such file")
			continue
		case seen[sel] != "":
			c.skip(f, "an agent named "+sel+" is imported already, from "+seen[sel])
			c.claimed[f] = true
			continue
		}
		seen[sel] = f
		if err := c.copyFile(f, c.opt.Rules.Layout.Path("agent", sel)); err != nil {
			c.skip(f, err.Error())
			continue
		}
		c.member[f] = true
		out = append(out, Member{Ref: "agent:" + sel, Requirement: c.agentRequirement(), From: f})
	}
	return out
}

// agentRequirement is required, unless a harness a package may be
// installed on cannot install agents: a required agent would block the
// whole package there, where an optional one is left out, visibly.
func (c *converter) agentRequirement() string {
	for _, t := range c.opt.Targets {
		if t.Config.Agents.Status != providers.Supported {
			n := fmt.Sprintf("agent members are optional: %s cannot install agents, and a required one would block the whole package there ('dalo plugin review' says why)", t.Key())
			if !slices.Contains(c.rep.Notes, n) {
				c.note("%s", n)
			}
			return plan.RequirementOptional
		}
	}
	return Requirement
}

// components lists the plugin's components that have no portable form:
// what plugin.json names for them, else their default locations.
func (c *converter) components(man *object) {
	keys := make([]string, 0, len(notMapped))
	for k := range notMapped {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var locs []string
		if v, ok := man.values[k]; ok {
			if ps, err := paths(v); err == nil {
				locs = ps
			} else {
				c.skip(".claude-plugin/plugin.json "+k, notMapped[k])
			}
		}
		if d, ok := defaultPaths[k]; ok && (k != "commands" || len(locs) == 0) {
			locs = append(locs, d)
		}
		for _, l := range locs {
			files := c.p.under(l)
			if c.has(l) {
				files = []string{l}
			}
			for _, f := range files {
				if !c.claimed[f] {
					c.skip(f, notMapped[k])
					c.claimed[f] = true
				}
			}
		}
	}
}

// A handler is one hook handler of the plugin's hook configuration.
type handler struct {
	from    string // hooks/hooks.json PreToolUse[0].hooks[1]
	event   string
	matcher string
	obj     *object
}

// hookConfigs reads the hook configurations, hooks/hooks.json and what
// plugin.json holds or names, into their handlers, in the order written.
func (c *converter) hookConfigs(man *object) ([]handler, error) {
	type config struct {
		from string
		obj  *object
	}
	var configs []config
	if c.has("hooks/hooks.json") {
		o, err := c.p.readObject("hooks/hooks.json")
		if err != nil {
			return nil, err
		}
		c.claimed["hooks/hooks.json"] = true
		configs = append(configs, config{"hooks/hooks.json", o})
	}
	if v, ok := man.values["hooks"]; ok {
		if _, err := decodeObject(v); err == nil {
			// Inline, as in settings.json: the events themselves.
			configs = append(configs, config{".claude-plugin/plugin.json hooks", &object{keys: []string{"hooks"}, values: map[string]json.RawMessage{"hooks": v}}})
		} else if ps, err := paths(v); err == nil {
			for _, p := range ps {
				if c.claimed[p] {
					continue
				}
				o, err := c.p.readObject(p)
				if err != nil {
					c.skip(p, "plugin.json names it as hooks, but it cannot be read: "+err.Error())
					continue
				}
				c.claimed[p] = true
				configs = append(configs, config{p, o})
			}
		} else {
			c.skip(".claude-plugin/plugin.json hooks", "neither hooks nor a path to them")
		}
	}
	var out []handler
	for _, cf := range configs {
		for _, k := range cf.obj.keys {
			if k != "hooks" {
				c.skip(cf.from+" "+k, "a field of the hook configuration with no portable form")
			}
		}
		events, err := decodeObject(cf.obj.values["hooks"])
		if err != nil {
			c.skip(cf.from, "its hooks are not an object of events: "+err.Error())
			continue
		}
		for _, ev := range events.keys {
			var groups []json.RawMessage
			if err := json.Unmarshal(events.values[ev], &groups); err != nil {
				c.skip(cf.from+" "+ev, "not a list of matcher groups")
				continue
			}
			for gi, g := range groups {
				at := fmt.Sprintf("%s %s[%d]", cf.from, ev, gi)
				grp, err := decodeObject(g)
				if err != nil {
					c.skip(at, "not a matcher group: "+err.Error())
					continue
				}
				matcher, _ := grp.str("matcher")
				for _, k := range grp.keys {
					if k != "matcher" && k != "hooks" {
						c.skip(at+" "+k, "a field of a matcher group with no portable form")
					}
				}
				var hs []json.RawMessage
				if err := json.Unmarshal(grp.values["hooks"], &hs); err != nil {
					c.skip(at, "its hooks are not a list")
					continue
				}
				for hi, h := range hs {
					from := fmt.Sprintf("%s.hooks[%d]", at, hi)
					o, err := decodeObject(h)
					if err != nil {
						c.skip(from, "not a hook: "+err.Error())
						continue
					}
					out = append(out, handler{from: from, event: ev, matcher: matcher, obj: o})
				}
			}
		}
	}
	return out, nil
}

// A hookOut is an imported hook with what its tool needs.
type hookOut struct {
	Hook
	commandFile string
	args        []string // the exec form's arguments, with exec set
	exec        bool
	refs        []string // plugin files its command names under CLAUDE_PLUGIN_ROOT
	files       []string // the tool's files, set by rest: the command file first
}

// handlerFields are the fields of a command hook handler and what import
// does with them; a field not here is listed as not carried.
var handlerFields = map[string]bool{"type": true, "command": true, "args": true, "timeout": true, "shell": true, "if": true, "once": true, "statusMessage": true, "async": true, "asyncRewake": true, "rewakeMessage": true, "rewakeSummary": true}

var (
	rootRef   = lazyregexp.New(`\$\{CLAUDE_PLUGIN_ROOT\}|\$CLAUDE_PLUGIN_ROOT\b`)
	rootPath  = lazyregexp.New(`^/[^\s"'` + "`" + `;|&<>()$]*`)
	claudeVar = lazyregexp.New(`\$\{?(CLAUDE_[A-Z0-9_]+)|\$\{user_config\.`)
	// plainNames is a matcher Claude Code compares as exact tool names.
	plainNames = lazyregexp.New(`^[A-Za-z0-9_]+(\|[A-Za-z0-9_]+)*$`)
)

// hook maps one handler onto a tool and a hook, or lists why not.
func (c *converter) hook(h handler, ids map[string]int) *hookOut {
	typ, _ := h.obj.str("type")
	if typ != "command" {
		why := "a hook of type " + typ + ": only command hooks run a program dalo can approve"
		switch typ {
		case "prompt":
			why = "a prompt hook: it asks a model, which the draft has no form for"
		case "agent":
			why = "an agent hook: it runs a subagent, which the draft has no form for"
		case "http":
			why = "an HTTP hook: it posts to a URL, which the draft has no form for"
		case "mcp_tool":
			why = "an MCP tool hook: MCP is outside draft 0.1"
		}
		c.skip(h.from, why)
		return nil
	}
	command, ok := h.obj.str("command")
	if !ok || strings.TrimSpace(command) == "" {
		c.skip(h.from, "a command hook without a command")
		return nil
	}
	subject, phase, ok := c.opt.Claude.RowOf(h.event)
	if !ok {
		c.skip(h.from, fmt.Sprintf("event %s has no row in draft 0.1 (%s)", h.event, c.opt.Claude.Key()))
		return nil
	}
	row, _ := c.opt.Claude.Row(subject, phase)
	effect := effectFor(row)
	if effect == "" {
		c.skip(h.from, fmt.Sprintf("no effect of %s/%s is supported on %s", subject, phase, c.opt.Claude.Key()))
		return nil
	}
	for _, k := range []string{"async", "asyncRewake"} {
		var b bool
		if json.Unmarshal(h.obj.values[k], &b) == nil && b {
			c.skip(h.from, "it runs in the background ("+k+"), which the draft has no form for: dalo waits for a hook's answer")
			return nil
		}
	}
	if sh, _ := h.obj.str("shell"); sh != "" && sh != "bash" {
		c.skip(h.from, "it runs under "+sh+"; the adapter runs bash or sh")
		return nil
	}
	out := &hookOut{Hook: Hook{From: h.from, Command: command, Event: h.event, Subject: subject, Phase: phase, Effect: effect, Requirement: Requirement, FailurePolicy: FailurePolicy}}
	if ctx, ok := row.Effects[plan.EffectAddContext]; ok && effect != plan.EffectAddContext && ctx.Status == providers.Supported {
		out.Notes = append(out.Notes, fmt.Sprintf("it takes effect %s, so that its blocking answers still block; context it adds (%s) cannot reach the model under it, and the adapter drops it: if the hook only adds context, make its effect add_context", effect, contextAnswers(h.event)))
	}
	if v, ok := h.obj.values["args"]; ok {
		if err := json.Unmarshal(v, &out.args); err != nil {
			c.skip(h.from, "its args are not a list of strings")
			return nil
		}
		out.exec = true
	}
	for _, s := range append([]string{command}, out.args...) {
		for _, rel := range rootRefs(s) {
			switch {
			case rel == ".." || strings.HasPrefix(rel, "../"):
				c.skip(h.from, "its command uses ${CLAUDE_PLUGIN_ROOT}/"+rel+", outside the plugin")
				return nil
			case rel == ".":
			case c.has(rel):
				out.refs = append(out.refs, rel)
			case c.p.dirs[rel]:
				out.refs = append(out.refs, c.p.under(rel)...)
			default:
				out.Notes = append(out.Notes, "its command uses ${CLAUDE_PLUGIN_ROOT}/"+rel+", which the plugin does not hold")
			}
		}
		for _, m := range claudeVar.FindAllStringSubmatch(s, -1) {
			if v := m[1]; v != "CLAUDE_PLUGIN_ROOT" && v != "CLAUDE_PROJECT_DIR" {
				n := "its command reads " + v + ", which dalo does not set"
				if v == "" {
					n = "its command uses ${user_config.*}, which dalo does not set"
				}
				if !slices.Contains(out.Notes, n) {
					out.Notes = append(out.Notes, n)
				}
			}
		}
	}
	if out.TimeoutMS = c.timeout(h, out); out.TimeoutMS == 0 {
		return nil
	}
	if !c.matcher(h, out) {
		return nil
	}
	for _, k := range h.obj.keys {
		switch {
		case k == "if":
			cond, _ := h.obj.str("if")
			out.Notes = append(out.Notes, fmt.Sprintf("its condition if %q is not applied: the hook runs for every call its matcher covers", cond))
		case k == "once":
			out.Notes = append(out.Notes, "once is not applied: the hook runs every time")
		case k == "statusMessage" || k == "rewakeMessage" || k == "rewakeSummary":
			out.Notes = append(out.Notes, k+" is not shown: the draft has no form for it")
		case !handlerFields[k]:
			out.Notes = append(out.Notes, "its field "+k+" is not carried: the draft has no form for it")
		}
	}
	base := kebab(h.event)
	ids[base]++
	out.ID = base
	if ids[base] > 1 {
		out.ID = fmt.Sprintf("%s-%d", base, ids[base])
	}
	out.commandFile = "claude-hooks/" + out.ID + ".sh"
	return out
}

// contextAnswers names the answers by which a Claude Code hook on event
// adds context: plain stdout reaches the model on SessionStart and
// UserPromptSubmit only (claude-hook.sh maps them the same way).
func contextAnswers(event string) string {
	if event == "SessionStart" || event == "UserPromptSubmit" {
		return "its plain output, additionalContext"
	}
	return "additionalContext"
}

// timeout converts the handler's timeout to milliseconds within the
// draft's range, or lists the hook and returns 0.
func (c *converter) timeout(h handler, out *hookOut) int {
	lim := c.opt.Rules.Limits
	ms := defaultTimeoutMS
	if v, ok := h.obj.values["timeout"]; ok {
		var s float64
		if err := json.Unmarshal(v, &s); err != nil || s <= 0 {
			c.skip(h.from, "its timeout is not a positive number of seconds")
			return 0
		}
		ms = int(math.Min(math.Ceil(s*1000), math.MaxInt32))
	}
	switch {
	case ms > lim.TimeoutMaxMS:
		what := fmt.Sprintf("its timeout, %s,", seconds(ms))
		if _, ok := h.obj.values["timeout"]; !ok {
			what = fmt.Sprintf("it sets no timeout, and Claude Code's default, %s,", seconds(ms))
		}
		out.Notes = append(out.Notes, fmt.Sprintf("%s is over the draft's range of %d to %d ms: it gets %d ms", what, lim.TimeoutMinMS, lim.TimeoutMaxMS, lim.TimeoutMaxMS))
		ms = lim.TimeoutMaxMS
	case ms < lim.TimeoutMinMS:
		out.Notes = append(out.Notes, fmt.Sprintf("its timeout, %d ms, is under the draft's range of %d to %d ms: it gets %d ms", ms, lim.TimeoutMinMS, lim.TimeoutMaxMS, lim.TimeoutMinMS))
		ms = lim.TimeoutMinMS
	}
	return ms
}

func seconds(ms int) string {
	if ms%60000 == 0 {
		if ms == 60000 {
			return "1 minute"
		}
		return fmt.Sprintf("%d minutes", ms/60000)
	}
	return fmt.Sprintf("%g s", float64(ms)/1000)
}

// matcher maps the handler's matcher: on an event of tool calls, a plain
// alternation of names becomes tool_names, "" and "*" every call, and any
// other regular expression a filter the adapter applies to the tool's
// name. Elsewhere Claude Code matches other fields the draft cannot bind:
// the hook runs on every event, as the note says.
func (c *converter) matcher(h handler, out *hookOut) bool {
	m := h.matcher
	if m == "" || m == "*" {
		return true
	}
	if !c.opt.Claude.Events[h.event].ToolMatcher {
		out.Notes = append(out.Notes, fmt.Sprintf("its matcher %q is not applied: on %s it filters what draft 0.1 cannot bind, so the hook runs on every %s", m, h.event, h.event))
		return true
	}
	if plainNames.MatchString(m) {
		for _, n := range strings.Split(m, "|") {
			if !slices.Contains(out.ToolNames, n) {
				out.ToolNames = append(out.ToolNames, n)
			}
		}
		return true
	}
	if strings.Contains(m, "${") {
		c.skip(h.from, fmt.Sprintf("its matcher %q is a regular expression holding ${, which cannot be an argument", m))
		return false
	}
	out.Filter = m
	out.Notes = append(out.Notes, fmt.Sprintf("its matcher %q is a regular expression, not a list of tool names: the hook covers every tool call and the adapter runs the command for a tool name that grep -E matches with it (check that it means the same as in JavaScript)", m))
	return true
}

// kebab writes an event name in lowercase words joined by hyphens:
// PreToolUse → pre-tool-use.
func kebab(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) && i > 0 {
			b.WriteByte('-')
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return packageName(b.String())
}

// docs are the names of files that document or license a plugin: copied
// into the package always, run by no hook.
var docs = lazyregexp.New(`(?i)^(readme|license|licence|notice|copying|changelog)(\.[a-z0-9]+)?$`)

// rest places the plugin's files that no member took. Each hook's tool
// gets the files reach finds it needs, copied into the package (from a
// member's directory too), and the capabilities and variables their text
// shows. With hooks, the plugin's other files that are not hidden are
// copied as well, given to no tool, for an author who widens a tool by
// hand; without hooks only the documents and licences are. Hidden files
// are listed.
func (c *converter) rest(hooks []*hookOut) {
	generated := func(f string) bool {
		return f == AdapterFile || f == c.opt.Rules.Layout.File("plugin") || strings.HasPrefix(f, "claude-hooks/")
	}
	hidden := func(f string) bool {
		return slices.ContainsFunc(strings.Split(f, "/"), func(s string) bool { return strings.HasPrefix(s, ".") })
	}
	// A script may name any file of the plugin but its configuration
	// (plugin.json, the hook configurations, what is not imported).
	usable := func(f string) bool {
		return !generated(f) && !hidden(f) && (!c.claimed[f] || c.member[f])
	}
	need := map[string]bool{}
	reaches := make([]*reach, len(hooks))
	for i, h := range hooks {
		reaches[i] = c.reach(h, usable)
		for _, f := range reaches[i].files {
			need[f] = true
		}
	}
	var spare []string
	for _, f := range c.p.under("") {
		if c.claimed[f] && !need[f] {
			continue
		}
		switch {
		case generated(f):
			c.skip(f, "its name is one the import writes")
		case need[f]:
			// A tool needs it: copied even from a member's directory.
			if err := c.copyFile(f, c.pkgDir+"/"+f); err != nil {
				c.skip(f, err.Error())
			}
		case hidden(f):
			c.skip(f, "a hidden file")
		case !strings.Contains(f, "/") && docs.MatchString(f):
			c.copyFile(f, c.pkgDir+"/"+f)
		case len(hooks) == 0:
			c.skip(f, "no imported hook runs it")
		default:
			if c.copyFile(f, c.pkgDir+"/"+f) == nil {
				spare = append(spare, f)
			}
		}
		c.claimed[f] = true
	}
	if len(spare) > 0 {
		c.rep.Widen = append(c.rep.Widen, fmt.Sprintf("dalo found no hook's command or script naming %s: copied into the package, given to no tool; if a script reads one, add it to that tool's files", strings.Join(spare, ", ")))
	}
	for i, h := range hooks {
		r := reaches[i]
		from := strings.Join(strings.Fields(h.From), " ")
		data := "# " + from + "\n" + h.Command + "\n"
		if h.exec {
			data = "# " + from + " (exec form: no shell)\nexec " + execForm(h.Command, h.args) + "\n"
		}
		c.add(c.pkgDir+"/"+h.commandFile, []byte(data), false)
		var files []string
		for _, f := range r.files {
			if c.copied[c.pkgDir+"/"+f] {
				files = append(files, f)
			}
		}
		sort.Strings(files)
		h.files = append([]string{h.commandFile}, files...)
		h.Files = files
		h.Capabilities = claims(r.caps)
		h.Env = claims(r.env)
		h.Widen = r.notes
	}
}

// execForm writes command and args as one sh command line, each word
// quoted where it must be (a word naming a variable always is), with ${CLAUDE_PLUGIN_ROOT} and ${CLAUDE_PROJECT_DIR}
// substituted as Claude Code substitutes them: as plain strings.
func execForm(command string, args []string) string {
	words := make([]string, 0, len(args)+1)
	for _, w := range append([]string{command}, args...) {
		q := termtext.ShellQuote(w)
		for _, v := range []string{"CLAUDE_PLUGIN_ROOT", "CLAUDE_PROJECT_DIR"} {
			q = strings.ReplaceAll(q, "${"+v+"}", `'"$`+v+`"'`)
		}
		words = append(words, q)
	}
	return strings.Join(words, " ")
}

// rootRefs returns the paths s names under ${CLAUDE_PLUGIN_ROOT}, cleaned
// ("." for the root itself).
func rootRefs(s string) []string {
	var out []string
	for _, loc := range rootRef.FindAllStringIndex(s, -1) {
		out = append(out, path.Clean(strings.TrimPrefix(rootPath.FindString(s[loc[1]:]), "/")))
	}
	return out
}
