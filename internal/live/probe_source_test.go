//go:build unix

package live

import "dalo/internal/scenario"

// The probe kit (scenario.ProbeFiles): a second author source for the
// effects, bindings, failure visibilities, runtimes and matchers the live
// kit does not cover.
const (
	probeID  = scenario.ProbeID
	probePkg = scenario.ProbePkg

	markStartContext = scenario.MarkStartContext
	markPreContext   = scenario.MarkPreContext
	markPostContext  = scenario.MarkPostContext
	markNodeContext  = scenario.MarkNodeContext
	markFileDeny     = scenario.MarkFileDeny
	markProbeStderr  = scenario.MarkProbeStderr
	markUserStderr   = scenario.MarkUserStderr
)

var (
	probeExit  = scenario.ProbeExit
	probeFiles = scenario.ProbeFiles
)
