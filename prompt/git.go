package prompt

import (
	"context"
	"fmt"
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
func GitSnapshot(ctx context.Context, g *safegit.Runner, repo gitrepo.Layout, dir string) string {
	if repo.GitDir == "" {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	run := func(args ...string) (string, bool) {
		out, err := g.Run(ctx, safegit.Cmd{Repo: repo, Dir: dir, Args: args})
		return strings.TrimRight(out, "\n"), err == nil
	}
	if _, ok := run("rev-parse", "--is-inside-work-tree"); !ok {
		return ""
	}
	// The three reads are independent: run them at once.
	var branch, status, log string
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); branch, _ = run("branch", "--show-current") }()
	go func() { defer wg.Done(); status, _ = run("status", "--short") }()
	go func() { defer wg.Done(); log, _ = run("log", "--oneline", "-n", "5") }()
	wg.Wait()
	if branch == "" {
		branch = "(detached HEAD)"
	}
	lines := strings.Split(status, "\n")
	if status == "" {
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
