// Package store keeps dalo's state on the user's machine: the source
// registry, the approval ledger, content-addressed staging, the dispatch
// plans, and the records of what dalo wrote into files the user owns (its
// harness configuration entries, edited with package jsonedit, and its
// instruction blocks, edited with package instruction). It is plain files under $DALO_HOME, written atomically
// under an advisory lock, readable at any moment by concurrent dispatches.
//
// Layout of $DALO_HOME (the one description of it; see [plan.Home]):
//
//	sources.json              the user's source registry
//	grants/<grant-id>.json    the approval ledger, one Grant per file; revoke deletes
//	staged/<sha256>/          content-addressed, read-only staged tool trees
//	plans/<provider>.json     the whole dispatch Plan of one provider, written by
//	                          install, read by doctor and people
//	plans/<provider>.d/current  a symlink to the generation dispatch reads: one file
//	                          per native event and one per exact tool name, swapped
//	                          in whole (see [plan.WriteIndex])
//	installs/<provider>.json  what install wrote for a provider: packages, their
//	                          skills and agents, the harness entries dalo owns; the
//	                          providers with a record are the installed ones
//	instructions.json         the instruction blocks enabled (see instructions_state.go)
//	lock                      the advisory lock writers hold
//	dispatch.lock             empty; every dispatch holds a shared lock on it for its
//	                          whole run, writers take it exclusively only to delete
//	                          staged trees (see [plan.HoldDispatch])
//	stops/<provider>/<key>    written by dispatch: how many workflow passes failing
//	                          fail_closed hooks asked for in a row in one session's
//	                          stop (see [plan.StopPasses])
//
// Names holding [plan.TempMark] are temporary files of a writer.
//
// A writer takes the lock, then replaces whole files (temporary file, fsync,
// rename, fsync of the directory) in an order that leaves every state a
// reader can see whole: staged trees before the plan that names them, the
// record of what dalo owns before it writes those files, the plan before the
// harness entries that call it (and the reverse on removal). A writer killed
// at any step leaves temporary files and unused staged trees that the next
// writer removes when it takes the lock. Unused staged trees stay while a
// dispatch runs, since it may have read the plan that named them; a later
// writer removes them.
package store
