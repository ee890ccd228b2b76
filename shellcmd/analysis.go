package shellcmd

import (
	"fmt"
	"path/filepath"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Options say where a line runs and how far to read.
type Options struct {
	// Dir is the directory the line starts in; "" when it cannot be told.
	Dir string
	// Home replaces "~" and is where a bare cd goes.
	Home string
	// ScriptArgs also reads a script given to a shell with -c, to su -c or
	// to eval in the arguments of a program the analysis does not know (ssh
	// host sh -c '...', flock f sh -c '...', docker exec c sh -c '...'), as
	// if that program ran it there. A guard that must see every write wants
	// this even though it may read commands into plain arguments (echo sh
	// -c x); rule matching, which must not, leaves it off.
	ScriptArgs bool
	// Vars are values known for variables: a plain $NAME or ${NAME} of
	// one expands to its value, as "~" does, instead of making the word
	// dynamic. The caller must check that the line does not set them
	// (Analysis.Assigns).
	Vars map[string]string
}

// Analysis is what a command line runs, as far as its text tells.
type Analysis struct {
	// Line is the analysed text.
	Line string
	// Commands lists every simple command in the order they start
	// (a command substitution before the command that holds it).
	Commands []*Command
	// Redirects lists redirections to and from files.
	Redirects []*Redirect
	// Assigns lists every variable the line sets, in order.
	Assigns []*Assignment
	// Cds lists every directory a cd or pushd may move to, in order; ""
	// stands for one that cannot be told.
	Cds []string
	// StdioReopened is set when a redirection gives standard output or
	// error a descriptor this line did not open for writing: a file opened
	// for reading ("1<f", "2<&3") or another descriptor ("1>&3"). Writing
	// to /dev/stdout, /dev/stderr or /dev/fd/1 or 2 reopens whatever the
	// descriptor is, so after such a redirection those are files too.
	StdioReopened bool
	// Notes lists what the analysis could not see into or wants to warn
	// about, each once.
	Notes []Note
}

// Understood reports whether the analysis saw the whole line: no note is
// Unknown.
func (a *Analysis) Understood() bool {
	for _, n := range a.Notes {
		if n.Kind == Unknown {
			return false
		}
	}
	return true
}

// Command is one simple command and the wrappers it runs under.
type Command struct {
	// Layers are the command as written and what each wrapper runs,
	// outermost first: "sudo -u x rm -f y" has the layers [sudo -u x rm -f
	// y] and [rm -f y]; a command from a bash -c script has the bash layer
	// outside it. There is always at least one layer with at least one word.
	Layers []*Layer
	// Dirs are the directories it may run in; "" stands for one that
	// cannot be told.
	Dirs []string
	// Assigns are the variables set in its environment (NAME=value before
	// it or before the wrapper it runs under, env NAME=value, sudo
	// NAME=value).
	Assigns []*Assignment
	// Notes are the notes that concern this command or a wrapper around it.
	Notes []Note
	// Function is set when the command calls a shell function defined
	// earlier in the line; the commands of its body follow it in
	// Analysis.Commands, with this call's directories.
	Function bool

	call *syntax.CallExpr
}

// Program returns the innermost layer: the program that really runs.
func (c *Command) Program() *Layer { return c.Layers[len(c.Layers)-1] }

// Source returns the simple command as written (reprinted from the parse),
// for messages.
func (c *Command) Source() string {
	if c.call == nil {
		return wordsText(c.Layers[0].Words)
	}
	return printNode(c.call)
}

// Layer is one level of a command.
type Layer struct {
	// Words are the program name and its arguments.
	Words []Word
	// Transparent is set on a wrapper that adds nothing to what the layer
	// inside it does (nohup, timeout, nice, env with only variables, bash -c
	// with a script that was read, ...), named plainly (not ./env).
	Transparent bool
	// OpenArgs is set when more arguments arrive at run time (xargs, find
	// -exec ... +).
	OpenArgs bool
	// Uncertain is set on a wrapper some of whose options were not
	// recognised: the command it runs may start at another word.
	Uncertain bool
}

// Name returns the first word, the program name (zero for no words).
func (l *Layer) Name() Word {
	if len(l.Words) == 0 {
		return Word{}
	}
	return l.Words[0]
}

// Word is one argument after expansion.
type Word struct {
	// Value is the text after quote removal, tilde and brace expansion; ""
	// when Dynamic.
	Value string
	// Dynamic is set when the value is only known at run time ($x, $(cmd),
	// $((n)), ~user, or past the expansion limits).
	Dynamic bool
	// Glob is set when Value holds an unquoted *, ? or [...]: the shell
	// replaces it with the names of the files it matches, which may be
	// anything a file can be called ("-rf", "--output=x") or several words.
	Glob bool

	src *syntax.Word
}

// String returns the value, or the source text of a dynamic word.
func (w Word) String() string {
	if w.Dynamic {
		if w.src == nil {
			return "$…"
		}
		return printNode(w.src)
	}
	return w.Value
}

// Is reports whether w is exactly the static, non-pattern word s.
func (w Word) Is(s string) bool { return w.Static() && w.Value == s }

// Static reports whether the word is fixed text: neither dynamic nor a
// pattern.
func (w Word) Static() bool { return !w.Dynamic && !w.Glob }

// option reports whether w is a static word starting with "-".
func (w Word) option() bool { return w.Static() && strings.HasPrefix(w.Value, "-") }

// Redirect is a redirection to or from a file.
type Redirect struct {
	// Write is set for output (>, >>, &>, <>, >|, >&file); input (<, <&file)
	// reads.
	Write bool
	// Target is the file; Dynamic when it is not exactly one static word.
	Target Word
	// Dirs are the directories it may be opened in.
	Dirs []string
}

// Assignment is a variable the line sets.
type Assignment struct {
	// Name is the variable.
	Name string
	// Values is the value (Bash does not split or brace-expand it, so there
	// is one word); one Dynamic word when it is only known at run time; nil
	// when the assignment gives no scalar value (export NAME, an array).
	Values []Word
	// Builtin is "" for NAME=value, or what assigns it: export, declare,
	// local, readonly, typeset, nameref, env, sudo, read, mapfile,
	// readarray, getopts, printf.
	Builtin string
	// Prefix is set when the variable is set only in the environment of the
	// command it comes with (NAME=value cmd, env and sudo).
	Prefix bool
	// Dirs are the directories the shell may be in when it is set.
	Dirs []string
}

// Note is something a caller may have to refuse or ask about.
type Note struct {
	Kind NoteKind
	// Reason is a clause for a sentence ("the command name $c is only
	// known at run time").
	Reason string
}

// NoteKind says how much of the line a note leaves unseen.
type NoteKind int

const (
	// Unknown: part of the line could not be understood, so what it runs
	// or where cannot be told. Callers fail closed.
	Unknown NoteKind = iota + 1
	// Hidden: the line runs code that is not in it (a script file, standard
	// input given to a shell, source, another language's shell).
	Hidden
	// Caution: understood, but it can make commands do something other
	// than their words say (eval, alias, arithmetic evaluation, ${x@P},
	// hash, a cd into the unknown, unrecognised wrapper options).
	Caution
)

func (k NoteKind) String() string {
	switch k {
	case Unknown:
		return "unknown"
	case Hidden:
		return "hidden"
	case Caution:
		return "caution"
	}
	return fmt.Sprintf("NoteKind(%d)", int(k))
}

// Analyze reads a Bash command line. It never fails: what it cannot read is
// reported as an Unknown note.
func Analyze(line string, opts Options) *Analysis {
	a := newAnalyzer(line, opts)
	a.script(line)
	return a.res
}

// IsName reports whether s is a valid shell variable name.
func IsName(s string) bool {
	for i, c := range s {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || (i > 0 && c >= '0' && c <= '9')) {
			return false
		}
	}
	return s != ""
}

// PlainName reports whether a program name is looked up in PATH or names a
// standard system directory, so that "env" or "/usr/bin/env" really is env
// and "./env" is not.
func PlainName(name string) bool {
	if !strings.Contains(name, "/") {
		return true
	}
	switch filepath.Dir(name) {
	case "/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin":
		return true
	}
	return false
}

func wordsText(ws []Word) string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.String()
	}
	return strings.Join(out, " ")
}

func printNode(n syntax.Node) string {
	var b strings.Builder
	if err := syntax.NewPrinter().Print(&b, n); err != nil {
		return fmt.Sprintf("%T", n)
	}
	return strings.TrimSpace(b.String())
}
