package plan

// The dispatcher's command lines. Install writes one into each harness
// entry and recognises dalo's entries by them: `<dalo> hook dispatch` or,
// from the dispatch-only binary, `<dalo-hook> dispatch`, each followed by
// --home H --provider P --event E, and --fail-closed where a required
// fail_closed hook is installed on the event (the store's package builds
// and parses the whole command).
const (
	// HookBinary is the file name of the dispatch-only binary
	// (cmd/dalo-hook): it links no CUE, so it adds less than half of dalo's
	// overhead to each dispatch.
	HookBinary = "dalo-hook"
	// DaloDispatch is the dispatch command under dalo; HookDispatch the
	// same command under dalo-hook.
	DaloDispatch = "hook dispatch"
	HookDispatch = "dispatch"
)

// A Block is how a hook command of one provider blocks the native action
// whatever it prints: it exits with Exit and writes the reason on stderr.
// Continued gives, per native event that carries workflow.already_continued,
// the payload key of that boolean: an event blocked once already (the
// harness going on with the workflow) is not blocked again, so that a
// dispatcher that cannot answer never loops the agent without bound.
type Block struct {
	Exit      int
	Continued map[string]string
}
