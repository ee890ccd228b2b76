package permission

import (
	"path/filepath"
	"strings"

	"github.com/cohort-dev/cohort/shellcmd"
)

// roSpec describes a command that only reads.
type roSpec struct {
	paths  bool     // its non-option arguments are paths it reads
	maxPos int      // most positional arguments it may have while read-only (-1: any)
	bad    []string // options that make it write or run programs
	// findStyle commands take single-dash long options ("-exec"); bad
	// options then match exactly rather than as short clusters.
	findStyle bool
	sub       map[string]*roSpec // subcommands (git)
	globals   []string           // options allowed before the subcommand
}

var (
	roPaths   = &roSpec{paths: true, maxPos: -1}
	roNoPaths = &roSpec{maxPos: -1}
	gitLog    = &roSpec{paths: true, maxPos: -1, bad: []string{"--output", "--ext-diff"}}
)

// readOnlyCommands is deliberately short: a command belongs here only when
// no option or argument can make it write a file or run another program,
// except the options listed as bad.
var readOnlyCommands = map[string]*roSpec{
	"cat": roPaths, "head": roPaths, "tail": roPaths, "wc": roPaths, "nl": roPaths, "od": roPaths,
	"hexdump": roPaths, "strings": roPaths, "file": roPaths, "stat": roPaths, "du": roPaths, "df": roPaths,
	"ls": roPaths, "cut": roPaths, "diff": roPaths, "cmp": roPaths, "comm": roPaths, "realpath": roPaths,
	"readlink": roPaths, "jq": roPaths, "column": roPaths, "fold": roPaths, "rev": roPaths, "tac": roPaths,
	"paste": roPaths, "join": roPaths, "expand": roPaths, "unexpand": roPaths, "grep": roPaths,
	"egrep": roPaths, "fgrep": roPaths, "md5sum": roPaths, "sha1sum": roPaths, "sha256sum": roPaths,
	"sha512sum": roPaths, "b2sum": roPaths, "cksum": roPaths,
	"rg":   {paths: true, maxPos: -1, bad: []string{"--pre"}},
	"tree": {paths: true, maxPos: -1, bad: []string{"-o", "--output"}},
	"sort": {paths: true, maxPos: -1, bad: []string{"-o", "--output", "--compress-program"}},
	"uniq": {paths: true, maxPos: 1},
	"xxd":  {paths: true, maxPos: 1, bad: []string{"-r", "--revert"}},
	"find": {paths: true, maxPos: -1, findStyle: true, bad: []string{"-exec", "-execdir", "-ok", "-okdir",
		"-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}},

	"echo": roNoPaths, "printf": roNoPaths, "pwd": roNoPaths, "true": roNoPaths, "false": roNoPaths,
	"test": roNoPaths, "[": roNoPaths, "which": roNoPaths, "type": roNoPaths, "whoami": roNoPaths,
	"id": roNoPaths, "uname": roNoPaths, "printenv": roNoPaths, "basename": roNoPaths,
	"dirname": roNoPaths, "tr": roNoPaths, "seq": roNoPaths, "sleep": roNoPaths, "env": roNoPaths,
	"command": roNoPaths, "cd": roNoPaths, "nproc": roNoPaths, "arch": roNoPaths, "groups": roNoPaths,
	"date":     {maxPos: -1, bad: []string{"-s", "--set"}},
	"hostname": {maxPos: 0},

	"git": {globals: []string{"--no-pager", "-P"}, sub: map[string]*roSpec{
		"status": roPaths, "blame": roPaths, "rev-parse": roPaths, "ls-files": roPaths, "ls-tree": roPaths,
		"describe": roPaths, "shortlog": roPaths, "rev-list": roPaths, "cat-file": roPaths,
		"show-ref": roPaths, "merge-base": roPaths, "name-rev": roPaths,
		"diff": gitLog, "log": gitLog, "show": gitLog, "whatchanged": gitLog,
		"grep":   {paths: true, maxPos: -1, bad: []string{"-O", "--open-files-in-pager"}},
		"branch": {maxPos: 0, bad: []string{"-d", "-D", "-m", "-M", "-c", "-C", "-f", "-u", "--delete", "--move", "--copy", "--force", "--set-upstream-to", "--unset-upstream", "--edit-description", "--track"}},
		"tag":    {maxPos: 0, bad: []string{"-d", "-a", "-s", "-f", "-m", "-F", "-u", "--delete", "--annotate", "--sign", "--force", "--message", "--file"}},
		"remote": {maxPos: 0},
	}},
}

// readOnlyWords reports whether one command only reads, and which of its
// arguments are paths it may read.
func readOnlyWords(words []string) (ok bool, paths []string) {
	if len(words) == 0 || !shellcmd.PlainName(words[0]) {
		return false, nil
	}
	spec, found := readOnlyCommands[filepath.Base(words[0])]
	if !found {
		return false, nil
	}
	args := words[1:]
	if spec.sub != nil {
		k := 0
		for k < len(args) && contains(spec.globals, args[k]) {
			k++
		}
		if k >= len(args) {
			return false, nil
		}
		if spec, found = spec.sub[args[k]]; !found {
			return false, nil
		}
		args = args[k+1:]
	}
	return spec.check(args)
}

func (s *roSpec) check(args []string) (bool, []string) {
	var paths []string
	positional, afterDashes := 0, false
	for _, w := range args {
		switch {
		case w == dynWord:
			if s.paths {
				return false, nil // a path only known at run time
			}
			positional++
		case isGlob(w):
			p := plain(w)
			if s.maxPos >= 0 {
				return false, nil // it may expand to several arguments
			}
			if len(s.bad) > 0 && (strings.HasPrefix(p, "-") || strings.ContainsAny(p[:1], "*?[")) {
				return false, nil // it may expand to an option such as --output=x
			}
			positional++
			if s.paths {
				paths = append(paths, w)
			}
		case afterDashes || !strings.HasPrefix(w, "-") || w == "-":
			positional++
			if s.paths && w != "-" {
				paths = append(paths, w)
			}
		case w == "--":
			afterDashes = true
		default:
			if s.badOption(w) {
				return false, nil
			}
			if _, v, ok := strings.Cut(w, "="); ok && s.paths && v != "" {
				paths = append(paths, v)
			}
		}
	}
	if s.maxPos >= 0 && positional > s.maxPos {
		return false, nil
	}
	return true, paths
}

// badOption matches an option against the bad list. Long options match
// when they abbreviate a bad one (getopt accepts unambiguous prefixes);
// short clusters match when they contain a bad letter.
func (s *roSpec) badOption(w string) bool {
	name, _, _ := strings.Cut(w, "=")
	for _, b := range s.bad {
		switch {
		case s.findStyle:
			if name == b {
				return true
			}
		case strings.HasPrefix(name, "--"):
			if strings.HasPrefix(b, "--") && len(name) > 2 && strings.HasPrefix(b, name) {
				return true
			}
		case len(b) == 2 && b[0] == '-' && b[1] != '-':
			if strings.IndexByte(name[1:], b[1]) >= 0 {
				return true
			}
		}
	}
	return false
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
// without options that write or run programs, nothing is redirected into
// a file, and nothing in it could not be analysed. It does not look at
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
		if r.write && !harmlessTarget(plain(r.target)) {
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
// used without options that write, and it does not take paths from
// standard input (xargs cat). It lists the paths it reads.
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
		if spec := readOnlyCommands[filepath.Base(in.name())]; spec == nil || spec.paths {
			return false, nil // paths arrive on standard input
		}
	}
	return true, paths
}

// ReadOnlyCommands reports, for each command of an analysed line (in the
// order of an.Commands), whether it only reads in the sense of
// IsReadOnlyCommand, judged on its own: its wrappers are transparent, its
// program is a known read-only command without options that write or run
// programs, nothing about it was noted (a cd into the unknown, a wrapper
// option not understood, a command name only known at run time), and the
// variables set for it are harmless. Nothing else in the line may change
// what a name runs: one variable assignment that is not harmless (PATH=x,
// export LD_PRELOAD=y) or a hash, enable or alias anywhere makes every
// command count as not read-only. Where paths point is not looked at.
// Safe for concurrent use.
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

// harmlessTarget reports redirect targets that are not files.
func harmlessTarget(t string) bool {
	switch t {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty":
		return true
	}
	return strings.HasPrefix(t, "/dev/fd/")
}
