package main

import (
	"fmt"
	"strings"

	"dalo/providers"
	"dalo/store"
)

// tableFor is the table review and approve use for --provider provider,
// and a line that says which it is and whether it matches the harness
// found. They never refuse for the harness: a bare NAME is the table of
// exactly the version found when dalo has one, else the newest table;
// NAME@VERSION is that table. Install is what refuses a version no table
// covers. An unknown provider is returned as it is, for Select to refuse.
func tableFor(s *store.Store, provider string) (key, note string) {
	ts, err := providers.Load()
	if err != nil || provider == "" {
		return provider, ""
	}
	name, _, exact := strings.Cut(provider, "@")
	newest, ok := ts.Newest(name)
	if !ok {
		return provider, ""
	}
	h, herr := s.FindHarness(ts, name)
	switch {
	case exact && h != nil && h.Table != nil && h.Table.Key() == provider:
		return provider, fmt.Sprintf("table %s: the %s found (%s)", provider, name, h.Path)
	case exact && h != nil:
		return provider, fmt.Sprintf("table %s, as named; the %s found is %s (%s)", provider, name, orOutput(h), h.Path)
	case exact:
		return provider, fmt.Sprintf("table %s, as named; %v", provider, herr)
	case h != nil && h.Table != nil:
		return h.Table.Key(), fmt.Sprintf("table %s: the %s found (%s)", h.Table.Key(), name, h.Path)
	case h != nil:
		return newest.Key(), fmt.Sprintf("table %s, the newest: the %s found is %s (%s), for which dalo has no table, and install refuses it unless you name a table", newest.Key(), name, orOutput(h), h.Path)
	}
	return newest.Key(), fmt.Sprintf("table %s, the newest: %v", newest.Key(), herr)
}
