package main

import (
	"fmt"
	"strings"

	"dalo/store"
)

// tableFor is the table review and approve use for --provider provider,
// and a line that says which it is and whether it matches the harness
// found. They never refuse for the harness: a bare NAME is the table of
// exactly the version found when dalo has one, else the newest table;
// NAME@VERSION is that table. Install is what refuses a version no table
// covers. An unknown provider is returned as it is, for Select to refuse.
//
// A table verified on this machine (a local table) is used as a shipped
// one, and the line says when it was proved.
func tableFor(s *store.Store, provider string) (key, note string) {
	ts, err := s.Tables()
	if err != nil || provider == "" {
		return provider, ""
	}
	name, _, exact := strings.Cut(provider, "@")
	newest, ok := ts.Newest(name)
	if !ok {
		return provider, ""
	}
	h, herr := s.FindHarness(ts, name)
	defer func() {
		if t, err := ts.Resolve(key); err == nil && t.Verified != nil {
			note += "; " + store.VerifiedNote(t)
		}
	}()
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
		return newest.Key(), fmt.Sprintf("table %s, the newest: the %s found is %s (%s), for which dalo has no table, and install refuses it unless you name a table or prove that version with 'dalo providers verify %s'", newest.Key(), name, orOutput(h), h.Path, name)
	}
	return newest.Key(), fmt.Sprintf("table %s, the newest: %v", newest.Key(), herr)
}
