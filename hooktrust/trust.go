// Package hooktrust holds what a harness that runs only the hooks its user
// trusted knows dalo's entries by: the key of an entry's place in the
// hooks file, the hash the harness itself reports for it, and where the
// harness keeps that trust. Codex keeps a hash of each trusted hook's
// definition in its config.toml, written by its /hooks review.
//
// dalo's grants decide what dalo runs; the harness's trust only decides
// whether it starts dalo's dispatcher at all. Install --trust records that
// trust for dalo's own entries, and nothing else, as the harness's review
// would: with the hash the harness itself reports for the entry, never one
// dalo computes. The hash covers the entry's definition (command, timeout,
// matcher), not the files it runs, so trust recorded once stays valid
// while the entry does; dalo's grants cover the bytes. Package store
// keeps the records, and edits the trust file with package tomledit.
package hooktrust

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"dalo/codexapp"
	"dalo/hooksfile"
	"dalo/providers"
	"dalo/tomledit"
)

// A Record is the harness trust dalo recorded for one of its entries:
// the key the harness knows the entry by, the hash it reported, the entry
// as it was then, and the text dalo appended to the trust file (to remove
// it whole), if it appended it rather than changed a value in place.
type Record struct {
	Key   string          `json:"key"`
	Hash  string          `json:"hash"`
	Entry hooksfile.Entry `json:"entry"`
	Added string          `json:"added,omitempty"`
}

// Key is the key a trust-keeping harness knows the handler of group
// index group of event by, in the hooks file file: <file>:<event in snake
// case>:<group>:<handler>, dalo's entries having one handler. snake, when
// set, is the event's name as the harness spelled it in a key it listed.
func Key(file, event, snake string, group int) string {
	if snake == "" {
		snake = snakeCase(event)
	}
	return file + ":" + snake + ":" + strconv.Itoa(group) + ":0"
}

// KeySnake is the event part of a key Key made, or "".
func KeySnake(key, file string) string {
	rest, ok := strings.CutPrefix(key, file+":")
	if !ok {
		return ""
	}
	snake, _, _ := strings.Cut(rest, ":")
	return snake
}

// snakeCase spells a native event in snake case, as Codex's trust keys do:
// PreToolUse, pre_tool_use.
func snakeCase(s string) string {
	var b strings.Builder
	for i, r := range s {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('_')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// File is the file where t's harness keeps its trust, or "" when it
// keeps none dalo can read.
func File(t *providers.Table, getenv func(string) string) (string, error) {
	st := t.Config.Trust.State
	if st == nil {
		return "", nil
	}
	p, err := t.Path(st.Location, getenv)
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r, nil
	}
	return p, nil
}

// Hashes asks the harness (the executable exe) for the hash of each of
// the entries want (native event → entry): it writes them alone into a
// hooks file of a scratch home and lists the hooks read there. It returns
// per event the hash and the event's name in keys. Only a listed hook whose
// command is byte for byte the entry's counts.
func Hashes(t *providers.Table, exe string, want map[string]hooksfile.Entry) (hashes, snakes map[string]string, err error) {
	if t.Config.Trust.State == nil || t.Config.Trust.State.List != providers.TrustListCodexAppServer {
		return nil, nil, fmt.Errorf("%s keeps no trust dalo can record", t.Key())
	}
	dir, err := os.MkdirTemp("", "dalo-trust-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(dir)
	if dir, err = filepath.EvalSymlinks(dir); err != nil {
		return nil, nil, err
	}
	hooks := map[string][]hooksfile.Entry{}
	for ev, e := range want {
		hooks[ev] = []hooksfile.Entry{e}
	}
	b, err := json.MarshalIndent(map[string]any{"hooks": hooks}, "", "  ")
	if err != nil {
		return nil, nil, err
	}
	home := filepath.Join(dir, ".codex")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return nil, nil, err
	}
	file := filepath.Join(home, filepath.Base(t.Config.Hooks.Path))
	if err := os.WriteFile(file, b, 0o600); err != nil {
		return nil, nil, err
	}
	listed, err := codexapp.ListHooks(exe, dir)
	if err != nil {
		return nil, nil, err
	}
	hashes, snakes = map[string]string{}, map[string]string{}
	for ev, e := range want {
		for _, h := range listed {
			if h.Command == e.Command(t) && strings.HasPrefix(h.Key, file+":") && strings.HasPrefix(h.Hash, "sha256:") {
				hashes[ev], snakes[ev] = h.Hash, KeySnake(h.Key, file)
			}
		}
		if hashes[ev] == "" {
			return nil, nil, fmt.Errorf("%s app-server did not list dalo's %s entry with a hash (it listed %d hooks); trust dalo's entries in its /hooks review instead", exe, ev, len(listed))
		}
	}
	return hashes, snakes, nil
}

// Refused says why the trust file cannot take dalo's trust, and what the
// user can do instead.
func Refused(e *tomledit.RefusedError) error {
	const instead = "trust dalo's entries in the harness's own review instead"
	switch {
	case e.Err != nil:
		return fmt.Errorf("%s: dalo cannot add its trust to this file (%v); %s", e.File, e.Err, instead)
	case e.Key != "":
		return fmt.Errorf("%s: dalo cannot add its trust for %s to this file as it is written; %s", e.File, e.Key, instead)
	}
	return fmt.Errorf("%s: adding dalo's trust would change more of this file than dalo's keys; %s", e.File, instead)
}

// Moved lists the hooks of the user's in the hooks file whose trust key a
// change of dalo's entries (o's) moves, old doc to new: the harness knows a
// hook by its place, so a moved one is untrusted until its user reviews it
// again. dalo adds its entries after the user's and replaces them in
// place, so only a removal moves a key.
func Moved(o hooksfile.Owner, file string, old, new []byte) []string {
	if old == nil || new == nil {
		return nil
	}
	_, oh, _, err1 := o.Scan(file, old)
	_, nh, _, err2 := o.Scan(file, new)
	if err1 != nil || err2 != nil || oh == nil || nh == nil {
		return nil
	}
	var out []string
	for _, m := range oh.Members {
		nm := nh.Member(m.Key)
		if m.Val.Kind != '[' || nm == nil || nm.Val.Kind != '[' {
			continue
		}
		var before, after []int // indexes of the user's entries
		for i, e := range m.Val.Elems {
			if _, ok := o.Owns(e); !ok {
				before = append(before, i)
			}
		}
		for i, e := range nm.Val.Elems {
			if _, ok := o.Owns(e); !ok {
				after = append(after, i)
			}
		}
		for k := 0; k < len(before) && k < len(after); k++ {
			if before[k] != after[k] {
				out = append(out, fmt.Sprintf("%s moves to %s", Key(file, m.Key, "", before[k]), Key(file, m.Key, "", after[k])))
			}
		}
	}
	return out
}
