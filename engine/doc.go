// Package engine validates an author source of Portable Agent Packages.
//
// It decodes each plugins/<name>/PLUGIN.toml with go-toml/v2, unifies the
// data with the CUE definitions of package dalo/cue, turns CUE's findings into
// diagnostics that carry a file, a line, a column and a field path, and then
// makes the checks CUE cannot make: discovery, containment and symlinks,
// executable bits, byte limits read with bounds, argv interpolation, bindings,
// references, cycles and the front matter of skills and agents.
//
// The engine never executes a tool, never follows a symlink out of the source
// and never reads more of a file than the limits allow.
package engine
