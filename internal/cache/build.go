package cache

import (
	"bytes"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"io"
	"os"
)

// BuildID identifies the running program's build, for the keys of a cache:
// answers change with dalo's code, not only with its rules. It is the Go
// build ID the linker records (a hash of every input of the build, which
// the go command also reads), or, in a binary built without one, the
// sha256 of the executable's bytes.
func BuildID() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", err
	}
	if id := goBuildID(exe); id != "" {
		return "go:" + id, nil
	}
	f, err := os.Open(exe)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// goBuildID reads the Go build ID of the executable file name: in an ELF
// binary the note the linker writes, elsewhere the string the linker puts
// near the start of the text (as the go command's own reader does).
func goBuildID(name string) string {
	if f, err := elf.Open(name); err == nil {
		defer f.Close()
		s := f.Section(".note.go.buildid")
		if s == nil {
			return ""
		}
		data, err := s.Data()
		// A note: name size, description size, type (4: the Go build
		// ID), the name "Go\x00\x00", then the description.
		if err != nil || len(data) < 16 || string(data[12:16]) != "Go\x00\x00" {
			return ""
		}
		n := int(f.ByteOrder.Uint32(data[4:8]))
		if 16+n > len(data) {
			return ""
		}
		return string(data[16 : 16+n])
	}
	f, err := os.Open(name)
	if err != nil {
		return ""
	}
	defer f.Close()
	buf := make([]byte, 32<<10)
	n, _ := io.ReadFull(f, buf)
	buf = buf[:n]
	const prefix = "\xff Go build ID: \""
	i := bytes.Index(buf, []byte(prefix))
	if i < 0 {
		return ""
	}
	rest := buf[i+len(prefix):]
	j := bytes.IndexByte(rest, '"')
	if j <= 0 {
		return ""
	}
	return string(rest[:j])
}
