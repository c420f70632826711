package plan

import (
	"fmt"
	"os"
	"path/filepath"
)

// Home is the store directory: $DALO_HOME, else $XDG_DATA_HOME/dalo, else
// ~/.local/share/dalo. It lives here, beside the layout it roots, because
// the dispatcher needs it and must not link package store.
func Home() (string, error) {
	if d := os.Getenv("DALO_HOME"); d != "" {
		return filepath.Abs(d)
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Abs(filepath.Join(d, "dalo"))
	}
	h, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("locating the store: %w (set DALO_HOME)", err)
	}
	return filepath.Join(h, ".local", "share", "dalo"), nil
}

// ProjectsDir is the directory of the store home that holds the project
// scopes: projects/<id>/ keeps one project's install records and dispatch
// plans, as the store's own installs/ and plans/ keep the user's.
const ProjectsDir = "projects"

// PlansDir is the directory of the dispatch plans of the scope project of
// the store home: the user's own (plans/) when project is "", else the
// project's (projects/<project>/plans). A project id is ValidProject.
func PlansDir(home, project string) string {
	if project == "" {
		return filepath.Join(home, "plans")
	}
	return filepath.Join(home, ProjectsDir, project, "plans")
}

// ValidProject says whether id is a project scope's id: 16 lowercase hex
// digits (the store names it so), never a path.
func ValidProject(id string) bool {
	if len(id) != 16 {
		return false
	}
	for _, c := range id {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
