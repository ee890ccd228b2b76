package worktree

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Changes is what a worktree holds that its base commit does not.
type Changes struct {
	// Modified are tracked paths changed in the index or the working tree
	// (added, deleted, modified, type-changed, unmerged), relative to the
	// worktree, slash-separated. A rename appears as its old and new path.
	Modified []string
	// Untracked are paths git does not track and is not told to ignore; an
	// untracked directory appears once, as "dir/". Symlinks Cohort made are
	// not listed.
	Untracked []string
	// NewCommits are "<hash> <subject>" of the commits on HEAD (and on the
	// worktree's cohort/ branch) that the base does not have, newest first.
	// Without a recorded base: the commits no other branch, tag or
	// remote-tracking ref has.
	NewCommits []string
}

// Empty reports whether there are no changes at all.
func (c Changes) Empty() bool {
	return len(c.Modified) == 0 && len(c.Untracked) == 0 && len(c.NewCommits) == 0
}

// String summarizes the changes for a report, at most ten entries a kind.
func (c Changes) String() string {
	if c.Empty() {
		return "no changes"
	}
	var b strings.Builder
	section := func(title string, items []string) {
		if len(items) == 0 {
			return
		}
		fmt.Fprintf(&b, "%s (%d):\n", title, len(items))
		for i, it := range items {
			if i == 10 {
				fmt.Fprintf(&b, "  … and %d more\n", len(items)-10)
				break
			}
			fmt.Fprintf(&b, "  %s\n", it)
		}
	}
	section("modified files", c.Modified)
	section("untracked files", c.Untracked)
	section("commits not on the base", c.NewCommits)
	return strings.TrimSuffix(b.String(), "\n")
}

// Changes reports what wt holds beyond its base commit: uncommitted and
// untracked files (ignored files do not count) and new commits.
func (m *Manager) Changes(ctx context.Context, wt *Worktree) (Changes, error) {
	out, err := m.git.runRead(ctx, wt.Path, "status", "--porcelain=v1", "-z", "--untracked-files=normal", "--no-renames", "--ignore-submodules=none")
	if err != nil {
		return Changes{}, err
	}
	var c Changes
	c.Modified, c.Untracked = parseStatus(out)
	c.Untracked = m.dropOwnLinks(wt, c.Untracked)
	c.NewCommits, err = m.newCommits(ctx, wt.Path, wt.Branch, m.branchTip(ctx, wt.Branch), wt.BaseCommit)
	return c, err
}

// branchTip returns the commit a cohort/ branch points at, or "" when the
// branch is someone else's or does not exist.
func (m *Manager) branchTip(ctx context.Context, branch string) string {
	if !strings.HasPrefix(branch, BranchPrefix) {
		return ""
	}
	out, err := m.git.runRead(ctx, m.root, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(out)
}

// dropOwnLinks removes the symlinks Cohort made (and which still point at
// the main checkout) from untracked paths.
func (m *Manager) dropOwnLinks(wt *Worktree, untracked []string) []string {
	if len(wt.links) == 0 {
		return untracked
	}
	out := untracked[:0]
	for _, u := range untracked {
		if !m.isOwnLink(wt, u) {
			out = append(out, u)
		}
	}
	return out
}

func (m *Manager) isOwnLink(wt *Worktree, rel string) bool {
	for _, l := range wt.links {
		if l != rel {
			continue
		}
		target, err := os.Readlink(filepath.Join(wt.Path, filepath.FromSlash(rel)))
		return err == nil && target == filepath.Join(m.root, filepath.FromSlash(rel))
	}
	return false
}

// newCommits lists commits reachable from HEAD in dir and from tip (the
// cohort/ branch's commit, if any) but not from base.
func (m *Manager) newCommits(ctx context.Context, dir, branch, tip, base string) ([]string, error) {
	args := []string{"log", "--no-color", "--format=%H %s", "-z", "HEAD"}
	if tip != "" {
		args = append(args, tip)
	}
	if base != "" {
		args = append(args, "^"+base)
	} else {
		args = append(args, "--not")
		if branch != "" {
			args = append(args, "--exclude="+branch)
		}
		args = append(args, "--branches", "--tags", "--remotes")
	}
	out, err := m.git.runRead(ctx, dir, append(args, "--")...)
	if err != nil {
		return nil, err
	}
	var commits []string
	for rec := range strings.SplitSeq(out, "\x00") {
		if rec = strings.TrimSpace(rec); rec != "" {
			commits = append(commits, rec)
		}
	}
	return commits, nil
}

// parseStatus splits `git status --porcelain=v1 -z` output into changed
// tracked paths and untracked paths. Records are "XY path"; a rename or
// copy record is followed by a second field, its source path.
func parseStatus(out string) (modified, untracked []string) {
	fields := strings.Split(out, "\x00")
	for i := 0; i < len(fields); i++ {
		rec := fields[i]
		if len(rec) < 4 || rec[2] != ' ' {
			continue
		}
		xy, path := rec[:2], rec[3:]
		switch {
		case xy == "??":
			untracked = append(untracked, path)
		case xy == "!!":
			// ignored: not a change
		default:
			modified = append(modified, path)
			if (xy[0] == 'R' || xy[0] == 'C' || xy[1] == 'R' || xy[1] == 'C') && i+1 < len(fields) {
				i++
				if xy[0] == 'R' || xy[1] == 'R' {
					modified = append(modified, fields[i])
				}
			}
		}
	}
	return modified, untracked
}
