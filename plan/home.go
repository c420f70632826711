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
