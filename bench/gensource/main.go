// Command gensource writes a synthetic author source for benchmarks:
//
//	go run ./bench/gensource -packages 1000 -out DIR
//	go run ./bench/gensource -packages 0 -big 1040000 -out DIR
//	go run ./bench/gensource -shape own -packages 1000 -out DIR
//	go run ./bench/gensource -shape skills -packages 1000 -out DIR
//	go run ./bench/gensource -shape toolbox -packages 1000 -out DIR
//	go run ./bench/gensource -shape docs -packages 1000 -out DIR
//	go run ./bench/gensource -shape styled -packages 1000 -out DIR
//	go run ./bench/gensource -shape crew -packages 1000 -out DIR
//	go run ./bench/gensource -shape gates -packages 1000 -out DIR
//	go run ./bench/gensource -shape folders -packages 1000 -out DIR
//	go run ./bench/gensource -shape commands -packages 1000 -out DIR
//
// See package dalo/bench/sourcegen for what the packages hold: -shape pool
// (the default) draws members from a shared pool, -shape own gives every
// package members of its own and larger files (about 36 KB a package),
// -shape skills six small skills with long front matter and an agent of
// its own, and no tools or hooks, -shape toolbox one agent and many small
// tools and hooks in a long manifest written in other TOML styles, each
// tool with a deep folder of helpers, -shape docs four instructions and
// three agents of its own under a short manifest, -shape styled what own's
// hold, written in other TOML and YAML styles, with CR LF line ends and
// text outside ASCII, -shape crew twelve subagents of Claude Code's style
// a package (escaped double-quoted descriptions), -shape gates forty
// tool-call hooks a package with long matchers and many bindings, -shape
// folders three skills a package laid out as Codex's published skills
// are, each a folder of four folders and five files, -shape commands six
// skills and two subagents a package written as Claude Code's
// documentation writes a plugin's commands (its own front matter keys,
// block lists of tools, hooks maps).
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"dalo/bench/sourcegen"
)

// shapes are the -shape values beside pool, each with its writer and
// what its packages hold.
var shapes = []struct {
	name, holds string
	write       func(dir string, n int) error
}{
	{"own", "members of each package's own", sourcegen.WriteOwn},
	{"skills", "many small skills of each package's own", sourcegen.WriteSkills},
	{"toolbox", "many small tools and hooks, one agent", sourcegen.WriteToolbox},
	{"docs", "instructions and agents of each package's own", sourcegen.WriteDocs},
	{"styled", "own's packages written in other TOML and YAML styles, CR LF and text outside ASCII", sourcegen.WriteStyled},
	{"crew", "twelve subagents of Claude Code's style a package", sourcegen.WriteCrew},
	{"gates", "forty tool-call hooks a package with long matchers and many bindings", sourcegen.WriteGates},
	{"folders", "three skills a package, each a folder as Codex lays them out (scripts, references, assets, agents)", sourcegen.WriteFolders},
	{"commands", "six skills and two subagents a package as Claude Code writes a plugin's commands (its own front matter keys, tool lists, hooks)", sourcegen.WriteCommands},
}

func main() {
	n := flag.Int("packages", 1000, "number of packages")
	big := flag.Int("big", 0, "also write package big with a manifest of about this many bytes (shape pool)")
	names := []string{"pool"}
	help := "pool: members from a shared pool"
	for _, s := range shapes {
		names = append(names, s.name)
		help += "; " + s.name + ": " + s.holds
	}
	shape := flag.String("shape", "pool", help)
	out := flag.String("out", "", "directory to create (must not exist)")
	flag.Parse()
	write := func(dir string, n int) error { return sourcegen.Write(dir, n, *big) }
	known := *shape == "pool"
	for _, s := range shapes {
		if s.name == *shape {
			write, known = s.write, true
		}
	}
	if *out == "" || flag.NArg() != 0 || !known || (*shape != "pool" && *big != 0) {
		fmt.Fprintf(os.Stderr, "usage: gensource [-shape %s] [-packages N] [-big BYTES] -out DIR\n", strings.Join(names, "|"))
		os.Exit(2)
	}
	if _, err := os.Stat(*out); err == nil {
		fmt.Fprintf(os.Stderr, "gensource: %s already exists\n", *out)
		os.Exit(2)
	}
	if err := write(*out, *n); err != nil {
		fmt.Fprintf(os.Stderr, "gensource: %v\n", err)
		os.Exit(1)
	}
}
