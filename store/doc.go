// Package store keeps dalo's state on the user's machine: the source
// registry, the approval ledger, content-addressed staging, the dispatch
// plans, the harness configuration entries dalo owns and the instruction
// blocks it wrote. It is plain files under $DALO_HOME, written atomically
// under an advisory lock, readable at any moment by concurrent dispatches.
package store
