package shellcmd

import (
	"path/filepath"
	"slices"
	"strings"
)

// builtin records what a shell builtin changes for the commands after it:
// the directory (cd, pushd, popd), variables (read, printf -v), the
// program a name runs (hash, enable), or code read from a file (source).
func (a *analyzer) builtin(cmd *Command) {
	in := cmd.Program()
	name := in.Name()
	if !name.Static() {
		return
	}
	addNote := func(kind NoteKind, format string, args ...any) {
		cmd.Notes = append(cmd.Notes, a.note(kind, format, args...))
	}
	switch name.Value {
	case "cd", "pushd":
		a.cd(cmd, in)
	case "popd":
		a.unknownDir(cmd, "popd returns to a directory that cannot be determined")
	case "source", ".":
		addNote(Hidden, "%s runs commands from a file", name.Value)
	case "hash", "enable":
		addNote(Caution, "%s can change which program a command name runs", name.Value)
	case "read", "mapfile", "readarray", "getopts":
		args := in.Words[1:]
		if name.Value == "getopts" && len(args) > 0 {
			args = args[1:] // the option string
		}
		for _, w := range args {
			if w.Static() && strings.HasPrefix(w.Value, "-") {
				if (name.Value == "mapfile" || name.Value == "readarray") && strings.Contains(w.Value, "C") {
					addNote(Hidden, "%s -C runs a callback command given as text", name.Value)
				}
				// An array name may be attached to its option (read
				// -aNAME): a subscript anywhere in the word is checked.
				if strings.Contains(w.Value, "[") {
					a.nameArg(Word{Value: w.Value[strings.IndexByte(w.Value, '['):]}, name.Value)
				}
				continue
			}
			if n := a.nameArg(w, name.Value); n != "" {
				a.assignedAtRunTime(n, name.Value)
			}
		}
	case "printf", "wait":
		flag := map[string]string{"printf": "-v", "wait": "-p"}[name.Value]
		for i, w := range in.Words {
			var target Word
			switch {
			case w.Is("--"):
				return
			case w.Is(flag) && i+1 < len(in.Words):
				target = in.Words[i+1]
			case w.Static() && strings.HasPrefix(w.Value, flag) && len(w.Value) > len(flag):
				target = Word{Value: w.Value[len(flag):]} // -vNAME
			case !w.Static() && i < 2:
				// $x may be -vNAME when it runs.
				addNote(Hidden, "%s takes options only known at run time, which may name a variable whose subscript runs a command", name.Value)
				continue
			default:
				continue
			}
			if n := a.nameArg(target, name.Value+" "+flag); n != "" {
				a.assignedAtRunTime(n, name.Value)
			}
		}
	case "unset":
		for _, w := range in.Words[1:] {
			if !w.Static() || !strings.HasPrefix(w.Value, "-") {
				if n := a.nameArg(w, "unset"); n != "" {
					a.taint(n)
				}
			}
		}
	case "test", "[":
		for i, w := range in.Words[:len(in.Words)-1] {
			if w.Is("-v") || w.Is("-R") {
				a.nameArg(in.Words[i+1], name.Value+" -v")
			}
		}
	}
}

// assignedAtRunTime records a variable a builtin sets to a value only
// known when it runs.
func (a *analyzer) assignedAtRunTime(name, builtin string) {
	a.taint(name)
	a.res.Assigns = append(a.res.Assigns, &Assignment{Name: name, Builtin: builtin,
		Values: []Word{{Dynamic: true}}, Dirs: slices.Clone(a.cwds)})
}

// cd adds the directories a cd (or pushd) may move to.
func (a *analyzer) cd(cmd *Command, l *Layer) {
	i := 1
	for ; i < len(l.Words); i++ {
		w := l.Words[i]
		if w.Is("--") {
			i++
			break
		}
		if !w.option() || w.Value == "-" {
			break
		}
	}
	target := Word{Value: a.opts.Home}
	if i < len(l.Words) {
		target = l.Words[i]
	}
	switch v := target.Value; {
	case target.Glob:
		// The shell picks the directory when it runs: the caller may check
		// what the pattern matches, but the cwd is unknown.
		for _, cwd := range a.cwds {
			if cwd != "" {
				a.res.Cds = append(a.res.Cds, absolute(cwd, v))
			}
		}
		a.unknownDir(cmd, "cd to a directory given as a pattern")
	case target.Dynamic || v == "" || v == "-" || strings.HasPrefix(v, "+"):
		a.unknownDir(cmd, "cd to a directory that cannot be determined")
	case filepath.IsAbs(v):
		next := make([]string, len(a.cwds))
		for i := range next {
			next[i] = filepath.Clean(v)
		}
		a.moveTo(cmd, next)
	default:
		next := make([]string, 0, len(a.cwds))
		for _, cwd := range a.cwds {
			if cwd == "" {
				next = append(next, "")
			} else {
				next = append(next, filepath.Clean(cwd+"/"+v))
			}
		}
		a.moveTo(cmd, next)
		if a.cdpath {
			// CDPATH may send it elsewhere as well.
			a.unknownDir(cmd, "cd to a relative directory in a line that sets CDPATH")
		}
	}
}

// moveTo records where a cd goes from each directory it may start in.
func (a *analyzer) moveTo(cmd *Command, dirs []string) {
	a.res.Cds = append(a.res.Cds, dirs...)
	for _, d := range dirs {
		if slices.Contains(a.cwds, d) {
			continue
		}
		if len(a.cwds) >= maxCwds {
			a.unknownDir(cmd, "there are too many possible working directories")
			return
		}
		a.cwds = append(a.cwds, d)
	}
}

// unknownDir records a move to a directory that cannot be told.
func (a *analyzer) unknownDir(cmd *Command, why string) {
	n := a.note(Caution, "%s", why)
	if cmd != nil {
		cmd.Notes = append(cmd.Notes, n)
	}
	a.res.Cds = append(a.res.Cds, "")
	a.cwds = union(a.cwds, "")
}

// absolute joins a relative path to the directory it is relative to.
func absolute(cwd, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return cwd + "/" + p
}
