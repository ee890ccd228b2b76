package shellcmd

import (
	"path/filepath"
	"slices"
	"strings"
)

// unwrapped is what a layer runs besides itself.
type unwrapped struct {
	inner   []*Layer // commands it runs (find may run several)
	script  *string  // a shell script it runs
	assigns []*Assignment
	notes   []Note
}

func (u *unwrapped) add(kind NoteKind, reason string) { u.notes = append(u.notes, Note{kind, reason}) }

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

// unwrap finds what a layer runs besides itself.
func (a *analyzer) unwrap(l *Layer) unwrapped {
	name := l.Name()
	if !name.Static() {
		return unwrapped{}
	}
	base := filepath.Base(name.Value)
	args := l.Words[1:]
	switch {
	case shells[base]:
		return unwrapShell(l, base, args)
	case otherShells[base] && len(args) > 0:
		return noteOnly(Hidden, base+" scripts cannot be analysed")
	case base == "busybox" && len(args) > 0:
		return unwrapped{inner: []*Layer{{Words: args}}}
	case base == "env":
		return a.unwrapEnv(l, args)
	case base == "find":
		return unwrapFind(args)
	case base == "eval":
		return scriptOf("eval", args, "eval runs text as a command")
	case base == "su":
		return unwrapSu(args)
	case base == "alias":
		return unwrapAlias(args)
	case base == "trap":
		if len(args) > 1 && !args[0].option() {
			return scriptOf("trap", args[:1], "")
		}
		return unwrapped{}
	}
	spec, ok := wrapperSpecs[base]
	if !ok {
		return unwrapped{}
	}
	return a.unwrapOptions(l, base, args, spec)
}

// unwrapOptions unwraps a wrapper whose options optSpec describes.
func (a *analyzer) unwrapOptions(l *Layer, base string, args []Word, spec optSpec) unwrapped {
	idx, seen, certain := skipOpts(args, spec)
	var u unwrapped
	if !certain {
		u.add(Caution, "could not parse the options of "+base)
		l.Uncertain = true
	}
	if stops(base, seen) || idx < 0 {
		if base != "xargs" {
			return u
		}
		idx, args = 0, []Word{{Value: "echo"}}
	}
	if base == "time" && (seen["-o"] || seen["--output"]) {
		u.add(Caution, "time -o writes a file")
		l.Transparent = false
	} else {
		l.Transparent = transparentWrappers[base] && PlainName(l.Name().Value)
	}
	if base == "watch" && !seen["-x"] && !seen["--exec"] {
		w := scriptOf("watch", args[idx:], "")
		w.notes = append(u.notes, w.notes...)
		return w
	}
	inner := &Layer{Words: args[idx:], OpenArgs: base == "xargs"}
	if base == "sudo" {
		inner.Words = a.leadingAssignments(inner.Words, "sudo", &u)
	}
	if len(inner.Words) > 0 {
		u.inner = []*Layer{inner}
	}
	return u
}

func noteOnly(kind NoteKind, reason string) unwrapped {
	return unwrapped{notes: []Note{{kind, reason}}}
}

// skipOpts returns the index in args of the command a wrapper runs (-1 for
// none), the options seen, and whether every option was recognised.
func skipOpts(args []Word, spec optSpec) (idx int, seen map[string]bool, certain bool) {
	seen, certain = map[string]bool{}, true
	pos := spec.positional
	for i := 0; i < len(args); i++ {
		w := args[i]
		v := w.Value
		switch {
		case !w.Static():
			return i, seen, false
		case v == "--":
			i++
			for ; pos > 0 && i < len(args); pos-- {
				i++
			}
			if i < len(args) {
				return i, seen, certain
			}
			return -1, seen, certain
		case strings.HasPrefix(v, "--"):
			name, _, hasVal := strings.Cut(v[2:], "=")
			seen["--"+name] = true
			switch {
			case slices.Contains(spec.longArg, name):
				if !hasVal {
					i++
				}
			case !slices.Contains(spec.longKnown, name):
				certain = false
			}
		case len(v) > 1 && v[0] == '-' && spec.digits && isDigits(v[1:]):
		case len(v) > 1 && v[0] == '-':
			if !shortCluster(v, spec, seen) {
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

// leadingAssignments records the NAME=value words before a command (sudo
// NAME=value cmd) and returns the words after them.
func (a *analyzer) leadingAssignments(words []Word, builtin string, u *unwrapped) []Word {
	for len(words) > 0 {
		name, value, ok := strings.Cut(words[0].Value, "=")
		if !words[0].Static() || !ok || !IsName(name) {
			break
		}
		u.assigns = append(u.assigns, a.prefixAssign(name, value, builtin))
		words = words[1:]
	}
	return words
}

func (a *analyzer) prefixAssign(name, value, builtin string) *Assignment {
	x := &Assignment{Name: name, Values: []Word{{Value: value}}, Builtin: builtin, Prefix: true, Dirs: slices.Clone(a.cwds)}
	a.res.Assigns = append(a.res.Assigns, x)
	return x
}

// scriptOf joins words into the script a wrapper runs.
func scriptOf(what string, args []Word, caution string) unwrapped {
	parts := make([]string, len(args))
	for i, w := range args {
		if w.Dynamic {
			return noteOnly(Unknown, what+" runs text that is only known at run time")
		}
		parts[i] = w.Value
	}
	s := strings.Join(parts, " ")
	u := unwrapped{script: &s}
	if caution != "" {
		u.add(Caution, caution)
	}
	return u
}
