package providers

import "cuelang.org/go/cue"

var cueRoot = cue.MakePath()

// collectEvidence appends every string of every evidence list below v.
func collectEvidence(v cue.Value, out *[]string) {
	it, err := v.Fields()
	if err != nil {
		return
	}
	for it.Next() {
		if it.Selector().String() == "evidence" {
			var evs []string
			if it.Value().Decode(&evs) == nil {
				*out = append(*out, evs...)
			}
			continue
		}
		collectEvidence(it.Value(), out)
	}
}
