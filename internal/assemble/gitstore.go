package assemble

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/internal/gitrepo"
	"github.com/cohort-dev/cohort/internal/proc"
	"github.com/cohort-dev/cohort/internal/safegit"
)

// gitStore decides, once a session, whether the repository's object store
// and index are hidden from the model's commands, and names them.
//
// Git's objects and index hold every committed or staged version of every
// file, in a form any program can read (zlib), so the permission layer's
// rule for history-printing git commands (package permission) stops only
// git itself: an interpreter reads the store directly, and in
// bypassPermissions nothing asks. So when git's history or index holds a
// file a Read deny rule covers, the kernel hides the store from every
// model command (both sandbox profiles; Cohort's own git, which filters
// what it shows, still reads it): git commands that need objects then
// fail in that session, which the user is told at the start. When no
// denied file was ever committed or staged — the usual case, a denied
// .env being ignored — nothing is hidden and git works as always.
// Unreachable objects (a file staged and then unstaged, no ref or reflog
// naming it) have no path to match and are not looked for.
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

	once  sync.Once
	repo  gitrepo.Layout
	holds bool // history or index holds a denied file
}

// gitStoreTimeout bounds the search of history; past it the store is
// hidden (a search that did not finish proves nothing).
const gitStoreTimeout = 5 * time.Second

// paths are what to hide now: the object store and the index of the main
// checkout and of every linked worktree, or nothing.
func (g *gitStore) paths() []string {
	if g == nil || g.helper == nil || !g.any() {
		return nil
	}
	g.once.Do(g.search)
	if !g.holds {
		return nil
	}
	out := []string{filepath.Join(g.repo.CommonDir, "objects"), filepath.Join(g.repo.CommonDir, "index")}
	more, _ := filepath.Glob(filepath.Join(g.repo.CommonDir, "worktrees", "*", "index"))
	return append(out, more...)
}

// search lists the paths history (every ref and reflog) and the index
// name, and checks them against the Read deny rules.
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
		fmt.Fprintf(g.warn, "cohort: sandbox: git's history could not be searched for files your Read deny rules cover (%v); the repository's object store and index are hidden from the model's commands this session, so git commands that read them fail\n", err)
	case found != "":
		g.holds = true
		fmt.Fprintf(g.warn, "cohort: sandbox: git's history or index holds %s, which your Read deny rules cover: the repository's object store and index are hidden from the model's commands this session, so git commands that read them fail (remove the file from history, or the rule, to have git back)\n", found)
	}
}

// find returns the first path of history or the index that a Read deny
// rule covers, or "".
func (g *gitStore) find(ctx context.Context, git *safegit.Runner) (string, error) {
	staged, err := git.Run(ctx, safegit.Cmd{Repo: g.repo, Args: []string{"ls-files", "-z", "--cached"}})
	if err != nil {
		return "", err
	}
	for _, p := range strings.Split(staged, "\x00") {
		if p != "" && g.denied(filepath.Join(g.repo.WorkTree, p)) {
			return p, nil
		}
	}
	objects, err := git.Run(ctx, safegit.Cmd{Repo: g.repo, Args: []string{"rev-list", "--objects", "--all", "--reflog"}})
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
