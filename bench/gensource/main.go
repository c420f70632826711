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
// tool-call hooks a package with long matchers and many bindings.
package main

import (
	"flag"
	"fmt"
	"os"

	"dalo/bench/sourcegen"
)

func main() {
	n := flag.Int("packages", 1000, "number of packages")
	big := flag.Int("big", 0, "also write package big with a manifest of about this many bytes (shape pool)")
	shape := flag.String("shape", "pool", "pool: members from a shared pool; own: members of each package's own; skills: many small skills of each package's own; toolbox: many small tools and hooks, one agent; docs: instructions and agents of each package's own; styled: own's packages written in other TOML and YAML styles, CR LF and text outside ASCII; crew: twelve subagents of Claude Code's style a package; gates: forty tool-call hooks a package with long matchers and many bindings")
	out := flag.String("out", "", "directory to create (must not exist)")
	flag.Parse()
	if *out == "" || flag.NArg() != 0 || (*shape != "pool" && *shape != "own" && *shape != "skills" && *shape != "toolbox" && *shape != "docs" && *shape != "styled" && *shape != "crew" && *shape != "gates") || (*shape != "pool" && *big != 0) {
		fmt.Fprintln(os.Stderr, "usage: gensource [-shape pool|own|skills|toolbox|docs|styled|crew|gates] [-packages N] [-big BYTES] -out DIR")
		os.Exit(2)
	}
	if _, err := os.Stat(*out); err == nil {
		fmt.Fprintf(os.Stderr, "gensource: %s already exists\n", *out)
		os.Exit(2)
	}
	var err error
	switch *shape {
	case "own":
		err = sourcegen.WriteOwn(*out, *n)
	case "skills":
		err = sourcegen.WriteSkills(*out, *n)
	case "toolbox":
		err = sourcegen.WriteToolbox(*out, *n)
	case "docs":
		err = sourcegen.WriteDocs(*out, *n)
	case "styled":
		err = sourcegen.WriteStyled(*out, *n)
	case "crew":
		err = sourcegen.WriteCrew(*out, *n)
	case "gates":
		err = sourcegen.WriteGates(*out, *n)
	default:
		err = sourcegen.Write(*out, *n, *big)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "gensource: %v\n", err)
		os.Exit(1)
	}
}
