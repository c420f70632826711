package main

import (
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"dalo/engine"
	"dalo/providers"
	"dalo/store"
)

const completionDoc = `Completion prints a script that makes the shell complete dalo's command
lines: commands, flags, the providers and their versions (--provider, and
'dalo providers show'), registered sources, and the packages of registered
sources (SOURCE:NAME). The script asks dalo itself as you type, so it knows
every command of the dalo it runs and what your store holds now; where
dalo has nothing to offer, the shell completes file names.

Bash (with bash-completion, or alone):
  source <(dalo completion bash)              # in ~/.bashrc
Zsh:
  source <(dalo completion zsh)               # in ~/.zshrc, after compinit
Fish:
  dalo completion fish > ~/.config/fish/completions/dalo.fish

Exit status: 0 printed; 2 bad usage.

Examples:
  dalo completion bash > /etc/bash_completion.d/dalo
`

func init() {
	register(&command{name: "completion", usage: "bash|zsh|fish", short: "print a shell completion script", doc: completionDoc, run: runCompletion, verbatim: true})
}

// completionScripts are the shell ends of completion: each hands the words
// before the cursor to 'dalo __complete' and offers what it prints, one
// candidate a line; nothing printed means file names.
var completionScripts = map[string]string{
	"bash": `# bash completion for dalo (dalo completion bash)
_dalo() {
	local line=${COMP_LINE:0:COMP_POINT}
	local -a words
	IFS=$' \t' read -r -a words <<<"${line}" || true
	[[ ${line} == *[[:space:]] ]] && words+=("")
	local IFS=$'\n'
	COMPREPLY=($("${words[0]}" __complete "${words[@]:1}" 2>/dev/null))
	# bash splits words at ':' too (COMP_WORDBREAKS): offer what follows
	# the last one, as bash-completion's __ltrim_colon_completions does.
	local cur=${words[${#words[@]}-1]}
	if [[ ${cur} == *:* && ${COMP_WORDBREAKS} == *:* ]]; then
		local pre=${cur%"${cur##*:}"}
		COMPREPLY=("${COMPREPLY[@]#"${pre}"}")
	fi
}
complete -o default -F _dalo dalo
`,
	"zsh": `#compdef dalo
# zsh completion for dalo (dalo completion zsh)
_dalo() {
	local -a cands
	cands=("${(@f)$(${words[1]} __complete "${(@)words[2,CURRENT]}" 2>/dev/null)}")
	cands=(${cands:#})
	if (( ${#cands} == 0 )); then
		_files
		return
	fi
	compadd -Q -- "${cands[@]}"
}
if [[ ${funcstack[1]} == _dalo ]]; then
	_dalo "$@"
else
	compdef _dalo dalo
fi
`,
	"fish": `# fish completion for dalo (dalo completion fish)
function __dalo_complete
	set -l words (commandline -opc)
	set -l out (command dalo __complete $words[2..-1] (commandline -ct) 2>/dev/null)
	if test (count $out) -eq 0
		__fish_complete_path (commandline -ct)
	else
		printf '%s\n' $out
	end
end
complete -c dalo -f -a '(__dalo_complete)'
`,
}

func runCompletion(e *env, fs *pflag.FlagSet) int {
	if fs.NArg() != 1 || completionScripts[fs.Arg(0)] == "" {
		return usageError(e, "completion", "want one shell: bash, zsh or fish")
	}
	fmt.Fprint(e.stdout, completionScripts[fs.Arg(0)])
	return exitOK
}

// runComplete is 'dalo __complete WORD...', what the completion scripts
// call: WORDs are the command line after dalo up to the cursor, the last
// the word being completed ("" at a space). It prints the candidates that
// extend it, one a line. It is no command of the table: flags among the
// words are words to complete, not its own.
func runComplete(e *env, words []string) int {
	if len(words) == 0 {
		words = []string{""}
	}
	for _, c := range complete(words[:len(words)-1], words[len(words)-1]) {
		fmt.Fprintln(e.stdout, c)
	}
	return exitOK
}

// complete returns what may follow the words before, starting with cur:
// the next word of a command name, a flag of the command, the value of the
// flag before the cursor, or the command's next argument.
func complete(before []string, cur string) []string {
	// dalo's own flags come before the command.
	for len(before) > 0 && strings.HasPrefix(before[0], "-") {
		before = before[1:]
	}
	c, rest := lookup(before)
	if c == nil || c.name == "help" {
		if c != nil {
			before = rest
		}
		if c == nil && len(before) == 0 && strings.HasPrefix(cur, "-") {
			return withPrefix([]string{"--help", "--json", "--version"}, cur)
		}
		return withPrefix(nextWords(before), cur)
	}
	fs := c.flagSet(&env{})
	if n := len(rest); n > 0 && strings.HasPrefix(rest[n-1], "--") && !strings.Contains(rest[n-1], "=") {
		if f := fs.Lookup(rest[n-1][2:]); f != nil && f.Value.Type() != "bool" {
			return withPrefix(flagValues(f.Name), cur)
		}
	}
	if strings.HasPrefix(cur, "-") {
		var names []string
		fs.VisitAll(func(f *pflag.Flag) { names = append(names, "--"+f.Name) })
		return withPrefix(names, cur)
	}
	args := 0
	for i := 0; i < len(rest); i++ {
		switch w := rest[i]; {
		case w == "--":
		case strings.HasPrefix(w, "--"):
			if f := fs.Lookup(strings.TrimPrefix(w, "--")); f != nil && f.Value.Type() != "bool" {
				i++ // its value
			}
		case strings.HasPrefix(w, "-") && len(w) > 1:
		default:
			args++
		}
	}
	var out []string
	if args == 0 {
		// A command that is also a group: providers show.
		out = nextWords(strings.Fields(c.name))
	}
	return withPrefix(append(out, argValues(c, args)...), cur)
}

// nextWords lists the words that follow before in the names of commands,
// sorted: after "plugin", approve ... validate.
func nextWords(before []string) []string {
	var out []string
	for _, c := range commands {
		w := strings.Fields(c.name)
		if len(w) > len(before) && slices.Equal(w[:len(before)], before) {
			out = append(out, w[len(before)])
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// argCompletion says what a command's arguments are, where its usage's
// SOURCE:NAME does not: registered sources, providers, shells.
var argCompletion = map[string]func(arg int) []string{
	"source update":  first(sourceIDs),
	"source remove":  first(sourceIDs),
	"providers show": first(providerKeys),
	"providers use":  first(providerNames),
	"providers remove": first(func() []string {
		if s := completionStore(); s != nil {
			return s.LocalTableKeys()
		}
		return nil
	}),
	"completion": first(func() []string { return slices.Sorted(maps.Keys(completionScripts)) }),
}

func first(f func() []string) func(int) []string {
	return func(arg int) []string {
		if arg != 0 {
			return nil
		}
		return f()
	}
}

// argValues is what argument number arg (from 0) of c may be.
func argValues(c *command, arg int) []string {
	if f, ok := argCompletion[c.name]; ok {
		return f(arg)
	}
	// The first argument of the usage, past the flags some usages show
	// first (plugin review's [--json]).
	usage := strings.Fields(c.usage)
	for len(usage) > 0 && strings.HasPrefix(strings.TrimLeft(usage[0], "["), "-") {
		usage = usage[1:]
	}
	if len(usage) > 0 {
		switch first := strings.Trim(usage[0], "[]"); {
		case first == "SOURCE:NAME" && arg == 0, first == "SOURCE:NAME...":
			return packageRefs()
		}
	}
	return nil
}

// flagValues is what the value of the flag name may be.
func flagValues(name string) []string {
	switch name {
	case "provider":
		return append(providerNames(), providerKeys()...)
	case "target":
		return store.Providers() // or a PATH: the shell completes files
	}
	return nil
}

func providerKeys() []string {
	ts, err := providers.Load()
	if err != nil {
		return nil
	}
	var out []string
	for _, t := range ts.All() {
		out = append(out, t.Key())
	}
	slices.Sort(out)
	return out
}

func providerNames() []string { return store.Providers() }

// completionStore opens the store for completion, which says nothing when
// it cannot.
func completionStore() *store.Store {
	s, ok := openStore(&env{stderr: io.Discard}, "")
	if !ok {
		return nil
	}
	return s
}

func sourceIDs() []string {
	s := completionStore()
	if s == nil {
		return nil
	}
	srcs, _ := s.Sources()
	var out []string
	for _, src := range srcs {
		out = append(out, src.ID)
	}
	return out
}

// packageRefs lists SOURCE:NAME for the package directories of every
// registered source, as the layout places them, without validating them:
// completion must be quick.
func packageRefs() []string {
	s := completionStore()
	if s == nil {
		return nil
	}
	srcs, _ := s.Sources()
	if len(srcs) == 0 {
		return nil
	}
	r, err := engine.LoadRules()
	if err != nil {
		return nil
	}
	dir := r.Layout["plugin"].Dir
	var out []string
	for _, src := range srcs {
		entries, _ := os.ReadDir(filepath.Join(src.Path, filepath.FromSlash(dir)))
		for _, d := range entries {
			if d.IsDir() {
				out = append(out, src.ID+":"+d.Name())
			}
		}
	}
	return out
}

// withPrefix keeps the candidates that start with cur.
func withPrefix(cands []string, cur string) []string {
	var out []string
	for _, c := range cands {
		if strings.HasPrefix(c, cur) {
			out = append(out, c)
		}
	}
	return out
}
