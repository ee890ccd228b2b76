package permission

import (
	"strings"

	"github.com/cohort-dev/cohort/shellcmd"
)

// The rule matcher compares commands as plain word lists. The shell
// analysis (package shellcmd) is turned into that form here: a dynamic
// word becomes dynWord, a pattern gets globMark in front.

// dynWord stands for a word whose value is only known at run time ($x,
// $(cmd), $((1+2)), ...). A NUL byte cannot occur in a real argument.
const dynWord = "\x00"

// globMark prefixes a word holding unquoted glob characters: when the
// command runs, the shell replaces it with the names it matches, which may
// be anything a file can be called (including "-rf" or "--output=x").
const globMark = "\x01"

func isGlob(w string) bool { return strings.HasPrefix(w, globMark) }

// plain returns a word without its glob mark.
func plain(w string) string { return strings.TrimPrefix(w, globMark) }

func wordOf(w shellcmd.Word) string {
	switch {
	case w.Dynamic:
		return dynWord
	case w.Glob:
		return globMark + w.Value
	}
	return w.Value
}

func wordsOf(ws []shellcmd.Word) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = wordOf(w)
	}
	return out
}

// layer is one level of a command: "sudo rm -rf x" has the layers
// [sudo rm -rf x] and [rm -rf x].
type layer struct {
	words []string
	// transparent wrappers (nohup, timeout, env with harmless variables,
	// bash -c with a fully analysed script) add nothing to what their inner
	// command does, so an allow rule for the inner command covers them.
	transparent bool
	// openArgs: more arguments arrive at run time (xargs, find -exec).
	openArgs bool
	// alts are extra word lists deny and ask rules are tried against, for
	// wrappers whose options could not be parsed with certainty: every tail
	// of the arguments that starts with a word that is not an option.
	alts [][]string
}

func (l *layer) name() string {
	if len(l.words) == 0 {
		return ""
	}
	return l.words[0]
}

func layerOf(l *shellcmd.Layer) *layer {
	out := &layer{words: wordsOf(l.Words), transparent: l.Transparent, openArgs: l.OpenArgs}
	if l.Uncertain {
		for i, w := range out.words {
			if i > 0 && !strings.HasPrefix(w, "-") {
				out.alts = append(out.alts, out.words[i:])
			}
		}
	}
	return out
}

// command is one simple command found in a line, with the wrappers it runs
// under (outermost first) and the working directories it may run in.
type command struct {
	layers []*layer
	cwds   []string // "" stands for a directory that cannot be determined
}

func (c *command) inner() *layer { return c.layers[len(c.layers)-1] }

func toCommand(c *shellcmd.Command) *command {
	out := &command{cwds: c.Dirs}
	for _, l := range c.Layers {
		out.layers = append(out.layers, layerOf(l))
	}
	return out
}

// redirect is an I/O redirection to or from a file.
type redirect struct {
	write  bool
	target string // dynWord when not static
	cwds   []string
}

// analysis is everything a line does that permissions care about.
type analysis struct {
	line     string
	commands []*command
	redirs   []redirect
	// cds are the directories "cd" may change to ("" when unknown).
	cds []string
	// opaque lists what could not be looked into (parse errors, dynamic
	// command names, scripts read from files or stdin). Such a line is never
	// auto-allowed, and deny rules cannot be ruled out for it.
	opaque []string
	// unsafe lists what was understood but must never be auto-allowed
	// (eval, PATH=..., unparsable wrapper options).
	unsafe []string
	// stdioReopened: standard output or error may hold a descriptor
	// opened for reading, so /dev/stdout and the like are files
	// (shellcmd.Analysis.StdioReopened).
	stdioReopened bool
}

// analyze parses a Bash command line. cwd is where it starts ("" when
// unknown); home expands "~".
func analyze(line, cwd, home string) *analysis {
	sa := shellcmd.Analyze(line, shellcmd.Options{Dir: cwd, Home: home})
	an := &analysis{line: line, cds: sa.Cds, stdioReopened: sa.StdioReopened}
	for _, n := range sa.Notes {
		if n.Kind == shellcmd.Caution {
			an.unsafe = append(an.unsafe, n.Reason)
		} else {
			an.opaque = append(an.opaque, n.Reason)
		}
	}
	for _, as := range sa.Assigns {
		if why := assignProblem(as); why != "" {
			an.unsafe = append(an.unsafe, why)
		}
	}
	for _, c := range sa.Commands {
		an.commands = append(an.commands, toCommand(c))
	}
	for _, r := range sa.Redirects {
		an.redirs = append(an.redirs, redirect{write: r.Write, target: wordOf(r.Target), cwds: r.Dirs})
	}
	return an
}
