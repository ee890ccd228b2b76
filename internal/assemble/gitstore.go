package assemble

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/internal/gitrepo"
	"github.com/cohort-dev/cohort/internal/proc"
	"github.com/cohort-dev/cohort/internal/safegit"
)

// gitStore decides, once a session, whether the repository's git
// directory is hidden from the model's commands, and names what to hide.
//
// Git's objects and index hold every committed or staged version of every
// file, in a form any program can read (zlib), and much of the rest of a
// git dir copies contents or names in plain text (rerere's cache,
// COMMIT_EDITMSG after commit -v, lost-found, a split index's shared
// file, rebase-apply's patch, MERGE_MSG, submodules' stores under
// modules/). The permission layer's rule for history-printing git commands
// (package permission) stops only git itself: an interpreter reads the
// files directly, and in bypassPermissions nothing asks. So when git's
// history (every ref, the reflogs, ORIG_HEAD and the other pseudo-refs,
// replace refs ignored) or any worktree's index holds a file a Read deny
// rule covers, the kernel hides the whole common git dir — a directory,
// so a rename inside it cannot bring a hidden file back — and the object
// stores its alternates name, from every model command (both sandbox
// profiles; Cohort's own git, which filters what it shows, still reads
// them). Git commands then fail for the model in that session, which the
// user is told at the start. When no denied file was ever committed or
// staged — the usual case, a denied .env being ignored — nothing is hidden
// and git works as always.
//
// Not covered: a denied file whose only copy is an unreachable object (a
// file staged, then unstaged, with no ref or reflog naming it): it has no
// path to match; and copies in other checkouts of the repository outside
// the project (a user's own worktree elsewhere).
type gitStore struct {
	cwd string
	// any says whether a Read deny rule is in force; denied whether one
	// covers path.
	any    func() bool
	denied func(path string) bool
	// helper starts Cohort's own git in the sandbox; nil until the
	// sandbox exists (and then nothing is hidden: there are no model
	// commands yet).
	helper func(ctx context.Context, writable []string) (proc.Launcher, error)
	env    []string
	warn   io.Writer
	// hide tells the file tools what the sandbox hides (the checker's
	// HideFromReads).
	hide func(dirs ...string)

	once   sync.Once
	repo   gitrepo.Layout
	holds  bool     // history or index holds a denied file
	hidden []string // then: store()
}

// gitStoreTimeout bounds the search of history; past it the store is
// hidden (a search that did not finish proves nothing).
const gitStoreTimeout = 5 * time.Second

// paths are what to hide now: the common git dir, the working tree's own
// git dir when it lies elsewhere, and the alternates' object stores; or
// nothing.
func (g *gitStore) paths() []string {
	if g == nil || g.helper == nil || !g.any() {
		return nil
	}
	g.once.Do(g.search)
	if !g.holds {
		return nil
	}
	return g.hidden
}

// store is what search hides once history holds a denied file.
func (g *gitStore) store() []string {
	out := []string{g.repo.CommonDir}
	if !within(g.repo.GitDir, g.repo.CommonDir) {
		out = append(out, g.repo.GitDir)
	}
	return append(out, alternates(g.repo.CommonDir)...)
}

// alternates are the object stores objects/info/alternates names (a
// relative entry is relative to the objects directory).
func alternates(common string) []string {
	objects := filepath.Join(common, "objects")
	data, err := os.ReadFile(filepath.Join(objects, "info", "alternates"))
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !filepath.IsAbs(line) {
			line = filepath.Join(objects, line)
		}
		out = append(out, filepath.Clean(line))
	}
	return out
}

// search lists the paths history and the indexes name, and checks them
// against the Read deny rules.
func (g *gitStore) search() {
	repo, err := gitrepo.Find(g.cwd)
	if err != nil {
		return // no repository: no store to hide
	}
	g.repo = repo
	ctx, cancel := context.WithTimeout(context.Background(), gitStoreTimeout)
	defer cancel()
	git := &safegit.Runner{Env: g.env, Sandbox: g.helper}
	found, err := g.find(ctx, git)
	switch {
	case err != nil:
		g.holds = true
		fmt.Fprintf(g.warn, "cohort: sandbox: git's history could not be searched for files your Read deny rules cover (%v); the repository's git directory is hidden from the model's commands this session, so git commands fail for them\n", err)
	case found != "":
		g.holds = true
		fmt.Fprintf(g.warn, "cohort: sandbox: git's history or index holds %s, which your Read deny rules cover: the repository's git directory is hidden from the model's commands this session, so git commands fail for them (remove the file from history, or the rule, to have git back)\n", found)
	}
	if g.holds {
		g.hidden = g.store()
		if g.hide != nil {
			g.hide(g.hidden...)
		}
	}
}

// pseudoRefs are the refs outside refs/ that can keep a commit alive;
// rev-list --all does not walk them.
var pseudoRefs = []string{"HEAD", "ORIG_HEAD", "MERGE_HEAD", "FETCH_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD", "AUTO_MERGE", "BISECT_HEAD"}

// find returns the first path of history or of any worktree's index that
// a Read deny rule covers, or "". Replace refs are ignored: one planted by
// an agent would otherwise swap a commit's tree for another.
func (g *gitStore) find(ctx context.Context, git *safegit.Runner) (string, error) {
	args := []string{"--no-replace-objects", "rev-list", "--objects", "--all", "--reflog", "--indexed-objects"}
	for _, ref := range pseudoRefs {
		for _, dir := range []string{g.repo.GitDir, g.repo.CommonDir} {
			if _, err := os.Stat(filepath.Join(dir, ref)); err == nil {
				args = append(args, ref)
				break
			}
		}
	}
	objects, err := git.Run(ctx, safegit.Cmd{Repo: g.repo, Args: args})
	if err != nil {
		return "", err
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(objects, "\n") {
		_, p, ok := strings.Cut(line, " ")
		if !ok || p == "" || seen[p] {
			continue
		}
		seen[p] = true
		if g.denied(filepath.Join(g.repo.WorkTree, p)) {
			return p, nil
		}
	}
	return "", nil
}
