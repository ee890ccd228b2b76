package permission

import (
	"path/filepath"
	"slices"
	"strings"
)

// unwrapped is what a layer runs besides itself.
type unwrapped struct {
	inner  []*layer // commands it runs (find may run several)
	script *string  // a shell script it runs
	opaque string
	unsafe string
}

// optSpec describes a wrapper's options well enough to find the command
// after them.
type optSpec struct {
	withArg    string   // short options that take the next word (or the rest of the cluster)
	attached   string   // short options whose optional argument can only be attached (-i{} for xargs)
	known      string   // short options without an argument
	longArg    []string // long options that take an argument
	longKnown  []string // long options without an argument
	positional int      // words before the command (timeout's duration)
	digits     bool     // "-10" is an option (nice)
}

// skipOpts returns the index in args of the command a wrapper runs (-1 for
// none), the options seen, and whether every option was recognised.
func skipOpts(args []string, spec optSpec) (idx int, seen map[string]bool, certain bool) {
	seen, certain = map[string]bool{}, true
	pos := spec.positional
	for i := 0; i < len(args); i++ {
		w := args[i]
		switch {
		case w == dynWord || isGlob(w):
			return i, seen, false
		case w == "--":
			i++
			for ; pos > 0 && i < len(args); pos-- {
				i++
			}
			if i < len(args) {
				return i, seen, certain
			}
			return -1, seen, certain
		case strings.HasPrefix(w, "--"):
			name, _, hasVal := strings.Cut(w[2:], "=")
			seen["--"+name] = true
			switch {
			case slices.Contains(spec.longArg, name):
				if !hasVal {
					i++
				}
			case !slices.Contains(spec.longKnown, name):
				certain = false
			}
		case len(w) > 1 && w[0] == '-' && spec.digits && isDigits(w[1:]):
		case len(w) > 1 && w[0] == '-':
			if !shortCluster(w, spec, seen) {
				i++ // the option's argument is the next word
			}
			if seen["?"] {
				certain = false
			}
		case pos > 0:
			pos--
		default:
			return i, seen, certain
		}
	}
	return -1, seen, certain
}

// shortCluster records the options of "-abc". It returns false when the
// last option takes the next word as its argument.
func shortCluster(w string, spec optSpec, seen map[string]bool) bool {
	for k := 1; k < len(w); k++ {
		c := w[k]
		seen["-"+string(c)] = true
		switch {
		case strings.IndexByte(spec.withArg, c) >= 0:
			return k+1 < len(w) // attached argument, or take the next word
		case strings.IndexByte(spec.attached, c) >= 0:
			return true
		case strings.IndexByte(spec.known, c) < 0:
			seen["?"] = true
		}
	}
	return true
}

// suffixes lists every tail of args that starts with a word that is not an
// option: where the command may start when options were not understood.
func suffixes(args []string) [][]string {
	var out [][]string
	for i, w := range args {
		if !strings.HasPrefix(w, "-") {
			out = append(out, args[i:])
		}
	}
	return out
}

var wrapperSpecs = map[string]optSpec{
	"nohup":   {},
	"builtin": {},
	"nice":    {withArg: "n", longArg: []string{"adjustment"}, digits: true},
	"timeout": {withArg: "sk", known: "v", longArg: []string{"signal", "kill-after"},
		longKnown: []string{"preserve-status", "foreground", "verbose"}, positional: 1},
	"stdbuf":  {withArg: "ioe", longArg: []string{"input", "output", "error"}},
	"time":    {withArg: "fo", known: "apqv", longArg: []string{"format", "output"}, longKnown: []string{"append", "portability", "quiet", "verbose"}},
	"command": {known: "pvV"},
	"exec":    {withArg: "a", known: "cl"},
	"setsid":  {known: "cfw", longKnown: []string{"ctty", "fork", "wait"}},
	"ionice":  {withArg: "cnpPu", known: "t", longArg: []string{"class", "classdata", "pid", "pgid", "uid"}, longKnown: []string{"ignore"}},
	"xargs": {withArg: "IdnLPsEa", attached: "iel", known: "0rtpx",
		longArg:   []string{"arg-file", "delimiter", "eof", "replace", "max-lines", "max-args", "max-procs", "max-chars", "process-slot-var"},
		longKnown: []string{"null", "no-run-if-empty", "verbose", "interactive", "exit", "open-tty", "show-limits"}},
	"sudo": {withArg: "CDghpRrTtUu", known: "AbEHiKklnPSsVve",
		longArg:   []string{"chdir", "close-from", "group", "host", "prompt", "role", "type", "command-timeout", "other-user", "user", "chroot"},
		longKnown: []string{"askpass", "background", "preserve-env", "edit", "help", "set-home", "login", "remove-timestamp", "reset-timestamp", "list", "non-interactive", "preserve-groups", "stdin", "shell", "validate", "version", "bell"}},
	"doas":   {withArg: "uC", known: "nsL"},
	"chroot": {longArg: []string{"userspec", "groups"}, longKnown: []string{"skip-chdir"}, positional: 1},
	"watch": {withArg: "nq", known: "bcdeghptrwx",
		longArg:   []string{"interval", "differences", "equexit", "shotsdir"},
		longKnown: []string{"beep", "color", "no-color", "errexit", "chgexit", "no-title", "precise", "no-rerun", "exec", "no-wrap"}},
}

// transparentWrappers add nothing to what their inner command does.
var transparentWrappers = map[string]bool{
	"nohup": true, "builtin": true, "nice": true, "timeout": true, "stdbuf": true, "time": true,
	"command": true, "exec": true, "setsid": true, "ionice": true, "xargs": true, "env": true,
}

var shells = map[string]bool{"bash": true, "sh": true, "zsh": true, "dash": true, "ksh": true, "mksh": true, "ash": true}

// otherShells run scripts in languages this package does not parse.
var otherShells = map[string]bool{"fish": true, "csh": true, "tcsh": true, "pwsh": true, "nu": true, "xonsh": true, "elvish": true}

// plainName reports whether a command name is looked up in PATH or names
// a standard system directory, so that "env" really is env.
func plainName(name string) bool {
	if !strings.Contains(name, "/") {
		return true
	}
	switch filepath.Dir(name) {
	case "/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin":
		return true
	}
	return false
}

// unwrap finds what a layer runs besides itself.
func (a *analyzer) unwrap(l *layer) unwrapped {
	name := l.name()
	if name == "" || name == dynWord {
		return unwrapped{}
	}
	base := filepath.Base(name)
	args := l.words[1:]
	switch {
	case shells[base]:
		return a.unwrapShell(l, base, args)
	case otherShells[base] && len(args) > 0:
		return unwrapped{opaque: base + " scripts cannot be analysed"}
	case base == "busybox" && len(args) > 0:
		return unwrapped{inner: []*layer{{words: args}}}
	case base == "env":
		return unwrapEnv(l, args)
	case base == "find":
		return unwrapFind(args)
	case base == "eval":
		return scriptOf("eval", args, "eval runs text as a command")
	case base == "su":
		return unwrapSu(args)
	case base == "alias":
		return unwrapAlias(args)
	case base == "trap":
		if len(args) > 1 && !strings.HasPrefix(args[0], "-") {
			return scriptOf("trap", args[:1], "")
		}
		return unwrapped{}
	}
	spec, ok := wrapperSpecs[base]
	if !ok {
		return unwrapped{}
	}
	idx, seen, certain := skipOpts(args, spec)
	var u unwrapped
	if !certain {
		u.unsafe = "could not parse the options of " + base
		l.alts = suffixes(args)
	}
	if stops(base, seen) || idx < 0 {
		if base == "xargs" {
			idx, args = 0, []string{"echo"}
		} else {
			return u
		}
	}
	if base == "time" && (seen["-o"] || seen["--output"]) {
		u.unsafe = "time -o writes a file"
		l.transparent = false
	} else {
		l.transparent = transparentWrappers[base] && plainName(name)
	}
	if base == "watch" && !seen["-x"] && !seen["--exec"] {
		return scriptOf("watch", args[idx:], u.unsafe)
	}
	inner := &layer{words: args[idx:], openArgs: base == "xargs"}
	if base == "sudo" {
		inner.words = skipAssignments(inner.words, &u)
	}
	u.inner = []*layer{inner}
	return u
}

// stops reports options after which a wrapper runs no command.
func stops(base string, seen map[string]bool) bool {
	switch base {
	case "command":
		return seen["-v"] || seen["-V"]
	case "sudo":
		return seen["-e"] || seen["-l"] || seen["-v"] || seen["-V"] || seen["-K"] || seen["--edit"] || seen["--list"] || seen["--validate"] || seen["--version"]
	case "ionice":
		return seen["-p"] || seen["-P"] || seen["-u"] || seen["--pid"] || seen["--pgid"] || seen["--uid"]
	case "doas":
		return seen["-C"]
	}
	return false
}

func skipAssignments(words []string, u *unwrapped) []string {
	for len(words) > 0 {
		name, _, ok := strings.Cut(words[0], "=")
		if !ok || !validName(name) {
			break
		}
		if !safeEnvVar(name) {
			u.unsafe = "setting " + name + " for a command can change what it runs"
		}
		words = words[1:]
	}
	return words
}

func scriptOf(what string, args []string, unsafe string) unwrapped {
	for _, w := range args {
		if w == dynWord {
			return unwrapped{opaque: what + " runs text that is only known at run time"}
		}
	}
	plainArgs := make([]string, len(args))
	for i, w := range args {
		plainArgs[i] = plain(w)
	}
	s := strings.Join(plainArgs, " ")
	return unwrapped{script: &s, unsafe: unsafe}
}

func (a *analyzer) unwrapShell(l *layer, base string, args []string) unwrapped {
	cflag, i := false, 0
loop:
	for ; i < len(args); i++ {
		w := args[i]
		switch {
		case w == dynWord || (isGlob(w) && !cflag):
			return unwrapped{opaque: base + " with options only known at run time"}
		case w == "--" || w == "-":
			i++
			break loop
		case w == "--rcfile" || w == "--init-file":
			i++
		case strings.HasPrefix(w, "--"):
		case len(w) > 1 && (w[0] == '-' || w[0] == '+'):
			if w[0] == '-' && strings.ContainsRune(w, 'c') {
				cflag = true
			}
			if strings.ContainsAny(w[1:], "oO") {
				i++ // -o option-name
			}
		default:
			break loop
		}
	}
	switch {
	case cflag && i < len(args) && args[i] == dynWord:
		return unwrapped{opaque: base + " -c runs a script only known at run time"}
	case cflag && i < len(args):
		l.transparent = plainName(l.name())
		s := plain(args[i])
		return unwrapped{script: &s}
	case cflag:
		return unwrapped{}
	case i < len(args):
		return unwrapped{opaque: base + " runs the script file " + args[i] + ", which cannot be analysed"}
	}
	return unwrapped{opaque: base + " reads commands from standard input, which cannot be analysed"}
}

func unwrapEnv(l *layer, args []string) unwrapped {
	var u unwrapped
	i := 0
	for ; i < len(args); i++ {
		w := args[i]
		switch {
		case w == dynWord || isGlob(w):
			return unwrapped{opaque: "env with arguments only known at run time"}
		case w == "-" || w == "-i" || w == "-0" || w == "-v" || w == "--ignore-environment" || w == "--null" || w == "--debug":
		case w == "-u" || w == "--unset":
			i++
		case strings.HasPrefix(w, "--unset=") || (strings.HasPrefix(w, "-u") && len(w) > 2):
		case w == "-C" || w == "--chdir" || strings.HasPrefix(w, "--chdir=") || strings.HasPrefix(w, "-C"):
			return unwrapped{opaque: "env --chdir runs the command in another directory"}
		case w == "-S" || strings.HasPrefix(w, "--split-string") || strings.HasPrefix(w, "-S"):
			return unwrapped{opaque: "env -S splits a string into a command"}
		case strings.HasPrefix(w, "-"):
			u.unsafe = "could not parse the options of env"
			l.alts = suffixes(args)
		default:
			name, _, isAssign := strings.Cut(w, "=")
			if !isAssign || !validName(name) {
				l.transparent = plainName(l.name())
				u.inner = []*layer{{words: args[i:]}}
				return u
			}
			if !safeEnvVar(name) {
				u.unsafe = "setting " + name + " for a command can change what it runs"
			}
		}
	}
	return u // env alone prints the environment
}

func unwrapFind(args []string) unwrapped {
	var u unwrapped
	for i := 0; i < len(args); i++ {
		if isGlob(args[i]) && findExecGlob(args[i]) {
			return unwrapped{opaque: "find with a pattern that may expand to -exec"}
		}
		switch args[i] {
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && args[j] != ";" && args[j] != "+" {
				j++
			}
			if j > i+1 {
				u.inner = append(u.inner, &layer{words: args[i+1 : j], openArgs: true})
			}
			i = j
		}
	}
	return u
}

// findExecGlob reports whether a glob may expand to a find action that
// runs a command.
func findExecGlob(w string) bool {
	for _, a := range []string{"-exec", "-execdir", "-ok", "-okdir"} {
		if m, err := filepath.Match(plain(w), a); m || err != nil {
			return true
		}
	}
	return false
}

func unwrapSu(args []string) unwrapped {
	for i := 0; i < len(args); i++ {
		w := args[i]
		switch {
		case w == "-c" || w == "--command" || w == "--session-command":
			if i+1 < len(args) {
				return scriptOf("su", args[i+1:i+2], "")
			}
		case strings.HasPrefix(w, "--command=") || strings.HasPrefix(w, "--session-command="):
			_, v, _ := strings.Cut(w, "=")
			return scriptOf("su", []string{v}, "")
		case w == "-s" || w == "--shell" || w == "-g" || w == "-G" || w == "--group" || w == "--supp-group" || w == "-w":
			i++
		}
	}
	return unwrapped{opaque: "su starts a shell that reads commands from standard input"}
}

func unwrapAlias(args []string) unwrapped {
	var scripts []string
	for _, w := range args {
		if w == dynWord {
			return unwrapped{opaque: "alias with a definition only known at run time"}
		}
		if _, v, ok := strings.Cut(plain(w), "="); ok {
			scripts = append(scripts, v)
		}
	}
	if len(scripts) == 0 {
		return unwrapped{}
	}
	s := strings.Join(scripts, "\n")
	return unwrapped{script: &s, unsafe: "alias defines a command that later lines may run"}
}
