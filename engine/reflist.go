package engine

import (
	"strconv"
	"strings"
	"sync"

	"dalo/plan"
)

// A refList is the members and required plugins of one manifest that can
// be read: all of them when its shape passed, and when it failed, the
// entries whose own fields passed it. The reference checks and the
// resolution walk take a refList, so a shape-failed manifest still has its
// references resolved and reported by the same code as a valid one.
type refList struct {
	members  []memberAt
	requires []requireAt
	// partialMembers says some member could not be read: a check over
	// every member (the fallback closure) would guess, so it is not made.
	partialMembers bool
}

// refFields are the field paths of the references a manifest can hold,
// plugin.members[n].ref and plugin.requires[n].ref for each n within the
// array limit, made once in one string: a reference's path is kept with
// its position and in its Reference until the report, and made for each
// reference twice, they were an eighth of what a source of 120 members a
// package held until then (and a cycle search formatted each require's).
var refFields = sync.OnceValue(func() (paths [2][]string) {
	n := plan.DraftLimits.ArrayEntries
	var b []byte
	var ends [2][]int
	for i, list := range [2]string{"plugin.members", "plugin.requires"} {
		ends[i] = make([]int, n)
		for k := range n {
			b = append(b, list...)
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(k), 10)
			b = append(b, "].ref"...)
			ends[i][k] = len(b)
		}
	}
	all, start := string(b), 0
	for i := range paths {
		paths[i] = make([]string, n)
		for k, end := range ends[i] {
			paths[i][k] = all[start:end]
			start = end
		}
	}
	return paths
})

// memberField is the field path of plugin.members[n]'s reference.
func memberField(n int) string { return refField(0, "plugin.members", n) }

// requireField is the field path of plugin.requires[n]'s reference.
func requireField(n int) string { return refField(1, "plugin.requires", n) }

func refField(i int, list string, n int) string {
	if paths := refFields()[i]; n < len(paths) {
		return paths[n]
	}
	return list + "[" + strconv.Itoa(n) + "].ref"
}

// memberAt is a member with its index in plugin.members, which names its
// field path and position whether or not the entries before it were read.
type memberAt struct {
	n int
	Member
}

type requireAt struct {
	n int
	Require
}

func manifestRefs(m *Manifest) *refList {
	rl := &refList{members: make([]memberAt, 0, len(m.Plugin.Members)), requires: make([]requireAt, 0, len(m.Plugin.Requires))}
	for n, mb := range m.Plugin.Members {
		rl.members = append(rl.members, memberAt{n, mb})
	}
	for n, rq := range m.Plugin.Requires {
		rl.requires = append(rl.requires, requireAt{n, rq})
	}
	return rl
}

// readRefs reads the references of a manifest whose shape failed, from its
// decoded TOML. An entry is read only when the shape check found no error
// in it or in a table or array holding it, and its fields hold what
// #Member or #Require admits; any other entry already has its shape error
// and is skipped.
func readRefs(m *manifest, l *diagList) *refList {
	bad := map[string]bool{} // entry or container path → has a shape error
	for _, d := range l.diags {
		if d.Severity != Error {
			continue
		}
		for _, list := range []string{"plugin.members", "plugin.requires"} {
			if at, ok := entryPath(d.Field, list); ok {
				bad[at] = true
			}
		}
		if d.Field == "" || d.Field == "plugin" {
			bad["plugin"] = true
		}
	}
	rl := &refList{}
	plugin, ok := m.data["plugin"].(map[string]any)
	if !ok || bad["plugin"] {
		rl.partialMembers = true
		return rl
	}
	members, _ := plugin["members"].([]any)
	requires, _ := plugin["requires"].([]any)
	if bad["plugin.members"] {
		members, rl.partialMembers = nil, true
	}
	if bad["plugin.requires"] {
		requires = nil
	}
	for n, x := range members {
		e, ok := x.(map[string]any)
		var mb Member
		if ok = ok && !bad[indexPath("plugin.members", n)]; ok {
			mb, ok = readMember(e)
		}
		if !ok {
			rl.partialMembers = true
			continue
		}
		rl.members = append(rl.members, memberAt{n, mb})
	}
	for n, x := range requires {
		e, ok := x.(map[string]any)
		if !ok || bad[indexPath("plugin.requires", n)] {
			continue
		}
		ref, ok1 := e["ref"].(string)
		req, ok2 := e["requirement"].(string)
		if ok1 && ok2 {
			rl.requires = append(rl.requires, requireAt{n, Require{Ref: ref, Requirement: req}})
		}
	}
	return rl
}

func readMember(e map[string]any) (Member, bool) {
	ref, ok1 := e["ref"].(string)
	req, ok2 := e["requirement"].(string)
	mb := Member{Ref: ref, Requirement: req}
	if fb, ok := e["fallback"]; ok {
		t, ok := fb.(map[string]any)
		if !ok {
			return mb, false
		}
		kind, ok3 := t["kind"].(string)
		skill, ok4 := t["skill"].(string)
		if !ok3 || !ok4 {
			return mb, false
		}
		mb.Fallback = &Fallback{Kind: kind, Skill: skill}
	}
	return mb, ok1 && ok2
}

// entryPath returns the path of the list or of its entry that field is
// at or under: plugin.members[2] for plugin.members[2].fallback.skill,
// plugin.members for plugin.members itself.
func entryPath(field, list string) (string, bool) {
	rest, ok := strings.CutPrefix(field, list)
	switch {
	case !ok:
		return "", false
	case rest == "":
		return list, true
	case rest[0] != '[':
		return "", false // plugin.membersX: another field
	}
	end := strings.IndexByte(rest, ']')
	if end < 0 {
		return "", false
	}
	n, err := strconv.Atoi(rest[1:end])
	if err != nil {
		return "", false
	}
	return indexPath(list, n), true
}
