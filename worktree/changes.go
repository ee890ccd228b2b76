package worktree

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cohort-dev/cohort/internal/gitrepo"
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
	c, _, err := m.inspect(ctx, wt)
	return c, err
}

// state is what inspect learned besides the changes.
type state struct {
	tip    string // commit of wt's cohort/ branch; "" if it has none
	branch string // the branch checked out now; "" when HEAD is detached
}

// inspect returns wt's changes and state. In the common case — HEAD on the
// cohort/ branch, still at the base — a single `git status` answers all.
func (m *Manager) inspect(ctx context.Context, wt *Worktree) (Changes, state, error) {
	out, err := m.git.read(ctx, m.at(wt), "status", "--porcelain=v2", "--branch", "-z", "--untracked-files=normal", "--no-renames", "--ignore-submodules=none")
	if err != nil {
		return Changes{}, state{}, err
	}
	st := parseStatus(out)
	c := Changes{Modified: st.modified, Untracked: m.dropOwnLinks(wt, st.untracked)}
	s := state{branch: st.branch}
	if st.branch == wt.Branch && strings.HasPrefix(wt.Branch, BranchPrefix) {
		s.tip = st.head
	} else {
		s.tip = m.branchTip(ctx, wt.Branch)
	}
	if wt.BaseCommit != "" && st.head == wt.BaseCommit && (s.tip == "" || s.tip == wt.BaseCommit) {
		return c, s, nil // neither HEAD nor the branch moved
	}
	c.NewCommits, err = m.newCommits(ctx, m.at(wt), st.branch, s.tip, wt.BaseCommit)
	return c, s, err
}

// branchTip returns the commit a cohort/ branch points at, or "" when the
// branch is someone else's or does not exist.
func (m *Manager) branchTip(ctx context.Context, branch string) string {
	if !strings.HasPrefix(branch, BranchPrefix) {
		return ""
	}
	out, err := m.git.read(ctx, m.main(), "rev-parse", "--verify", "--quiet", "refs/heads/"+branch)
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
// cohort/ branch's commit, if any) but not from base; without a base, those
// no ref other than the checked-out branch has.
func (m *Manager) newCommits(ctx context.Context, repo gitrepo.Layout, branch, tip, base string) ([]string, error) {
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
	out, err := m.git.read(ctx, repo, append(args, "--")...)
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

// status is parsed `git status --porcelain=v2 --branch -z` output.
type status struct {
	head      string // HEAD's commit; "" before the first commit
	branch    string // HEAD's branch; "" when detached
	modified  []string
	untracked []string
}

// parseStatus reads NUL-terminated porcelain v2 records: "# branch.oid
// <sha>", "# branch.head <name>", "1 XY sub mH mI mW hH hI path" (changed),
// "2 ... Xscore path" followed by a field with the source path (renamed or
// copied), "u XY sub m1 m2 m3 mW h1 h2 h3 path" (unmerged), "? path"
// (untracked) and "! path" (ignored). Unknown records are skipped.
func parseStatus(out string) status {
	var st status
	fields := strings.Split(out, "\x00")
	for i := 0; i < len(fields); i++ {
		rec := fields[i]
		kind, rest, _ := strings.Cut(rec, " ")
		switch kind {
		case "#":
			key, val, _ := strings.Cut(rest, " ")
			switch {
			case key == "branch.oid" && val != "(initial)":
				st.head = val
			case key == "branch.head" && val != "(detached)":
				st.branch = val
			}
		case "?":
			if rest != "" {
				st.untracked = append(st.untracked, rest)
			}
		case "1":
			if p := field(rec, 8); p != "" {
				st.modified = append(st.modified, p)
			}
		case "2":
			if p := field(rec, 9); p != "" {
				st.modified = append(st.modified, p)
				if i+1 < len(fields) && strings.HasPrefix(field(rec, 8), "R") && fields[i+1] != "" {
					st.modified = append(st.modified, fields[i+1])
				}
			}
			i++ // the source path
		case "u":
			if p := field(rec, 10); p != "" {
				st.modified = append(st.modified, p)
			}
		}
	}
	return st
}

// field returns the n-th space-separated field of rec (from 0), where the
// last field asked for may itself contain spaces (a path). Fields before a
// path are never empty, so "" means a malformed record.
func field(rec string, n int) string {
	parts := strings.SplitN(rec, " ", n+1)
	if len(parts) != n+1 {
		return ""
	}
	return parts[n]
}
