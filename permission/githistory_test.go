package permission

import (
	"strings"
	"testing"
)

// TestGitHistoryUnderReadDeny is issue 36's escape 2: with
// Read(./secrets/**) denied, git commands that print blobs or history
// (git show HEAD:secrets/key, log -p, cat-file -p, diff of revisions)
// were auto-allowed as read-only, and the sandbox hides only the working
// tree. With a Read deny rule in force they never run without a person,
// in any mode, and one naming a denied path is denied outright; commands
// that print only metadata keep running.
func TestGitHistoryUnderReadDeny(t *testing.T) {
	f := newFixture(t)
	f.perms(nil, []string{"Read(./secrets/**)"}, nil)
	denied := []string{"git show HEAD:secrets/key", "git cat-file -p HEAD:secrets/key", "git show :secrets/key",
		"git --no-pager show HEAD~0:./secrets/key", "git -C . show HEAD:secrets/key | cat"}
	revealing := []string{"git log -p", "git log --patch -5", "git log --stat", "git log -Ssecret", "git cat-file --batch-all-objects --batch",
		"git diff 4b825dc642cb6eb9a060e54bf8d69288fbee4904 HEAD", "git diff", "git diff --cached", "git show", "git archive HEAD",
		"git blame HEAD -- README", "git grep s3cret HEAD", "git format-patch --stdout --root", "git bundle create - HEAD",
		"git stash show -p", "git ls-files", "git ls-tree -r HEAD", "git rev-list --objects --all", "git whatchanged",
		"git -c alias.x=log x -p", "git lg", "bash -c 'git show HEAD'", "git log -p $REV", "git diff-tree -p HEAD",
		// status and commit print a diff with -v (an outsider's round).
		"git status -v", "git status -vv", "git status --verbose --verbose --untracked-files=no", "git status --verb",
		"git status -sv", "git status -v --porcelain=v2", "git commit --dry-run -v -a", "git commit -av --dry-run", "git status $V",
		// copies of the tree where the sandbox hides nothing
		"git clone -q . /tmp/c", "git worktree add /tmp/w HEAD", "git checkout-index -a --prefix=/tmp/ci/"}
	quiet := []string{"git status", "git status -s", "git status --porcelain -uno", "git log --oneline -5", "git log --format=%H --author=x", "git rev-parse HEAD", "git branch -a", "git log -3"}
	for _, mode := range []Mode{ModeDefault, ModeAcceptEdits, ModePlan, ModeDontAsk, ModeBypassPermissions} {
		c := f.checker(mode)
		for _, line := range denied {
			if d := f.decide(c, bash(line)); d.Behavior != Deny {
				t.Errorf("%s mode: %q: %s (%s), want deny", mode, line, d.Behavior, d.Reason)
			}
		}
		for _, line := range revealing {
			if d := f.decide(c, bash(line)); d.Behavior == Allow {
				t.Errorf("%s mode: %q was allowed (%s)", mode, line, d.Reason)
			}
		}
	}
	c := f.checker(ModeDefault)
	for _, line := range quiet {
		if d := f.decide(c, bash(line)); d.Behavior != Allow {
			t.Errorf("%q: %s (%s), want allow", line, d.Behavior, d.Reason)
		}
	}
	// commit and worktree ask in default mode anyway; a message is not an
	// option, and listing worktrees copies nothing.
	for _, line := range []string{"git commit -m v", "git commit -mv -a", "git commit -F v.txt", "git worktree list", "git worktree prune"} {
		if reveals, _, _ := gitReveals(strings.Fields(line)); reveals {
			t.Errorf("%q counts as revealing", line)
		}
	}
	// Without a Read deny rule, history is the project's to read.
	free := newFixture(t).checker(ModeDefault)
	if d := f.decide(free, bash("git log -p")); d.Behavior != Allow {
		t.Errorf("git log -p without deny rules: %s (%s)", d.Behavior, d.Reason)
	}
}
