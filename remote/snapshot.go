package remote

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/cohort-dev/cohort/internal/safegit"
)

// Snapshot returns a commit of the working tree at dir as it is now: HEAD
// plus what is uncommitted (changed, added and untracked files that are
// not ignored), so that a teammate on another machine starts from what the
// lead sees. It is made with a scratch index, so neither the repository's
// index nor any ref changes; its objects go into the repository's object
// store unreferenced (git gc drops them in time). With nothing uncommitted
// it is HEAD itself.
func Snapshot(ctx context.Context, g *safegit.Runner, dir string) (string, error) {
	if g == nil {
		g = &safegit.Runner{}
	}
	repo, err := layoutOf(dir)
	if err != nil {
		return "", err
	}
	out, err := git(ctx, g, dir, nil, nil, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return "", fmt.Errorf("remote: %s has no commit to start from: %w", dir, err)
	}
	head := strings.TrimSpace(string(out))
	status, err := git(ctx, g, dir, nil, nil, "status", "--porcelain", "--untracked-files=all")
	if err != nil {
		return "", err
	}
	if len(strings.TrimSpace(string(status))) == 0 {
		return head, nil
	}
	scratch, err := os.MkdirTemp("", "cohort-snapshot-*")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(scratch)
	index := scratch + "/index"
	run := func(write []string, args ...string) (string, error) {
		out, err := g.Run(ctx, safegit.Cmd{Repo: repo, Args: args, Index: index, Write: append([]string{scratch}, write...)})
		if err != nil {
			return "", fmt.Errorf("remote: snapshot of %s: git %s: %w", dir, args[0], err)
		}
		return strings.TrimSpace(out), nil
	}
	if _, err := run(nil, "read-tree", head); err != nil {
		return "", err
	}
	if _, err := run([]string{repo.CommonDir}, "add", "-A"); err != nil {
		return "", err
	}
	tree, err := run([]string{repo.CommonDir}, "write-tree")
	if err != nil {
		return "", err
	}
	return run([]string{repo.CommonDir}, "-c", "user.name=Cohort", "-c", "user.email=cohort@localhost",
		"commit-tree", tree, "-p", head, "-m", "Uncommitted changes of the lead")
}
