//go:build unix

package live

import (
	"testing"
)

// TestProbeUserChannel runs a Claude session, its stream read as the user
// reads it (streamJSON), in which three probe hooks with policy report and
// error_visibility = "user" fail: a prompt observer, a before and an after
// tool call context hook. Each action goes on; the user is shown each
// diagnostic with the handler's stderr, as "<event>:<matcher> says:"
// lines; the model reads neither. It is the scenario "claude-user-channel".
func TestProbeUserChannel(t *testing.T) {
	t.Parallel()
	harness(t, "claude")
	play(t, "claude", "claude-user-channel")
}

// TestProbeClaudeTools runs a Claude session whose model calls Read, Edit,
// Glob and Grep: the gate whose matcher names each tool runs on exactly
// that tool's calls, with the bound tool.name equal to it; the Edit gate's
// deny keeps one edit from changing its file (the model reads the reason),
// while the other edit changes its file. It is the scenario
// "claude-file-tools".
func TestProbeClaudeTools(t *testing.T) {
	t.Parallel()
	harness(t, "claude")
	play(t, "claude", "claude-file-tools")
}
