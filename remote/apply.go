package remote

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// ApplyPatch commits patch's commits (git format-patch output) onto the
// checkout in dir with git am, keeping their authors and messages. The
// repository's hooks do not run. A patch that does not apply is aborted,
// leaving dir as it was, and the error says why.
func ApplyPatch(ctx context.Context, dir string, patch []byte) error {
	args := []string{"am", "--quiet", "--keep-cr", "--no-gpg-sign"}
	if _, err := git(ctx, dir, nil, "var", "GIT_COMMITTER_IDENT"); err != nil {
		// No identity configured: git am would refuse to commit.
		args = append([]string{"-c", "user.name=Cohort", "-c", "user.email=cohort@localhost"}, args...)
	}
	if _, err := git(ctx, dir, patch, args...); err != nil {
		_, _ = git(context.WithoutCancel(ctx), dir, nil, "am", "--abort")
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
