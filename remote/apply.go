package remote

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cohort-dev/cohort/internal/gitrepo"
	"github.com/cohort-dev/cohort/internal/safegit"
)

// ApplyPatch commits patch's commits (git format-patch output) onto the
// checkout in dir with git am, keeping their authors and messages. The
// repository's hooks do not run. A patch that does not apply is aborted,
// leaving dir as it was, and the error says why.
// It runs through g, on repo (named as Cohort knows it), writing only
// repo's common dir and working tree.
func ApplyPatch(ctx context.Context, g *safegit.Runner, repo gitrepo.Layout, patch []byte) error {
	if g == nil {
		g = &safegit.Runner{}
	}
	args := []string{"am", "--quiet", "--keep-cr", "--no-gpg-sign"}
	if _, err := g.Run(ctx, safegit.Cmd{Repo: repo, Args: []string{"var", "GIT_COMMITTER_IDENT"}}); err != nil {
		// No identity configured: git am would refuse to commit.
		args = append([]string{"-c", "user.name=Cohort", "-c", "user.email=cohort@localhost"}, args...)
	}
	write := []string{repo.CommonDir, repo.WorkTree}
	if _, err := g.Run(ctx, safegit.Cmd{Repo: repo, Args: args, Stdin: patch, Write: write}); err != nil {
		_, _ = g.Run(context.WithoutCancel(ctx), safegit.Cmd{Repo: repo, Args: []string{"am", "--abort"}, Write: write})
		return fmt.Errorf("the remote agent's patch does not apply: %w", err)
	}
	return nil
}

// KeepAside writes a patch the lead did not apply to
// <root>/.cohort/remote/<id>.patch (mode 0600) for the user to review,
// and returns the path.
func KeepAside(root, id string, patch []byte) (string, error) {
	dir := filepath.Join(root, ".cohort", "remote")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	p := filepath.Join(dir, id+".patch")
	if err := os.WriteFile(p, patch, 0o600); err != nil {
		return "", err
	}
	return p, nil
}
