package engine

import "testing"

// TestDraftLimits pins the reference limits to the numbers draft 0.1
// states, written here from its sentences and not read from the CUE that
// implements them: every other test takes its limits from cue/limits.cue,
// so a change there would go unnoticed anywhere else.
func TestDraftLimits(t *testing.T) {
	r, err := LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	want := Limits{
		// "Dalo's reference limits are 1 MiB per manifest, 16 KiB per
		// string, 1024 array entries, 32 levels of TOML nesting, 4096
		// package entries, 32 directory levels, 64 MiB per file, and
		// 256 MiB per package. Hook matchers and bindings have a
		// tighter 256-entry limit."
		ManifestBytes: 1 << 20, StringBytes: 16 << 10, ArrayEntries: 1024, TOMLNesting: 32,
		PackageEntries: 4096, DirectoryDepth: 32, FileBytes: 64 << 20, PackageBytes: 256 << 20,
		MatcherToolNames: 256, Bindings: 256,
		// "Dalo limits a handler response to 4 MiB, text fields to 16 KiB
		// without NUL characters, and a rewritten input object to 1 MiB."
		ResponseBytes: 4 << 20, ResultTextBytes: 16 << 10, RewrittenInputBytes: 1 << 20,
		// "Timeouts range from 100 to 120000 milliseconds."
		TimeoutMinMS: 100, TimeoutMaxMS: 120000,
		// Not the draft's. The Agent Skills specification: a name of at
		// most 64 characters, a description of 1024, compatibility of
		// 500. dalo's own: ids of 128 characters, and front matter read
		// up to 64 KiB.
		SkillNameChars: 64, SkillDescriptionChars: 1024, SkillCompatibilityChars: 500,
		IDChars: 128, FrontMatterBytes: 64 << 10,
	}
	if r.Limits != want {
		t.Errorf("#Limits is\n%+v\nthe draft says\n%+v", r.Limits, want)
	}
}
