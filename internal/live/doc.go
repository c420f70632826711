// Package live proves the provider tables against the real harnesses. A run
// proves the tables DALO_LIVE_TABLES names (name@version, one version per
// harness; the newest table of each harness when unset): for each, its
// tests run the whole user lifecycle through the real dalo binary
// (validate, source add, approve, install with --provider name@version)
// and then a real headless session of exactly that harness version, which
// is first on the session's PATH, against a fake model server on loopback
// (dalo/internal/fakemodel). The harness calls `dalo-hook dispatch` from
// the configuration install wrote; the handlers are small shell and node
// scripts of generated author sources (the live kit, and the probe, tools
// and matrix kits written by kit.files), and the native tests hand-write
// the harness's own hook configuration to show what a native answer does;
// each test checks the effect in what the harness did (a file a command or
// handler touched, or did not), sent to the model next, or showed the user:
// Claude Code run with --output-format stream-json --verbose shows a hook's
// systemMessage as a system record of subtype "informational" (the same
// record its transcript keeps as a hook_system_message attachment), and a
// SessionEnd failure on its stderr. Codex exec shows neither, not even
// with --json; its app server and TUI do.
//
// The package holds tests, and what a run leaves for others to read: when
// the tests end, a run writes which tests passed against which table
// (Results) to DALO_LIVE_RESULTS, else <DALO_HARNESS_DIR>/results, which
// .ci/run's evidence step and the probe (internal/live/probe) hold each
// table's claims to (Proof). They need the harnesses installed, which
// .ci/harnesses does, each version in <DALO_HARNESS_DIR>/<name>@<version>:
//
//	DALO_HARNESS_DIR=$(.ci/harnesses) go test ./internal/live/
//	DALO_HARNESS_DIR=$(.ci/harnesses) DALO_LIVE_TABLES=codex@0.147.0 go test ./internal/live/
//
// .ci/live runs the suite once per table, two runs at once. Without
// DALO_HARNESS_DIR the tests skip, unless CI=true, where they fail: a CI
// run that silently skipped them would prove nothing.
package live
