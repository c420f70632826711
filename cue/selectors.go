package cue

// The definitions of the rules that Go looks up, each named here once, as
// Timoni names the CUE paths it reads in one selectors file: a rule renamed
// in a .cue file is renamed here, and the compiler finds every reader.
// TestSelectors proves each names a definition the rules declare, and
// TestDefinitionNames (in the repository's root) that no other file of Go
// spells one.
const (
	// The documents dalo reads, each checked whole against its definition.
	Manifest = "#Manifest" // a package's PLUGIN.toml
	Project  = "#Project"  // a project's dalo.toml
	Lock     = "#Lock"     // a project's dalo.lock

	// Parts of a manifest that commands check one field of.
	Plugin = "#Plugin" // [plugin]
	Tool   = "#Tool"   // [[tool]]

	// The checks CUE makes beside the shape, each given a value and
	// answering with violations.
	HookRules        = "#HookRules"
	BindingRules     = "#BindingRules"
	RefRules         = "#RefRules"
	SkillFrontMatter = "#SkillFrontMatter"
	AgentFrontMatter = "#AgentFrontMatter"
	RefPositions     = "#RefPositions"
	FieldTypes       = "#FieldTypes" // the event fields a binding may name

	// A source's layout and identifier.
	SourceLayout = "#SourceLayout"
	SourceID     = "#SourceID"
	SourceIDRule = "#SourceIDRule"

	// The hook rules: the combination table, the enumerations of a hook's
	// fields, and what dispatch applies to a handler's answer.
	Combinations      = "#Combinations"
	Subject           = "#Subject"
	Phase             = "#Phase"
	Effect            = "#Effect"
	FailurePolicy     = "#FailurePolicy"
	Visibility        = "#Visibility"
	Requirement       = "#Requirement"
	Part              = "#Part"
	ResultKind        = "#ResultKind"
	ResultKinds       = "#ResultKinds"
	ResultShapes      = "#ResultShapes"
	FailurePolicies   = "#FailurePolicies"
	FailClosed        = "#FailClosed"
	FailClosedPasses  = "#FailClosedPasses"
	Guard             = "#Guard"
	Runtimes          = "#Runtimes"
	ArgvInterpolation = "#ArgvInterpolation"
	SystemPlatforms   = "#SystemPlatforms"
	ToolRuns          = "#ToolRuns"
	Limits            = "#Limits"

	// The provider table schema (ProviderSchema), and the two answers
	// install and review ask of a table.
	Provider      = "#Provider"
	Capability    = "#Capability"
	MemberInstall = "#MemberInstall"
	Unmet         = "#Unmet"

	// Tables is where the rules check that their tables agree.
	Tables = "#Tables"

	// What one grant of the approval ledger approves.
	GrantKinds = "#GrantKinds"
)
