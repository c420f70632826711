package engine

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"

	"dalo/plan"
)

// TestReadRefs proves that a manifest whose shape failed yields exactly
// the member and required entries the shape check found nothing wrong
// with, at their own indices, and says when a member was left out.
func TestReadRefs(t *testing.T) {
	const head = "schema_version = 1\n[plugin]\nname = \"a\"\ndescription = \"A.\"\n"
	member := func(ref, req string) string {
		return fmt.Sprintf("[[plugin.members]]\nref = %s\nrequirement = %q\n", ref, req)
	}
	require := func(ref, req string) string {
		return fmt.Sprintf("[[plugin.requires]]\nref = %s\nrequirement = %q\n", ref, req)
	}
	tests := []struct {
		name     string
		src      string
		members  []string // n=ref
		requires []string
		partial  bool
	}{
		{"error elsewhere", "colour = 1\n" + head + member(`"skill:a"`, "required") + require(`"plugin:b"`, "optional"),
			[]string{"0=skill:a"}, []string{"0=plugin:b"}, false},
		{"unknown key in a member", head + member(`"skill:a"`, "required") + "bogus = 1\n" + member(`"skill:nope"`, "required"),
			[]string{"1=skill:nope"}, nil, true},
		{"ref not a string", head + member("7", "required") + member(`"skill:b"`, "optional"),
			[]string{"1=skill:b"}, nil, true},
		{"ref off the grammar", head + member(`"skill:../x"`, "required") + member(`"skill:b"`, "optional"),
			[]string{"1=skill:b"}, nil, true},
		{"requirement off its enumeration", head + member(`"skill:a"`, "mandatory") + member(`"skill:b"`, "optional"),
			[]string{"1=skill:b"}, nil, true},
		{"fallback without its skill", head + member(`"agent:r"`, "required") + "fallback = { kind = \"inline\" }\n" + member(`"skill:b"`, "required"),
			[]string{"1=skill:b"}, nil, true},
		{"fallback read", "colour = 1\n" + head + member(`"agent:r"`, "required") + "fallback = { kind = \"inline\", skill = \"skill:b\" }\n" + member(`"skill:b"`, "required"),
			[]string{"0=agent:r>skill:b", "1=skill:b"}, nil, false},
		{"unknown key in the last member", head + member(`"agent:r"`, "required") + "fallback = { kind = \"inline\", skill = \"skill:b\" }\n" + member(`"skill:b"`, "required") + "colour = 1\n",
			[]string{"0=agent:r>skill:b"}, nil, true},
		{"bad require skipped", head + member(`"skill:a"`, "required") + require(`"plugin:b"`, "sometimes") + require(`"plugin:c"`, "required"),
			[]string{"0=skill:a"}, []string{"1=plugin:c"}, false},
		{"members not an array", head + "members = \"skill:a\"\n" + require(`"plugin:c"`, "required"),
			nil, []string{"0=plugin:c"}, true},
		{"plugin not a table", "schema_version = 1\nplugin = 1\n", nil, nil, true},
		{"no plugin", "schema_version = 1\n", nil, nil, true},
	}
	r, err := LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &diagList{file: "PLUGIN.toml"}
			doc := decodeManifest([]byte(tt.src), &r.Limits, l)
			if doc == nil {
				t.Fatalf("not decoded: %v", l.diags)
			}
			if r.checkShape(doc, l, func() *Rules { return r }) {
				t.Fatal("shape passed; the case needs a shape error")
			}
			rl := readRefs(doc, l)
			var members, requires []string
			for _, mb := range rl.members {
				s := fmt.Sprintf("%d=%s", mb.n, mb.Ref)
				if mb.Fallback != nil {
					s += ">" + mb.Fallback.Skill
				}
				members = append(members, s)
			}
			for _, rq := range rl.requires {
				requires = append(requires, fmt.Sprintf("%d=%s", rq.n, rq.Ref))
			}
			if !reflect.DeepEqual(members, tt.members) || !reflect.DeepEqual(requires, tt.requires) || rl.partialMembers != tt.partial {
				t.Errorf("got members %q requires %q partial %t, want %q %q %t", members, requires, rl.partialMembers, tt.members, tt.requires, tt.partial)
			}
		})
	}
}

// TestReadRefsMatchesManifest proves that an error outside the references
// leaves them exactly as the typed manifest has them: one reference walk
// for both.
func TestReadRefsMatchesManifest(t *testing.T) {
	const valid = `schema_version = 1
[plugin]
name = "a"
description = "A."
[[plugin.members]]
ref = "agent:r"
requirement = "required"
fallback = { kind = "inline", skill = "skill:s" }
[[plugin.members]]
ref = "skill:s"
requirement = "required"
[[plugin.members]]
ref = "instruction:company:i"
requirement = "recommended"
[[plugin.requires]]
ref = "plugin:b"
requirement = "optional"
`
	r, err := LoadRules()
	if err != nil {
		t.Fatal(err)
	}
	var m Manifest
	if err := toml.Unmarshal([]byte(valid), &m); err != nil {
		t.Fatal(err)
	}
	want := manifestRefs(&m)
	src := strings.Replace(valid, "[plugin]\n", "colour = 1\n[plugin]\nscope = \"x\"\n", 1)
	l := &diagList{}
	doc := decodeManifest([]byte(src), &r.Limits, l)
	if doc == nil || r.checkShape(doc, l, func() *Rules { return r }) {
		t.Fatalf("want a decoded manifest with a shape error: %v", l.diags)
	}
	if got := readRefs(doc, l); !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func TestEntryPath(t *testing.T) {
	tests := []struct {
		field, want string
		ok          bool
	}{
		{"plugin.members", "plugin.members", true},
		{"plugin.members[2]", "plugin.members[2]", true},
		{"plugin.members[12].fallback.skill", "plugin.members[12]", true},
		{"plugin.membersX", "", false},
		{"plugin.requires[0].ref", "", false},
		{"plugin.name", "", false},
	}
	for _, tt := range tests {
		got, ok := entryPath(tt.field, "plugin.members")
		if got != tt.want || ok != tt.ok {
			t.Errorf("entryPath(%q) = %q, %t; want %q, %t", tt.field, got, ok, tt.want, tt.ok)
		}
	}
}

// TestRefFields: the shared paths of references are the paths, within
// the table and past it.
func TestRefFields(t *testing.T) {
	for n := range plan.DraftLimits.ArrayEntries + 10 {
		if got, want := memberField(n), fmt.Sprintf("plugin.members[%d].ref", n); got != want {
			t.Fatalf("memberField(%d) = %q, want %q", n, got, want)
		}
		if got, want := requireField(n), fmt.Sprintf("plugin.requires[%d].ref", n); got != want {
			t.Fatalf("requireField(%d) = %q, want %q", n, got, want)
		}
	}
}
