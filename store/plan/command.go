package plan

// The dispatcher's command lines. Install writes one into each harness
// entry and recognises dalo's entries by them: `<dalo> hook dispatch` or,
// from the dispatch-only binary beside it, `<dalo-hook> dispatch`, each
// followed by --provider P --event E.
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
