package permission

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
)

// Git's object store and index hold every version of every file the
// repository ever committed or staged. The sandbox hides what Read deny
// rules cover in the working tree, not there, and a rule names paths, not
// revisions. So while a Read deny rule is in force, a git command that can
// print file contents or names from history or the index (git show, log
// -p, cat-file, diff, archive, blame, grep, format-patch, bundle, stash
// show -p, …) is not allowed by any mode or rule: it asks, failing closed
// (a person may still approve it), and one that names a denied path in a
// revision ("HEAD:secrets/key", ":secrets/key") is denied. Which commands
// are safe is an allow-list: subcommands that print no file contents
// (status, branch, rev-parse, commit, …), and the log family with only
// options that keep it to commit metadata. Anything else, an alias
// included, counts as revealing; so do status and commit with -v or
// --verbose, which print a diff (gitVerbose), and clone and worktree add,
// which copy every file to where the hiding does not reach.
//
// This rule stops git, not a program that reads the store itself (python's
// zlib on .git/objects), and bypassPermissions asks nothing: so when
// history or the index holds a file a Read deny rule covers, the session
// also has the kernel hide the object store and index from every model
// command (internal/assemble, gitStore).

// gitQuiet are subcommands that print neither file contents nor history
// (status lists changed files' names only).
var gitQuiet = map[string]bool{
	"status": true, "branch": true, "tag": true, "remote": true, "rev-parse": true, "show-ref": true,
	"merge-base": true, "name-rev": true, "describe": true, "config": true, "version": true, "help": true,
	"init": true, "add": true, "commit": true, "push": true, "fetch": true, "pull": true, "checkout": true,
	"switch": true, "restore": true, "reset": true, "merge": true, "rebase": true, "cherry-pick": true,
	"revert": true, "mv": true, "rm": true, "clean": true, "gc": true,
	"fsck": true, "count-objects": true, "update-ref": true, "symbolic-ref": true, "check-ignore": true,
	"check-attr": true, "var": true,
}

// gitMetadataOpts are the log-family options that keep the output to
// commit metadata: no patch, no file names, no search of contents (built at
// first use, as readOnlyCommands is).
var gitMetadataOpts = sync.OnceValue(func() map[string]optKind {
	return opts("-n= --max-count= --skip= --since= --after= --until= --before= --author= --committer= " +
		"--grep= --all-match --invert-grep -i --regexp-ignore-case -E -F --extended-regexp --fixed-strings --oneline " +
		"--graph --decorate? --no-decorate --format= --pretty? --abbrev-commit --no-abbrev-commit --date= --relative-date " +
		"--reverse --all --branches? --tags? --remotes? --first-parent --merges --no-merges --topo-order --date-order " +
		"--author-date-order --parents --children --boundary --ancestry-path --no-walk? --no-color --color? " +
		"-s --no-patch --summary? -e --email --numbered --count --max-parents= --min-parents= --end-of-options --not")
})

// gitLogFamily are the subcommands that print commit metadata unless an
// option asks for more.
var gitLogFamily = map[string]bool{"log": true, "shortlog": true, "rev-list": true, "reflog": true}

// gitGlobalValue are git's options before the subcommand that take the
// next word as their value.
var gitGlobalValue = map[string]bool{"-C": true, "-c": true, "--git-dir": true, "--work-tree": true,
	"--namespace": true, "--exec-path": true, "--config-env": true, "--super-prefix": true}

// gitReveals reports whether a git command (its words, "git" first) can
// print file contents or names from the object store or the index, and
// the words after the subcommand.
func gitReveals(words []string) (reveals bool, sub string, args []string) {
	i := 1
	for ; i < len(words); i++ {
		w := plain(words[i])
		if w == dynWord || isGlob(words[i]) {
			return true, "", nil
		}
		if !strings.HasPrefix(w, "-") {
			break
		}
		name, _, eq := strings.Cut(w, "=")
		if gitGlobalValue[name] && !eq {
			i++
		}
	}
	if i >= len(words) {
		return false, "", nil // git alone, --version, --help
	}
	sub, args = plain(words[i]), words[i+1:]
	switch {
	case sub == "stash":
		return len(args) > 0 && (plain(args[0]) == "show" || plain(args[0]) == "list" && len(args) > 1), sub, args
	case sub == "worktree":
		// add checks files out wherever it is told, beyond the hiding.
		return len(args) == 0 || plain(args[0]) != "list" && plain(args[0]) != "prune", sub, args
	case sub == "status" || sub == "commit":
		return gitVerbose(args), sub, args
	case gitQuiet[sub]:
		return false, sub, args
	case gitLogFamily[sub]:
		for _, a := range args {
			w := plain(a)
			if w == dynWord || isGlob(a) {
				return true, sub, args
			}
			if !strings.HasPrefix(w, "-") || isCount(w, '-') {
				continue // a revision, a path or -5
			}
			name, _, _ := strings.Cut(w, "=")
			if _, ok := gitMetadataOpts()[name]; !ok {
				return true, sub, args
			}
		}
		return false, sub, args
	}
	return true, sub, args
}

// gitVerbose reports whether status or commit arguments ask for
// -v/--verbose, which prints the diff of the index against the working
// tree (where a hidden file is missing) or against HEAD: file contents.
// git takes a long option by any unambiguous prefix (--verb), and short
// ones in a cluster (-sv) until one that takes a value (commit -mv is
// the message "v"). A word the analysis cannot read may be any of these.
func gitVerbose(args []string) bool {
	for _, a := range args {
		w := plain(a)
		switch {
		case w == dynWord || isGlob(a):
			return true
		case w == "--":
			return false
		case strings.HasPrefix(w, "--"):
			name, _, _ := strings.Cut(w, "=")
			if len(name) > 2 && strings.HasPrefix("--verbose", name) {
				return true
			}
		case strings.HasPrefix(w, "-"):
			for _, c := range w[1:] {
				if c == 'v' {
					return true
				}
				if strings.ContainsRune("mFcCtu", c) {
					break // the rest is this option's value
				}
			}
		}
	}
	return false
}

// bashGitHistory applies Read deny rules to what git keeps: with any in
// force, a git command that can print contents or names from the object
// store or index is denied when a revision path it names is covered, and
// asks (failing closed) otherwise. ok is false when nothing applies.
func (e *evaluation) bashGitHistory(an *analysis) (Decision, bool) {
	rules := e.rulesFor(Deny, func(r *Rule) bool { return r.coversTool("Read") })
	if len(rules) == 0 {
		return Decision{}, false
	}
	var asks []string
	for _, c := range an.commands {
		for _, l := range c.layers {
			if len(l.words) == 0 || filepath.Base(plain(l.name())) != "git" {
				continue
			}
			reveals, sub, args := gitReveals(l.words)
			if !reveals {
				continue
			}
			if d, ok := e.revisionPaths(rules, c.cwds, args); ok {
				return d, true
			}
			asks = append(asks, "git "+sub)
		}
	}
	if len(asks) == 0 {
		return Decision{}, false
	}
	return Decision{Behavior: Ask, FailClosed: true, Reason: fmt.Sprintf("This command needs approval: `%s` can print files from the repository's history or index, which the Read deny rules (%s) cannot be checked against.",
		strings.Join(asks, "`, `"), rules[0].where())}, true
}

// revisionPaths denies a "rev:path" (or ":path", ":N:path") argument
// whose path a Read deny rule covers: relative to the repository's top,
// which is where git reads it from, or to the command's directory with
// "./".
func (e *evaluation) revisionPaths(rules []*Rule, cwds []string, args []string) (Decision, bool) {
	for _, a := range args {
		w := plain(a)
		_, p, ok := strings.Cut(w, ":")
		if !ok || p == "" || strings.HasPrefix(w, "-") {
			continue
		}
		if len(p) > 2 && p[1] == ':' && strings.ContainsRune("0123", rune(p[0])) {
			p = p[2:] // ":1:path", a stage of the index
		}
		bases := append([]string{e.sh.cwd}, cwds...)
		for _, base := range bases {
			if base == "" {
				continue
			}
			f, err := formsOf(base, p)
			if err != nil {
				continue
			}
			for _, r := range rules {
				if e.pathMatch(r, f, true) {
					return deniedBy("Bash", r, "print "+f.literal+" from git's history"), true
				}
			}
		}
	}
	return Decision{}, false
}
