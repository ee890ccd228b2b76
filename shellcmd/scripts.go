package shellcmd

import (
	"path/filepath"
	"strings"
)

// unwrapShell finds the script a shell runs: its -c argument, or a script
// file or standard input, which are hidden.
func unwrapShell(l *Layer, base string, args []Word) unwrapped {
	cflag, i := false, 0
loop:
	for ; i < len(args); i++ {
		w := args[i]
		v := w.Value
		switch {
		case w.Dynamic || (w.Glob && !cflag):
			return noteOnly(Unknown, base+" with options only known at run time")
		case w.Glob:
			break loop // the script
		case v == "--" || v == "-":
			i++
			break loop
		case v == "--rcfile" || v == "--init-file":
			i++
		case strings.HasPrefix(v, "--"):
		case len(v) > 1 && (v[0] == '-' || v[0] == '+'):
			if v[0] == '-' && strings.ContainsRune(v, 'c') {
				cflag = true
			}
			if strings.ContainsAny(v[1:], "oO") {
				i++ // -o option-name
			}
		default:
			break loop
		}
	}
	switch {
	case cflag && i < len(args) && args[i].Dynamic:
		return noteOnly(Unknown, base+" -c runs a script only known at run time")
	case cflag && i < len(args):
		l.Transparent = PlainName(l.Name().Value)
		s := args[i].Value
		return unwrapped{script: &s}
	case cflag:
		return unwrapped{}
	case i < len(args):
		return noteOnly(Hidden, base+" runs the script file "+args[i].String()+", which cannot be analysed")
	}
	return noteOnly(Hidden, base+" reads commands from standard input, which cannot be analysed")
}

// unwrapEnv finds the command env runs and the variables it sets.
func (a *analyzer) unwrapEnv(l *Layer, args []Word) unwrapped {
	var u unwrapped
	for i := 0; i < len(args); i++ {
		w := args[i]
		v := w.Value
		switch {
		case !w.Static():
			return noteOnly(Unknown, "env with arguments only known at run time")
		case v == "-" || v == "-i" || v == "-0" || v == "-v" || v == "--ignore-environment" || v == "--null" || v == "--debug":
		case v == "-u" || v == "--unset":
			i++
		case strings.HasPrefix(v, "--unset=") || (strings.HasPrefix(v, "-u") && len(v) > 2):
		case v == "-C" || v == "--chdir" || strings.HasPrefix(v, "--chdir=") || strings.HasPrefix(v, "-C"):
			return noteOnly(Unknown, "env --chdir runs the command in another directory")
		case v == "-S" || strings.HasPrefix(v, "--split-string") || strings.HasPrefix(v, "-S"):
			return noteOnly(Unknown, "env -S splits a string into a command")
		case strings.HasPrefix(v, "-"):
			if !l.Uncertain {
				u.add(Caution, "could not parse the options of env")
			}
			l.Uncertain = true
		default:
			name, value, isAssign := strings.Cut(v, "=")
			if !isAssign || !IsName(name) {
				l.Transparent = PlainName(l.Name().Value)
				u.inner = []*Layer{{Words: args[i:]}}
				return u
			}
			u.assigns = append(u.assigns, a.prefixAssign(name, value, "env"))
		}
	}
	return u // env alone prints the environment
}

func unwrapFind(args []Word) unwrapped {
	var u unwrapped
	for i := 0; i < len(args); i++ {
		if args[i].Glob && findExecGlob(args[i].Value) {
			return noteOnly(Unknown, "find with a pattern that may expand to -exec")
		}
		switch {
		case args[i].Is("-exec"), args[i].Is("-execdir"), args[i].Is("-ok"), args[i].Is("-okdir"):
			j := i + 1
			for j < len(args) && !args[j].Is(";") && !args[j].Is("+") {
				j++
			}
			if j > i+1 {
				u.inner = append(u.inner, &Layer{Words: args[i+1 : j], OpenArgs: true})
			}
			i = j
		}
	}
	return u
}

// findExecGlob reports whether a glob may expand to a find action that
// runs a command.
func findExecGlob(pattern string) bool {
	for _, a := range []string{"-exec", "-execdir", "-ok", "-okdir"} {
		if m, err := filepath.Match(pattern, a); m || err != nil {
			return true
		}
	}
	return false
}

func unwrapSu(args []Word) unwrapped {
	for i := 0; i < len(args); i++ {
		w := args[i]
		if !w.Static() {
			continue
		}
		switch v := w.Value; {
		case v == "-c" || v == "--command" || v == "--session-command":
			if i+1 < len(args) {
				return scriptOf("su", args[i+1:i+2], "")
			}
		case strings.HasPrefix(v, "--command=") || strings.HasPrefix(v, "--session-command="):
			_, s, _ := strings.Cut(v, "=")
			return scriptOf("su", []Word{{Value: s}}, "")
		case v == "-s" || v == "--shell" || v == "-g" || v == "-G" || v == "--group" || v == "--supp-group" || v == "-w":
			i++
		}
	}
	return noteOnly(Hidden, "su starts a shell that reads commands from standard input")
}

func unwrapAlias(args []Word) unwrapped {
	var scripts []string
	for _, w := range args {
		if w.Dynamic {
			return noteOnly(Unknown, "alias with a definition only known at run time")
		}
		if _, v, ok := strings.Cut(w.Value, "="); ok {
			scripts = append(scripts, v)
		}
	}
	if len(scripts) == 0 {
		return unwrapped{}
	}
	s := strings.Join(scripts, "\n")
	u := unwrapped{script: &s}
	u.add(Caution, "alias defines a command that later lines may run")
	return u
}

// maxScriptArgs bounds the scripts read from one command's arguments.
const maxScriptArgs = 16

// scriptArgs finds scripts in the arguments of a program the analysis does
// not know (Options.ScriptArgs): a shell given -c and a script, su with -c,
// eval. Each becomes a layer inside the program's, starting at the shell.
// ok is false when there are more than maxScriptArgs.
func scriptArgs(l *Layer) (out []*Layer, ok bool) {
	for i := 1; i < len(l.Words); i++ {
		w := l.Words[i]
		if !w.Static() {
			continue
		}
		rest := l.Words[i+1:]
		switch base := filepath.Base(w.Value); {
		case shells[base] && hasScript(rest):
		case base == "su" && hasCommand(rest):
		case base == "eval":
		default:
			continue
		}
		if len(out) == maxScriptArgs {
			return nil, false
		}
		out = append(out, &Layer{Words: l.Words[i:]})
	}
	return out, true
}

// hasScript reports whether a shell's arguments give it -c and a script.
func hasScript(args []Word) bool {
	for j := 0; j < len(args); j++ {
		w := args[j]
		v := w.Value
		switch {
		case !w.Static():
			return false
		case v == "-o" || v == "+o" || v == "-O" || v == "+O":
			j++ // takes an argument
		case v == "--" || v == "-" || !strings.HasPrefix(v, "-") && !strings.HasPrefix(v, "+"):
			return false // a script file or the end of the options
		case !strings.HasPrefix(v, "--") && strings.ContainsRune(v[1:], 'c'):
			return j+1 < len(args)
		}
	}
	return false
}

// hasCommand reports whether su's arguments give it a command.
func hasCommand(args []Word) bool {
	for _, w := range args {
		if w.Is("-c") || w.Is("--command") || w.Static() && strings.HasPrefix(w.Value, "--command=") {
			return true
		}
	}
	return false
}
