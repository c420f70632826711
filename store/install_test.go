package store

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestInstallDryRunIsThePlan: a dry run reports exactly what the install
// then does, and writes nothing: it is the install stopped after its plan.
func TestInstallDryRunIsThePlan(t *testing.T) {
	s, _, sel := approvedKit(t)
	home := filepath.Dir(s.Dir)
	exe, _ := os.Executable()
	before := treeOf(t, home)
	dry, err := s.Install(sel, Dispatcher{Exe: exe}, InstallOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if after := treeOf(t, home); after != before {
		t.Fatalf("the dry run wrote:\n%s\nwas:\n%s", after, before)
	}
	res, err := s.Install(sel, Dispatcher{Exe: exe}, InstallOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(dry, res) {
		t.Errorf("dry run reported %+v\ninstall reported %+v", dry, res)
	}
	if treeOf(t, home) == before {
		t.Error("install wrote nothing")
	}
}

// treeOf lists every file under dir with its size and mode.
func treeOf(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v %d\n", strings.TrimPrefix(p, dir), info.Mode(), info.Size())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
