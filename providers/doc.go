// Package providers holds the provider tables: one CUE file per harness
// version (claude/2.1.233.cue, codex/0.147.0.cue), each checked against
// #Provider of package dalo/cue when loaded. A table says which native event
// serves each hook row, which native output renders each portable result
// kind, how failures reach the user and the model, which native tool names
// a matcher may use, how timeouts are written and clamped, where the
// harness reads its configuration, hooks, instructions, skills and agents,
// and, per native event, the native protocol dispatch speaks: where the
// payload holds each portable field and how each part of a composed
// outcome is written (payload, channels, undelivered) — with the evidence
// for each claim. Install copies that protocol into the dispatch plan
// (store.NativeOf), so that dispatch renders from the table without
// loading it. The package knows neither the store nor the plan: it
// answers questions about harness versions.
//
// Adding a harness version is adding a CUE file and its evidence and
// running go generate ./providers: no Go changes. Lookup is exact:
// claude@2.1.234 is unknown until its table exists.
//
// The rules stay in CUE, but a command does not evaluate them for provider
// tables: go generate compiles every table from CUE and writes
// compiled_tables.go, the decoded tables with #Capability's answer to every
// question a valid hook can ask, as a Go value; Load takes it in a fifth
// of a millisecond, where compiling the tables costs tens (and decoding
// them from JSON, as it once did, 7). A test fails while the file is
// stale, and Load compiles from CUE whenever it does not describe exactly
// the embedded table files, or in the generator's own build.
//
// The API, for the validator, the store and the dispatcher:
//
//	Load() (*Tables, error)                   the embedded tables, loaded once
//	LoadFS(fs.FS) (*Tables, error)            tables compiled from CUE (tests)
//	WithLocal(dir) (*Tables, error)           Load plus the local tables in dir,
//	                                          which 'dalo providers verify' wrote
//	(*Tables).Broken, Shadowed                local tables WithLocal could not use, or did not
//	Compile() ([]byte, error)                 compiled_tables.go, for go generate
//	(*Tables).Lookup(name, version)           exact lookup
//	(*Tables).Newest(name)                    newest known version of a harness
//	(*Tables).Resolve("claude" | "claude@2.1.233")
//	(*Tables).Capability(table, Question)     #Capability's answer for a hook
//	(*Tables).MemberInstall(table, MemberQuestion) #MemberInstall's answer for a member
//	(*Table).NativeEvent(subject, phase)      the native event of a row
//	(*Table).RowOf(nativeEvent)               the row a native event serves
//	(*Table).Output(subject, phase, effect, kind)       native output of a result
//	(*Table).FailureOutput(subject, phase, policy, vis) native output of a failure
//	(*Table).ConfigHome, Path, SkillDirs, AgentFile     where the harness reads
//	(*Table).KnowsTool, ToolNames             native tool names for matchers
//	(*Table).UnboundFields(subject, phase, fields) bound fields a row's event lacks
//	(*Table).NativeTimeout, TimeoutClampMS    timeouts in the native unit
//	(*Table).Entry(event, command, timeout)   dalo's entry in the hooks file
//
// Functions that resolve paths take getenv (os.Getenv, or a test's
// environment) rather than reading the process environment themselves.
package providers
