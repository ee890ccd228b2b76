package permission

import (
	"path/filepath"
	"strings"

	"github.com/cohort-dev/cohort/shellcmd"
)

// check parses a command's arguments against its spec. It reports whether
// they are all allowed and returns the paths the command reads: its
// positional paths and the values of options that read a file.
func (s *roSpec) check(args []string) (bool, []string) {
	var paths, pos []string
	afterDashes, firstGiven := false, false
	// value takes the next word as an option's value.
	i := 0
	next := func() (string, bool) {
		if i+1 >= len(args) {
			return "", false
		}
		i++
		return args[i], true
	}
	addPath := func(v string) bool {
		if v == dynWord {
			return false // a path only known at run time
		}
		paths = append(paths, v)
		return true
	}
	// take consumes what an option of kind k needs; attached is its value
	// when given in the same word.
	take := func(k optKind, attached string, hasAttached bool) bool {
		value := func() (string, bool) {
			if hasAttached {
				hasAttached = false
				return attached, true
			}
			return next()
		}
		switch k {
		case optFlag:
			return !hasAttached
		case optOptional:
			return true
		case optValue:
			_, ok := value()
			return ok
		case optPath:
			v, ok := value()
			return ok && addPath(v)
		case optTwo:
			_, ok1 := value()
			_, ok2 := value()
			return ok1 && ok2
		case optValPath:
			_, ok1 := value()
			v, ok2 := value()
			return ok1 && ok2 && addPath(v)
		}
		return false
	}
	for ; i < len(args); i++ {
		w := args[i]
		p := plain(w)
		switch {
		case afterDashes || w == "-" || w == dynWord || !strings.HasPrefix(p, "-") && !(s.plus && isCount(p, '+')):
			if !s.positional(w, afterDashes) {
				return false, nil
			}
			pos = append(pos, w)
			if s.paths && w != "-" && !(s.firstNotPath && !firstGiven && len(pos) == 1) {
				if !addPath(w) {
					return false, nil
				}
			}
		case isGlob(w):
			return false, nil // a pattern that starts with "-" expands to options
		case s.anyOpts:
			pos = append(pos, w) // options are text to it
		case w == "--" && !s.findStyle:
			afterDashes = true
		case s.plus && isCount(p, '+'), s.numeric && isCount(p, '-'):
		case s.findStyle:
			k, ok := s.opts[w]
			if !ok || !take(k, "", false) {
				return false, nil
			}
		case strings.HasPrefix(w, "--"):
			name, v, eq := strings.Cut(w, "=")
			k, ok := s.opts[name]
			if !ok || !take(k, v, eq) {
				return false, nil
			}
			firstGiven = firstGiven || contains(s.noFirst, name)
		default:
			if !s.shortCluster(w, take) {
				return false, nil
			}
			firstGiven = firstGiven || contains(s.noFirst, w[:2])
		}
	}
	if s.maxPos >= 0 && len(pos) > s.maxPos {
		return false, nil
	}
	if s.vet != nil && !s.vet(pos) {
		return false, nil
	}
	return true, paths
}

// positional vets one positional word. A word only known at run time may
// split into options (sort $x with x="-o out"), and a pattern may expand to
// names that start with "-", which the program then reads as options; both
// are only safe for commands no option of which reads, writes or runs
// anything.
func (s *roSpec) positional(w string, afterDashes bool) bool {
	switch {
	case w == dynWord:
		return afterDashes && !s.paths || s.anyOpts
	case isGlob(w):
		if s.maxPos >= 0 {
			return false // it may expand to several arguments
		}
		c := plain(w) // "" for a literal word "\x01", which only looks like a glob
		return afterDashes || s.globSafe || c == "" || !strings.ContainsAny(c[:1], "*?[-")
	}
	return true
}

// shortCluster parses "-abc" or "-n5": flags, the last of which may take
// a value (the rest of the word, or the next one). A word listed whole
// ("-uu", "-ps") is one option.
func (s *roSpec) shortCluster(w string, take func(optKind, string, bool) bool) bool {
	if k, ok := s.opts[w]; ok {
		return take(k, "", false)
	}
	for j := 1; j < len(w); j++ {
		k, ok := s.opts["-"+w[j:j+1]]
		if !ok {
			return false
		}
		if k == optFlag {
			continue
		}
		rest := w[j+1:]
		return take(k, rest, rest != "")
	}
	return true
}

// isCount reports "-5" (sign '-') or "+5" (sign '+').
func isCount(w string, sign byte) bool {
	return len(w) > 1 && w[0] == sign && strings.Trim(w[1:], "0123456789") == ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// IsReadOnlyCommand reports whether a Bash command line only reads: every
// command in it (through pipes, lists, subshells, substitutions and
// wrappers such as timeout or bash -c) is a known read-only command used
// only with options its allow-list holds, nothing is redirected into a
// file, and nothing in it could not be analysed. It does not look at
// where the paths point; the Checker does that. Conservative: false when
// in doubt. Safe for concurrent use.
func IsReadOnlyCommand(line string) bool {
	an := analyze(line, "", "")
	ok, _ := an.readOnly()
	return ok
}

// readOnly reports whether the analysed line only reads, and lists the
// paths its commands read (per command, relative to its cwds).
func (an *analysis) readOnly() (bool, []cmdPaths) {
	if len(an.opaque) > 0 || len(an.unsafe) > 0 || len(an.commands) == 0 {
		return false, nil
	}
	for _, r := range an.redirs {
		if r.write && !an.harmlessTarget(plain(r.target)) {
			return false, nil
		}
	}
	var out []cmdPaths
	for _, c := range an.commands {
		ok, paths := c.readOnly()
		if !ok {
			return false, nil
		}
		out = append(out, cmdPaths{cwds: c.cwds, paths: paths})
	}
	for _, r := range an.redirs {
		if !r.write {
			out = append(out, cmdPaths{cwds: r.cwds, paths: []string{r.target}})
		}
	}
	return true, out
}

// readOnly reports whether one command only reads, wherever its paths
// point: its wrappers are transparent, its program is a read-only command
// used with allowed options, and it does not take paths from standard
// input (xargs cat). It lists the paths it reads.
func (c *command) readOnly() (bool, []string) {
	for _, l := range c.layers[:len(c.layers)-1] {
		if !l.transparent {
			return false, nil
		}
	}
	in := c.inner()
	ok, paths := readOnlyWords(in.words)
	if !ok {
		return false, nil
	}
	if in.openArgs {
		if spec := readOnlyCommands()[filepath.Base(in.name())]; spec == nil || spec.paths {
			return false, nil // paths arrive on standard input
		}
	}
	return true, paths
}

// ReadOnlyCommands reports, for each command of an analysed line (in the
// order of an.Commands), whether it only reads in the sense of
// IsReadOnlyCommand, judged on its own: its wrappers are transparent, its
// program is a known read-only command used with allowed options, nothing
// about it was noted (a cd into the unknown, a wrapper option not
// understood, a command name only known at run time), and the variables set
// for it are harmless. Nothing else in the line may change what a name
// runs: one variable assignment that is not harmless (PATH=x, export
// LD_PRELOAD=y) or a hash, enable or alias anywhere makes every command
// count as not read-only. Where paths point is not looked at. Safe for
// concurrent use.
func ReadOnlyCommands(an *shellcmd.Analysis) []bool {
	out := make([]bool, len(an.Commands))
	for _, as := range an.Assigns {
		if !as.Prefix && assignProblem(as) != "" {
			return out
		}
	}
	for _, c := range an.Commands {
		for _, l := range c.Layers {
			switch l.Name().Value {
			case "hash", "enable", "alias":
				return out
			}
		}
	}
	for i, c := range an.Commands {
		if len(c.Notes) > 0 {
			continue
		}
		harmless := true
		for _, as := range c.Assigns {
			harmless = harmless && assignProblem(as) == ""
		}
		out[i], _ = toCommand(c).readOnly()
		out[i] = out[i] && harmless
	}
	return out
}

// cmdPaths are paths a command reads, relative to its possible cwds.
type cmdPaths struct {
	cwds  []string
	paths []string
}

// harmlessTarget reports redirect targets that are not files: /dev/null,
// the terminal, and standard output or error while they hold what the
// Bash tool gave them (no redirection of the line put a file opened for
// reading, or another descriptor, on them). Compared as written: any
// other spelling (/dev/fd/../x, /dev/fd/3/x, /proc/self/fd/1) is a path,
// which the checker resolves or, where only the running command knows
// what it names, treats as unknown.
func (an *analysis) harmlessTarget(t string) bool {
	switch t {
	case "/dev/null", "/dev/tty":
		return true
	case "/dev/stdout", "/dev/stderr", "/dev/fd/1", "/dev/fd/2":
		return !an.stdioReopened
	}
	return false
}
