// Package dispatch runs the approved hook handlers of one native harness
// event and composes their portable results into one outcome. It is the
// hot path behind `dalo hook dispatch`: the harness calls it on every
// session start, prompt, tool call and stop, so it reads only the dispatch
// plan index written by install (package dalo/plan), never a
// manifest, never a provider table, and never evaluates CUE.
//
// It holds:
//
//   - the plan lookup: only the index files of the event and of the
//     payload's tool name (see plan.Load);
//   - the trust re-check made before every run: both grants still in the
//     ledger with the digests the plan names and the digests of what they
//     bind, the plan asking for nothing else (argv, env, files, matcher,
//     policy, ...), the staged tree holding exactly the bound bytes;
//   - the process contract: declared argv with whole-argument input
//     substitution, the staged tool root as cwd, only the declared
//     environment, the raw native JSON on stdin, a hard timeout that kills
//     the handler's whole process group, bounded stdout and stderr;
//   - the strict parser of the single portable JSON result;
//   - the failure policies and the composition of several hooks in stable
//     hook-identity order into an [Outcome];
//   - one generic payload reader (extractFields) and renderer ([Render]),
//     driven by the event's native protocol ([plan.Native]) that install
//     copied from the provider table: which native key holds each portable
//     field, and how each part of an outcome is written natively. No
//     harness is named in this package.
package dispatch
