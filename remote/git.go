package remote

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cohort-dev/cohort/internal/gitrepo"
	"github.com/cohort-dev/cohort/internal/safegit"
)

// git runs git through g (internal/safegit: the repository named, none of
// its programs run — hooks included —, confined when g has a sandbox) in
// dir, a working tree or, for a bare repository, its git dir, and returns
// its stdout. write lists what the call may write (none: read-only).
func git(ctx context.Context, g *safegit.Runner, dir string, write []string, stdin []byte, args ...string) ([]byte, error) {
	if g == nil {
		g = &safegit.Runner{}
	}
	c := safegit.Cmd{Dir: dir, Args: args, Stdin: stdin, Write: write}
	if dir != "" {
		repo, err := layoutOf(dir)
		if err != nil {
			return nil, err
		}
		c.Repo = repo
	}
	out, err := g.Run(ctx, c)
	if err != nil {
		return []byte(out), fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return []byte(out), nil
}

// layoutOf reads where dir's repository is: a working tree's .git, or dir
// itself when it is a bare repository (HEAD, objects/, refs/).
func layoutOf(dir string) (gitrepo.Layout, error) {
	if l, err := gitrepo.Find(dir); err == nil {
		return l, nil
	}
	if _, err := os.Stat(filepath.Join(dir, "objects")); err == nil {
		r, _ := filepath.EvalSymlinks(dir)
		return gitrepo.Layout{GitDir: r, CommonDir: r}, nil
	}
	return gitrepo.Layout{}, fmt.Errorf("remote: %s is not a git repository", dir)
}

// bundleRef is the ref a bundle carries its base commit under.
const bundleRef = "refs/cohort/remote-base"

// Bundle makes a git bundle of rev (and its history) in the repository at
// dir. It returns the commit id and the bundle's bytes. The repository is
// not changed: the bundle is made from a temporary copy of its refs.
func Bundle(ctx context.Context, g *safegit.Runner, dir, rev string) (commit string, data []byte, err error) {
	out, err := git(ctx, g, dir, nil, nil, "rev-parse", "--verify", "--end-of-options", rev+"^{commit}")
	if err != nil {
		return "", nil, fmt.Errorf("remote: %s is not a commit in %s: %w", rev, dir, err)
	}
	commit = strings.TrimSpace(string(out))
	// git bundle wants a ref, and making one in the lead's repository would
	// race other spawns; a scratch repository that borrows the objects
	// (alternates) holds the ref instead.
	repo, err := layoutOf(dir)
	if err != nil {
		return "", nil, err
	}
	scratch, err := os.MkdirTemp("", "cohort-bundle-*")
	if err != nil {
		return "", nil, err
	}
	defer os.RemoveAll(scratch)
	if r, err := filepath.EvalSymlinks(scratch); err == nil {
		scratch = r
	}
	if _, err := git(ctx, g, "", []string{scratch}, nil, "init", "-q", "--bare", "--template=", scratch); err != nil {
		return "", nil, err
	}
	if err := os.MkdirAll(filepath.Join(scratch, "objects", "info"), 0o700); err != nil {
		return "", nil, err
	}
	alt := filepath.Join(repo.CommonDir, "objects") + "\n"
	if err := os.WriteFile(filepath.Join(scratch, "objects", "info", "alternates"), []byte(alt), 0o600); err != nil {
		return "", nil, err
	}
	if _, err := git(ctx, g, scratch, []string{scratch}, nil, "update-ref", bundleRef, commit); err != nil {
		return "", nil, err
	}
	data, err = git(ctx, g, scratch, nil, nil, "bundle", "create", "-q", "-", bundleRef)
	if err != nil {
		return "", nil, err
	}
	return commit, data, nil
}

// BundleName is the object-store name of a bundle: its digest.
func BundleName(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256-" + hex.EncodeToString(sum[:])
}

// Clone makes a fresh checkout of commit from bundle in dir (which must
// not exist or be empty), detached at commit, with a local identity for
// the agent's commits.
func Clone(ctx context.Context, g *safegit.Runner, bundle []byte, dir, commit string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	file := filepath.Join(filepath.Dir(dir), filepath.Base(dir)+".bundle")
	if err := os.WriteFile(file, bundle, 0o600); err != nil {
		return err
	}
	defer os.Remove(file)
	if _, err := git(ctx, g, "", []string{dir}, nil, "init", "-q", "--template=", dir); err != nil {
		return fmt.Errorf("remote: clone the job's code: %w", err)
	}
	steps := [][]string{
		{"config", "user.name", "Cohort remote agent"},
		{"config", "user.email", "remote-agent@cohort.invalid"},
		{"fetch", "-q", file, bundleRef},
		{"checkout", "-q", "--detach", commit},
	}
	for _, s := range steps {
		if _, err := git(ctx, g, dir, []string{dir}, nil, s...); err != nil {
			return fmt.Errorf("remote: clone the job's code: %w", err)
		}
	}
	return nil
}

// MakePatch returns the agent's work in dir as git format-patch output
// against base: its commits, then its uncommitted changes (untracked files
// included) as one more commit. Nil means it changed nothing.
func MakePatch(ctx context.Context, g *safegit.Runner, dir, base string) ([]byte, error) {
	st, err := git(ctx, g, dir, nil, nil, "status", "--porcelain", "--untracked-files=all")
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(st)) > 0 {
		if _, err := git(ctx, g, dir, []string{dir}, nil, "add", "-A"); err != nil {
			return nil, err
		}
		if _, err := git(ctx, g, dir, []string{dir}, nil, "commit", "-q", "--no-verify", "-m", "Uncommitted changes of the remote agent"); err != nil {
			return nil, err
		}
	}
	count, err := git(ctx, g, dir, nil, nil, "rev-list", "--count", base+"..HEAD")
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(string(count)) == "0" {
		return nil, nil
	}
	return git(ctx, g, dir, nil, nil, "format-patch", "--stdout", "--binary", "--no-signature", "--no-ext-diff", base+"..HEAD")
}
