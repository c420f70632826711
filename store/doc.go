// Package store keeps dalo's state on the user's machine: the source
// registry, the approval ledger, content-addressed staging, the dispatch
// plans, and the records of what dalo wrote into files the user owns: its
// entries in a harness's hooks file (edited with package hooksfile, which
// also reads what in the user's settings turns them off), the harness
// trust it recorded for them (package hooktrust says what a harness knows
// an entry by; Codex's config.toml is edited with package tomledit), and
// its instruction blocks (edited with package instruction). The editors
// take and return bytes: store reads and writes the files, and keeps the
// records. It is plain files under $DALO_HOME, written atomically under an
// advisory lock, readable at any moment by concurrent dispatches.
//
// Layout of $DALO_HOME (the one description of it; see [plan.Home]):
//
//	sources.json              the user's source registry
//	git/<source-id>/          a git source: repo.git, the bare repository fetched
//	                          from its URL, and trees/<tree>/, the read-only
//	                          snapshot of the pinned commit its packages are read
//	                          from; the directory is also the source's fetch lock
//	                          (see gitsource.go)
//	grants/<grant-id>.json    the approval ledger, one Grant per file; revoke deletes
//	pending/                  an update's grants, written before its install switches
//	                          the plan and moved into grants/ after, and its journal
//	                          update.json (see [plan.PendingDir])
//	staged/<sha256>/          content-addressed, read-only staged tool trees
//	dispatchers/<sha256>/<name>  the store's copy of the dispatcher the harness
//	                          entries call (dalo-hook, or dalo), by its digest
//	plans/<provider>.json     the whole dispatch Plan of one provider, written by
//	                          install, read by doctor and people
//	plans/<provider>.d/current.<schema>  a symlink to the generation dispatch reads
//	                          (current.6 for plan schema 6): one file per native
//	                          event and one per exact tool name, swapped in whole
//	                          (see [plan.WriteIndex] and [plan.Pointer])
//	installs/<provider>.json  what install wrote for a provider: packages, their
//	                          skills and agents, the harness entries dalo owns; the
//	                          providers with a record are the installed ones
//	instructions.json         the instruction blocks enabled (see instructions_state.go)
//	harnesses.json            the harness binary the user named per provider with
//	                          'dalo providers use' (see harnesses.go)
//	providers/<name>/<version>.cue  a local provider table 'dalo providers verify'
//	                          wrote for a harness version dalo ships none for, and
//	                          <name>/<version>/ the recordings of its run; install
//	                          and review use them beside the shipped tables
//	                          (see [Store.LocalTablesDir])
//	projects/<id>/            the scope of one project 'dalo sync' installs into:
//	                          project.json (its directory), and installs/ and plans/
//	                          as above, the project's; the ledger, staged trees and
//	                          dispatchers stay the user's (see project.go,
//	                          [plan.ProjectsDir])
//	revoked/<time>-<grant>/   a skill or agent a revoke withdrew from the harness's
//	                          directory, kept rather than deleted (see members.go)
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
