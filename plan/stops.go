package plan

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"dalo/internal/regular"
)

// StopsDir is where, under the store, dispatch counts the workflow passes
// failing fail_closed hooks asked for in a row: stops/<provider>/<key>,
// one small file per session whose current stop has such passes, holding
// their number. The key is the sha256 of the session id (the harness
// chooses it; hashed, it is a safe file name). See [FailClosedPasses].
const StopsDir = "stops"

// stopsMaxAge is how long a count is kept once nothing writes it: a
// session that ended in the middle of a stop leaves its file, which the
// next write in the directory removes after this long.
const stopsMaxAge = 24 * time.Hour

func stopsFile(home, provider, session string) string {
	sum := sha256.Sum256([]byte(session))
	return filepath.Join(home, StopsDir, provider, hex.EncodeToString(sum[:]))
}

// StopPasses returns how many passes in a row failing fail_closed hooks
// asked for in session's current stop, as [SetStopPasses] recorded it: 0
// when nothing is recorded. A file that is not a count (damaged, or not a
// regular file) is an error: the caller cannot tell how many passes were
// asked for.
func StopPasses(home, provider, session string) (int, error) {
	name := stopsFile(home, provider, session)
	f, _, err := regular.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("reading the pass count: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 32))
	if err != nil {
		return 0, fmt.Errorf("reading the pass count %s: %w", name, err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("the pass count %s holds %q, not a count", name, b)
	}
	return n, nil
}

// SetStopPasses records n as the passes in a row of session's current
// stop; 0 removes the record. A count is written whole (a temporary file,
// synced, renamed over the old one, the directory synced): a reader sees
// the old count or the new one, and a count that returned is on disk, so
// that a crash cannot forget a pass and let a broken hook loop the agent.
// Writing one also removes the counts no session wrote for a day.
func SetStopPasses(home, provider, session string, n int) error {
	name := stopsFile(home, provider, session)
	dir := filepath.Dir(name)
	if n <= 0 {
		err := os.Remove(name)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing the pass count: %w", err)
		}
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("recording the pass count: %w", err)
	}
	if err := WriteFile(name, ".", []byte(strconv.Itoa(n)+"\n"), 0o600, nil); err != nil {
		return fmt.Errorf("recording the pass count: %w", err)
	}
	pruneStops(dir, name)
	return nil
}

// pruneStops removes from dir, except keep, what nothing wrote for
// stopsMaxAge: counts of sessions that ended mid-stop, and temporary files
// of a dispatch killed while it wrote one.
func pruneStops(dir, keep string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	old := time.Now().Add(-stopsMaxAge)
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		if p == keep {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() && fi.ModTime().Before(old) {
			os.Remove(p)
		}
	}
}
