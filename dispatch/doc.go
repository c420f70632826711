// Package dispatch runs the approved hook handlers of one native harness
// event and composes their portable results into one outcome. It is the
// hot path behind `dalo hook dispatch`: the harness calls it on every
// session start, prompt, tool call and stop, so it reads only the dispatch
// plan JSON written by install (package store's Plan), never a manifest,
// and never evaluates CUE.
//
// It holds:
//
//   - the plan lookup ($DALO_HOME/plans/<provider>.json, see [Home]);
//   - the trust re-check made before every run: both grants still in the
//     ledger with the digests the plan names, every staged byte unchanged;
//   - the process contract: declared argv with whole-argument input
//     substitution, the staged tool root as cwd, only the declared
//     environment, the raw native JSON on stdin, a hard timeout that kills
//     the handler's whole process group, bounded stdout and stderr;
//   - the strict parser of the single portable JSON result;
//   - the failure policies and the composition of several hooks in stable
//     hook-identity order into an [Outcome].
//
// What a harness sends and accepts natively is not here: an [Adapter] per
// harness (packages dalo/providers/claude and dalo/providers/codex) turns
// the native payload into portable [Fields] and an [Outcome] into the
// native output and exit status.
package dispatch
