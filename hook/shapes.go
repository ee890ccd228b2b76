package hook

import (
	"fmt"
	"regexp"
	"strings"
)

// plainPrograms read no code and no executable configuration from the
// directory they run in: they print, notify or fetch what their
// arguments say (curl's configuration is ~/.curlrc, jq's modules come
// from ~/.jq and beside its binary, osascript, say and the notifiers run
// the words or the script file they are given), or are the shell's own
// commands. Each may still read a file its arguments name, which rule 1
// judges.
var plainPrograms = map[string]bool{
	"true": true, "false": true, ":": true, "echo": true, "printf": true, "cat": true, "touch": true, "date": true, "sleep": true,
	"tee": true, "exit": true, "test": true, "[": true, "export": true, "set": true, "return": true, "cd": true,
	"notify-send": true, "osascript": true, "terminal-notifier": true, "say": true, "curl": true, "jq": true,
}

var pythonName = regexp.MustCompile(`^python(\d+(\.\d+)*)?$`)

// shape says why the program name with args may load code from dir (""
// when its shape is on the allow-list), and refuses the script it runs
// when that lies in a writable tree, whether it exists yet or not.
func (j *judgement) shape(name string, args []string, dir string) string {
	script := func(i int, what string) string {
		if i >= len(args) || args[i] == "-" {
			return fmt.Sprintf("%s reads its program from standard input", what)
		}
		j.named(args[i], dir, what+"'s script")
		return ""
	}
	switch {
	case name == "source" || name == ".":
		if len(args) == 0 || !strings.Contains(args[0], "/") {
			return fmt.Sprintf("%s without a path searches PATH and the working directory", name)
		}
		j.named(args[0], dir, name+"'s file")
		return ""
	case plainPrograms[name]:
		if name == "osascript" {
			if i := firstOperand(args, "el"); i < len(args) && !strings.HasPrefix(args[i], "-") {
				j.named(args[i], dir, "osascript's script")
			}
		}
		return ""
	case shells[name]:
		return j.shellShape(name, args, dir, script)
	case pythonName.MatchString(name):
		return j.pythonShape(name, args, script)
	case name == "node" || name == "nodejs":
		for i, a := range args {
			if !strings.HasPrefix(a, "-") || a == "-" {
				return script(i, name)
			}
			if a == "--" {
				return script(i+1, name)
			}
			if !nodeSafe(a) {
				return fmt.Sprintf("node %s may load code from the working directory (or is an option Cohort does not know)", a)
			}
		}
		return script(len(args), name)
	case name == "perl" || name == "ruby":
		i := firstOperand(args, "I")
		for _, a := range args[:i] {
			if !scriptOption(name, a) {
				return fmt.Sprintf("%s %s may run code other than a script file (or is an option Cohort does not know)", name, a)
			}
		}
		return script(i, name)
	}
	return name + unknownProgram
}

// unknownProgram ends shape's answer for a program not on the list.
const unknownProgram = " is not a program Cohort knows not to load code from its working directory"

// shells run a script file or a -c body, neither from the working
// directory unless a word names it.
var shells = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true}

func (j *judgement) shellShape(name string, args []string, dir string, script func(int, string) string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return script(i+1, name)
		case a == "-o" || a == "+o":
			i++
		case a == "--rcfile" || a == "--init-file":
			if i+1 < len(args) {
				j.named(args[i+1], dir, name+"'s rc file")
			}
			i++
		case strings.HasPrefix(a, "--"):
		case len(a) > 1 && (a[0] == '-' || a[0] == '+'):
			if strings.ContainsAny(a[1:], "si") {
				return fmt.Sprintf("%s %s reads its commands from standard input", name, a)
			}
			if a[0] == '-' && strings.Contains(a, "c") {
				return "" // the body's commands are judged as the line's
			}
		default:
			return script(i, name)
		}
	}
	return script(len(args), name)
}

func (j *judgement) pythonShape(name string, args []string, script func(int, string) string) string {
	safe := j.env["PYTHONSAFEPATH"] != ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-X" || a == "-W" || a == "--check-hash-based-pycs":
			i++
			continue
		case a == "--":
			return script(i+1, name)
		case a == "-" || !strings.HasPrefix(a, "-"):
			return script(i, name)
		case strings.HasPrefix(a, "--"):
			return fmt.Sprintf("%s %s is an option Cohort does not know", name, a)
		}
		for k, r := range a[1:] {
			switch {
			case r == 'P' || r == 'I':
				safe = true
			case r == 'c' || r == 'm':
				if !safe {
					return fmt.Sprintf("%s -%c runs with the working directory first on sys.path (add -P)", name, r)
				}
				return ""
			case r == 'X' || r == 'W':
				if k+2 == len(a) {
					i++ // its argument is the next word
				}
			case strings.ContainsRune("bBdEOqsSuvR", r):
			default:
				return fmt.Sprintf("%s -%c is an option Cohort does not know to be safe", name, r)
			}
			if r == 'X' || r == 'W' {
				break
			}
		}
	}
	return script(len(args), name)
}

// nodeSafe are node's options that load nothing and change no search.
func nodeSafe(a string) bool {
	opt, _, _ := strings.Cut(a, "=")
	switch opt {
	case "--no-warnings", "--no-deprecation", "--enable-source-maps", "--trace-warnings", "--trace-uncaught", "--trace-deprecation",
		"--max-old-space-size", "--stack-size", "--unhandled-rejections", "--throw-deprecation", "--pending-deprecation":
		return true
	}
	return false
}

// scriptOption are perl's and ruby's options that only warn or taint:
// clusters of w, W, X, T, t (perl) or w, W, W0-2, v (ruby), and -I dirs
// (their paths judged as every word's).
func scriptOption(name, a string) bool {
	if strings.HasPrefix(a, "-I") {
		return true
	}
	if name == "ruby" {
		switch a {
		case "-w", "-W", "-W0", "-W1", "-W2", "-v", "--disable-gems", "--disable=gems":
			return true
		}
		return false
	}
	return len(a) > 1 && a[0] == '-' && strings.Trim(a[1:], "wWXTt") == ""
}

// firstOperand is the index of the first argument that is no option
// (withArg: short options that take the next word when not attached).
func firstOperand(args []string, withArg string) int {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			return i + 1
		case a == "-" || !strings.HasPrefix(a, "-"):
			return i
		case len(a) == 2 && strings.ContainsRune(withArg, rune(a[1])):
			i++
		}
	}
	return len(args)
}
