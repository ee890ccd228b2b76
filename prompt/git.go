package prompt

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/internal/gitrepo"
	"github.com/cohort-dev/cohort/internal/safegit"
)

// maxStatusLines caps the status listing in the git snapshot.
const maxStatusLines = 40

// GitSnapshot renders the repository state at session start: branch, short
// status and recent commits of repo's working tree, seen from dir (status
// paths are relative to it), run through g (internal/safegit: the
// repository named explicitly, none of its programs run, confined when g
// has a sandbox). It returns "" for the zero Layout (no repository) or
// when git is missing. The snapshot is frozen: it will not be updated
// during the conversation, and it says so.
//
// hidden (nil: none) is asked about every path the status lists, made
// absolute: a path it hides (one Read deny rules cover) is left out. The
// sandbox hides such files from commands, so git would list each as
// deleted, naming it and telling the model it was removed.
func GitSnapshot(ctx context.Context, g *safegit.Runner, repo gitrepo.Layout, dir string, hidden func(path string) bool) string {
	if repo.GitDir == "" {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	run := func(args ...string) (string, bool) {
		out, err := g.Run(ctx, safegit.Cmd{Repo: repo, Dir: dir, Args: args})
		return strings.TrimRight(out, "\n"), err == nil
	}
	// Two calls, at once: the short status with its branch header (one
	// git where branch --show-current, status --short and a rev-parse
	// to see the repository works took three; each is a sandboxed
	// process), and the recent commits. A status that fails (no work
	// tree here, no git) means no snapshot.
	var status, log string
	var ok bool
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); status, ok = run("status", "--short", "--branch") }()
	go func() { defer wg.Done(); log, _ = run("log", "--oneline", "-n", "5") }()
	wg.Wait()
	if !ok {
		return ""
	}
	branch, status := branchHeader(status)
	if branch == "" {
		branch = "(detached HEAD)"
	}
	lines := visible(status, dir, hidden)
	if len(lines) == 0 {
		lines = []string{"(clean)"}
	} else if len(lines) > maxStatusLines {
		lines = append(lines[:maxStatusLines], fmt.Sprintf("… and %d more", len(lines)-maxStatusLines))
	}
	var b strings.Builder
	b.WriteString("<git-snapshot>\nThis is the repository state when the session started; it is not updated as you work.\n")
	fmt.Fprintf(&b, "Current branch: %s\n\nStatus:\n%s\n", branch, strings.Join(lines, "\n"))
	if log != "" {
		fmt.Fprintf(&b, "\nRecent commits:\n%s\n", log)
	}
	b.WriteString("</git-snapshot>")
	return b.String()
}

// branchHeader splits the "## " line `git status --short --branch`
// starts with from the status lines, and reads the branch from it as
// `git branch --show-current` prints it: "## main...origin/main [ahead
// 1]" and "## No commits yet on main" are main, "## HEAD (no branch)"
// is "" (detached). A branch name holds neither "..", a space nor "HEAD"
// alone (git check-ref-format), so the cuts are unambiguous.
func branchHeader(out string) (branch, status string) {
	head, status, _ := strings.Cut(out, "\n")
	head, ok := strings.CutPrefix(head, "## ")
	if !ok {
		return "", out
	}
	for _, p := range []string{"No commits yet on ", "Initial commit on "} {
		if b, ok := strings.CutPrefix(head, p); ok {
			return b, status
		}
	}
	if head == "HEAD (no branch)" {
		return "", status
	}
	branch, _, _ = strings.Cut(head, "...")
	branch, _, _ = strings.Cut(branch, " ")
	return branch, status
}

// visible are the lines of a short status whose paths hidden lets through.
// A line it cannot parse (a quoted name that does not unquote) is left
// out when hidden is set.
func visible(status, dir string, hidden func(string) bool) []string {
	var out []string
	for _, l := range strings.Split(status, "\n") {
		if l == "" {
			continue
		}
		if hidden != nil && hidesLine(l, dir, hidden) {
			continue
		}
		out = append(out, l)
	}
	return out
}

// hidesLine reports whether hidden covers a path of one short status line
// ("XY path", or "XY from -> to" for a rename; a name with unusual
// characters quoted as Go quotes it, near enough).
func hidesLine(l, dir string, hidden func(string) bool) bool {
	if len(l) < 4 {
		return true
	}
	names := []string{l[3:]}
	if from, to, ok := strings.Cut(l[3:], " -> "); ok {
		names = []string{from, to}
	}
	for _, n := range names {
		if strings.HasPrefix(n, `"`) {
			u, err := strconv.Unquote(n)
			if err != nil {
				return true
			}
			n = u
		}
		if hidden(filepath.Join(dir, n)) {
			return true
		}
	}
	return false
}
