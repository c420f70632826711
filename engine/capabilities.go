package engine

// ProviderCapabilities says, per provider@version and per hook, whether the
// provider supports it.
func ProviderCapabilities(pkgs []*Package, providers []string) (map[string][]HookCapability, error) {
	return map[string][]HookCapability{}, nil
}

// ResolveProviders turns NAME or NAME@VERSION arguments into known
// provider@version keys.
func ResolveProviders(args []string) ([]string, error) {
	return args, nil
}
