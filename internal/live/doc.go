// Package live proves the provider tables against the real harnesses: for
// the newest table of each harness (today Claude Code 2.1.233 and Codex
// 0.147.0, the versions .ci/harnesses installs), its tests run the whole user lifecycle through the real dalo
// binary (validate, source add, approve, install) and then a real headless
// harness session against a fake model server on loopback
// (dalo/internal/fakemodel). The harness calls `dalo-hook dispatch` from the
// configuration install wrote; the handlers are small shell and node
// scripts of generated author sources (the live kit, and the probe, tools
// and matrix kits written by kit.files), and the native tests hand-write
// the harness's own hook configuration to show what a native answer does;
// each test checks the effect in what the harness did (a file a command or
// handler touched, or did not), sent to the model next, or showed the user:
// Claude Code run with --output-format stream-json --verbose shows a hook's
// systemMessage as a system record of subtype "informational" (the same
// record its transcript keeps as a hook_system_message attachment), and a
// SessionEnd failure on its stderr. Codex 0.147.0 exec shows neither, not
// even with --json.
//
// The package holds tests only. They need the harnesses installed, which
// .ci/harnesses does:
//
//	DALO_HARNESS_DIR=$(.ci/harnesses) go test ./internal/live/
//
// Without DALO_HARNESS_DIR the tests skip, unless CI=true, where they fail:
// a CI run that silently skipped them would prove nothing.
package live
