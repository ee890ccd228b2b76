package remote

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// git runs git in dir with the repository's hooks off (a job's code must
// not run anything of its own outside the agent's sandboxed tools) and
// returns its stdout.
func git(ctx context.Context, dir string, stdin []byte, args ...string) ([]byte, error) {
	full := append([]string{"-c", "core.hooksPath=" + os.DevNull}, args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Dir = dir
	cmd.Env = append(cleanGitEnv(os.Environ()), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// cleanGitEnv drops the variables that would point git at another
// repository than the one in dir.
func cleanGitEnv(env []string) []string {
	out := env[:0:0]
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_COMMON_DIR", "LC_ALL":
			continue
		}
		out = append(out, kv)
	}
	return out
}

// bundleRef is the ref a bundle carries its base commit under.
const bundleRef = "refs/cohort/remote-base"

// Bundle makes a git bundle of rev (and its history) in the repository at
// dir. It returns the commit id and the bundle's bytes. The repository is
// not changed: the bundle is made from a temporary copy of its refs.
func Bundle(ctx context.Context, dir, rev string) (commit string, data []byte, err error) {
	out, err := git(ctx, dir, nil, "rev-parse", "--verify", "--end-of-options", rev+"^{commit}")
	if err != nil {
		return "", nil, fmt.Errorf("remote: %s is not a commit in %s: %w", rev, dir, err)
	}
	commit = strings.TrimSpace(string(out))
	// git bundle wants a ref, and making one in the lead's repository would
	// race other spawns; a scratch repository that borrows the objects
	// (alternates) holds the ref instead.
	gitDir, err := git(ctx, dir, nil, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if err != nil {
		return "", nil, err
	}
	scratch, err := os.MkdirTemp("", "cohort-bundle-*")
	if err != nil {
		return "", nil, err
	}
	defer os.RemoveAll(scratch)
	if _, err := git(ctx, scratch, nil, "init", "-q", "--bare", "."); err != nil {
		return "", nil, err
	}
	alt := filepath.Join(strings.TrimSpace(string(gitDir)), "objects") + "\n"
	if err := os.WriteFile(filepath.Join(scratch, "objects", "info", "alternates"), []byte(alt), 0o600); err != nil {
		return "", nil, err
	}
	if _, err := git(ctx, scratch, nil, "update-ref", bundleRef, commit); err != nil {
		return "", nil, err
	}
	data, err = git(ctx, scratch, nil, "bundle", "create", "-q", "-", bundleRef)
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
func Clone(ctx context.Context, bundle []byte, dir, commit string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	file := filepath.Join(filepath.Dir(dir), filepath.Base(dir)+".bundle")
	if err := os.WriteFile(file, bundle, 0o600); err != nil {
		return err
	}
	defer os.Remove(file)
	steps := [][]string{
		{"init", "-q", "."},
		{"config", "user.name", "Cohort remote agent"},
		{"config", "user.email", "remote-agent@cohort.invalid"},
		{"fetch", "-q", file, bundleRef},
		{"checkout", "-q", "--detach", commit},
	}
	for _, s := range steps {
		if _, err := git(ctx, dir, nil, s...); err != nil {
			return fmt.Errorf("remote: clone the job's code: %w", err)
		}
	}
	return nil
}

// MakePatch returns the agent's work in dir as git format-patch output
// against base: its commits, then its uncommitted changes (untracked files
// included) as one more commit. Nil means it changed nothing.
func MakePatch(ctx context.Context, dir, base string) ([]byte, error) {
	st, err := git(ctx, dir, nil, "status", "--porcelain", "--untracked-files=all")
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(st)) > 0 {
		if _, err := git(ctx, dir, nil, "add", "-A"); err != nil {
			return nil, err
		}
		if _, err := git(ctx, dir, nil, "commit", "-q", "--no-verify", "-m", "Uncommitted changes of the remote agent"); err != nil {
			return nil, err
		}
	}
	count, err := git(ctx, dir, nil, "rev-list", "--count", base+"..HEAD")
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(string(count)) == "0" {
		return nil, nil
	}
	return git(ctx, dir, nil, "format-patch", "--stdout", "--binary", "--no-signature", base+"..HEAD")
}
