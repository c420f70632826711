package live

import "dalo/internal/scenario"

// NativeEvents returns the hook events the harness binary bin (of harness
// name) accepts in its hook configuration, spelt as its configuration
// spells them, sorted (scenario.NativeEvents, which the scenario
// native-events asks too).
func NativeEvents(name, bin string) ([]string, error) { return scenario.NativeEvents(name, bin) }
