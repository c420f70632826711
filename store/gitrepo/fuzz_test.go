package gitrepo

import (
	"path"
	"strings"
	"testing"
)

// FuzzTreeListing feeds what 'git ls-tree -r -t -l -z' writes, whose paths
// a remote repository chooses, through the lister in chunks of any size:
// it never panics, and every entry it accepts is one WriteTree may write,
// inside a directory asked for, below a directory listed before it, within
// the limits.
func FuzzTreeListing(f *testing.F) {
	const oid = "45b983be36b73c0788dc9cbcb76cbb80fc7bb057"
	for _, seed := range []string{
		"040000 tree " + oid + "       -\tplugins\x00100644 blob " + oid + "       3\tplugins/x\x00",
		"040000 tree " + oid + "       -\tplugins\x00120000 blob " + oid + "      12\tplugins/link\x00",
		"040000 tree " + oid + "       -\tskills\x00160000 commit " + oid + "       -\tskills/sub\x00",
		"100644 blob " + oid + "       3\tplugins/../x\x00",
		"040000 tree " + oid + "       -\tplugins\x00100644 blob " + oid + "       3\tplugins/.GIT\x00",
		"100755 blob " + oid + " 99999999999\tagents/a.md\x00",
		"100644 blob " + oid + "       3\tREADME\x00",
		"garbage",
	} {
		f.Add([]byte(seed), uint8(7))
	}
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		l := &lister{dirs: []string{"agents", "plugins", "skills"}, lim: Limits{FileBytes: 100, Entries: 50, Bytes: 1000}}
		n := int(chunk)%64 + 1
		for len(data) > 0 && l.err == nil {
			k := min(n, len(data))
			l.Write(data[:k])
			data = data[k:]
		}
		if len(l.entries) > l.lim.Entries {
			t.Fatalf("%d entries, more than the limit", len(l.entries))
		}
		trees := map[string]bool{}
		for _, e := range l.entries {
			if checkPath(e.path) != nil {
				t.Fatalf("accepted %q", e.path)
			}
			top, _, _ := strings.Cut(e.path, "/")
			if top != "agents" && top != "plugins" && top != "skills" {
				t.Fatalf("accepted %q, outside the directories asked for", e.path)
			}
			if d := path.Dir(e.path); d != "." && !trees[d] {
				t.Fatalf("accepted %q before its directory", e.path)
			}
			if e.typ == "tree" {
				trees[e.path] = true
			}
			if e.typ == "blob" && e.size < 0 {
				t.Fatalf("accepted %q with size %d", e.path, e.size)
			}
		}
	})
}
