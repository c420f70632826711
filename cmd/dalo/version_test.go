package main

import (
	"runtime/debug"
	"testing"
)

// The version line says what the build recorded, and no more.
func TestFormatVersion(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	const rev = "1a2b3c4d5e6f7a8b9c0d1a2b3c4d5e6f7a8b9c0d"
	tests := []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"a working tree, modified", debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "true")}, "dalo (devel) 1a2b3c4d5e6f+modified go1.26.0"},
		{"a working tree, clean", debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: vcs(rev, "false")}, "dalo (devel) 1a2b3c4d5e6f go1.26.0"},
		{"no VCS information", debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}}, "dalo (devel) go1.26.0"},
		{"no version at all", debug.BuildInfo{GoVersion: "go1.26.0"}, "dalo (devel) go1.26.0"},
		{"go install of a tag", debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v0.1.0"}}, "dalo v0.1.0 go1.26.0"},
		// Go 1.24 and later stamp a pseudo-version holding the revision:
		// it is not repeated.
		{"a VCS pseudo-version", debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v0.0.0-20261130095428-1a2b3c4d5e6f+dirty"}, Settings: vcs(rev, "true")}, "dalo v0.0.0-20261130095428-1a2b3c4d5e6f+dirty go1.26.0"},
	}
	for _, tt := range tests {
		if got := formatVersion(&tt.bi); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
