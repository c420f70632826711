//go:build dalo_nocompiled

package providers

// compiledTables returns nil in the generator's build: Load compiles
// the tables from CUE.
func compiledTables() *compiled { return nil }
