package assemble

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
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
// files directly, and in bypassPermissions nothing asks. So while a Read
// deny rule is in force, the kernel hides the whole common git dir — a
// directory, so a rename inside it cannot bring a hidden file back — and
// the object stores its alternates name, from every model command (both
// sandbox profiles; Cohort's own git, which filters what it shows, still
// reads them), unless a search proves the store free of denied content:
//
//   - every object in the store (git cat-file --batch-all-objects, the
//     alternates' included) is reached by a walk, with paths, from every
//     commit and tag in the store — reachable or not, so an amended-away
//     commit or a dropped stash is walked like a branch — and from every
//     worktree's index, and
//   - no path of that walk is covered by a Read deny rule.
//
// A store proven free is shown but for the entries of the git dirs that
// are not git's structure (refs, reflogs, config, hooks, info, objects,
// the index, ...: an allow-list in gitstore_strays.go): lost-found's
// files, rerere's cache, COMMIT_EDITMSG, a rebase's patches and whatever
// else holds plain-text copies stay hidden, each on its own.
//
// An object no commit, tag or index reaches (a blob staged and then
// unstaged or re-staged, a tree a tool wrote) has no path to match, so it
// cannot be proven free and the store is hidden; git prune removes such
// objects. A search that fails or passes gitStoreTimeout proves nothing
// and hides the store too. Git commands then fail for the model in that
// session, which the user is told at the start with the way out. The file
// tools (permission.Checker.HideFromReads) treat the store as hidden from
// the start until the search proves it free, so no tool call races the
// search.
//
// The repository's other checkouts, those git worktree list names outside
// the agents' worktrees (a user's own worktree elsewhere, the main
// checkout seen from a linked one), hold copies of what the rules cover
// that no rule names: with a Read deny rule in force each is hidden whole
// from commands and file tools, from the start. One that holds the
// project (the project is a worktree nested in it) cannot be hidden whole;
// there the deny rules are applied as if it were the project.
//
// Decisions: the search walks every commit rather than listing the
// unreachable ones (git fsck --unreachable checks every object's
// integrity, far slower); it runs beside the session's start (the
// read-only profile's warm-up), not on a turn's path; it trusts the
// worktrees' gitdir files, which the sandbox protects.
type gitStore struct {
	cwd string
	// agents is where the agents' worktrees live (permission.WorktreesDir
	// in the project root): checkouts there are the agents' own.
	agents string
	// roots lists the Read deny rules' roots (gitstore_rules.go).
	roots func() []string
	// any says whether a Read deny rule is in force; denied whether one
	// covers path; deniedIn lists the paths the rules cover when dir is
	// taken for the project.
	any      func() bool
	denied   func(path string) bool
	deniedIn func(dir string) []string
	// helper starts Cohort's own git in the sandbox; nil until the
	// sandbox exists (and then nothing is hidden: there are no model
	// commands yet).
	helper func(ctx context.Context, writable []string) (proc.Launcher, error)
	env    []string
	warn   io.Writer
	// hide tells the file tools what the sandbox hides (the checker's
	// HideFromReads), show what it no longer hides (ShowToReads).
	hide, show func(dirs ...string)

	start    sync.Once
	repo     gitrepo.Layout
	found    bool             // a repository holds the working directory
	siblings []string         // other checkouts, hidden whole: checkouts()
	nested   []string         // what the rules cover in checkouts holding the project
	inner    []gitrepo.Layout // repositories nested in the project (gitstore_nested.go)
	bare     []string         // bare repositories in the project and stores reached through links out of it, hidden whole

	once   sync.Once
	holds  bool     // the store cannot be proven free of denied content
	hidden []string // then store(), else strays()
}

// gitStoreTimeout bounds the search of history; past it the store is
// hidden (a search that did not finish proves nothing).
const gitStoreTimeout = 5 * time.Second

// begin finds the repository and its other checkouts, and tells the file
// tools that the store and those checkouts are hidden until the search
// says otherwise: it runs when the session's sandbox is configured,
// before any tool call.
func (g *gitStore) begin() {
	if g == nil {
		return
	}
	g.start.Do(func() {
		if !g.any() {
			return
		}
		repo, err := gitrepo.Find(g.cwd)
		if err != nil {
			// No repository: no store of the project's to hide, but the
			// rules may name folders of others (gitstore_rules.go).
			g.ruled(nil)
			if g.hide != nil {
				g.hide(g.bare...)
			}
			return
		}
		g.repo, g.found = repo, true
		g.checkouts()
		g.findInner()
		g.ruled(slices.Concat(g.store(), g.siblings))
		hide := slices.Concat(g.store(), g.siblings, g.nested, g.bare)
		for _, l := range g.inner {
			hide = append(hide, storeOf(l)...)
		}
		if g.hide != nil {
			g.hide(hide...)
		}
	})
}

// checkouts sorts the repository's other checkouts: the agents' own are
// left to the deny rules (permission.Checker.ReadDenials covers them), one
// holding the working directory gets the rules applied to it, the rest
// are hidden whole.
func (g *gitStore) checkouts() {
	for _, c := range g.repo.Checkouts() {
		switch {
		case g.agents != "" && within(c, g.agents):
		case within(g.cwd, c) || within(g.repo.WorkTree, c):
			if g.deniedIn != nil {
				g.nested = append(g.nested, g.deniedIn(c)...)
			}
		default:
			g.siblings = append(g.siblings, c)
		}
	}
}

// paths are what to hide now: the other checkouts, and, unless the search
// proved it free, the common git dir, the working tree's own git dir when
// it lies elsewhere and the alternates' object stores.
func (g *gitStore) paths() []string {
	if g == nil || g.helper == nil || !g.any() {
		return nil
	}
	g.begin()
	if !g.found {
		return g.bare // the stores the rules name, outside any project repository
	}
	g.once.Do(g.search)
	return slices.Concat(g.siblings, g.nested, g.bare, g.hidden)
}

// store is what search hides unless it proves the store free.
func (g *gitStore) store() []string { return storeOf(g.repo) }

// storeOf is a repository's store: its common git dir, its working
// tree's git dir when that lies elsewhere, and the alternates' stores.
func storeOf(repo gitrepo.Layout) []string {
	out := []string{repo.CommonDir}
	if !within(repo.GitDir, repo.CommonDir) {
		out = append(out, repo.GitDir)
	}
	return append(out, repo.Alternates()...)
}

// search walks the store and checks its paths against the Read deny
// rules; the store stays hidden unless it proves it free.
func (g *gitStore) search() {
	ctx, cancel := context.WithTimeout(context.Background(), gitStoreTimeout)
	defer cancel()
	git := &safegit.Runner{Env: g.env, Sandbox: g.helper}
	defer g.searchInner(ctx, git)
	found, loose, err := g.find(ctx, git, g.repo)
	if faultGitStore {
		found, loose, err = "", 0, nil
	}
	switch {
	case err != nil:
		g.holds = true
		fmt.Fprintf(g.warn, "cohort: sandbox: git's history could not be searched for files your Read deny rules cover (%v); the repository's git directory is hidden from the model's commands this session, so git commands fail for them\n", err)
	case found != "":
		g.holds = true
		fmt.Fprintf(g.warn, "cohort: sandbox: git's history or index holds %s, which your Read deny rules cover: the repository's git directory is hidden from the model's commands this session, so git commands fail for them (remove the file from history, or the rule, to have git back)\n", found)
	case loose > 0:
		g.holds = true
		fmt.Fprintf(g.warn, "cohort: sandbox: %s holds %d objects that no commit, tag or index reaches (files staged and then unstaged or staged again, dropped stashes), which cannot be checked against your Read deny rules: the repository's git directory is hidden from the model's commands this session, so git commands fail for them (git prune removes such objects)\n", g.repo.CommonDir, loose)
	}
	if g.holds {
		g.hidden = g.store()
		return
	}
	// Free: the store is shown but for what is not git's own structure
	// (gitstore_strays.go), hidden before it is shown.
	g.hidden = strays(g.repo)
	if g.hide != nil {
		g.hide(g.hidden...)
	}
	if g.show != nil {
		g.show(g.store()...)
	}
}

// pseudoRefs are the refs outside refs/ that can keep a commit alive;
// rev-list --all does not walk them.
var pseudoRefs = []string{"HEAD", "ORIG_HEAD", "MERGE_HEAD", "FETCH_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD", "AUTO_MERGE", "BISECT_HEAD"}

// find returns the first path of the store's walk (walk) that a Read
// deny rule covers, or "" and how many objects of the store the walk did
// not reach. Replace refs are ignored: one planted by an agent would
// otherwise swap a commit's tree for another.
func (g *gitStore) find(ctx context.Context, git *safegit.Runner, repo gitrepo.Layout) (string, int, error) {
	if b := repo.Blocking(); b != "" {
		// A nested repository the model made can hold one: no git runs
		// on it (it would wait out the search's deadline).
		return "", 0, fmt.Errorf("%s is not a regular file (a FIFO or device), on which git would wait forever; remove it", b)
	}
	inv, err := git.Run(ctx, safegit.Cmd{Repo: repo, Args: []string{"--no-replace-objects", "cat-file", "--batch-all-objects", "--batch-check=%(objectname) %(objecttype)"}})
	if err != nil {
		return "", 0, err
	}
	var all, tips []string
	for _, line := range strings.Split(inv, "\n") {
		oid, typ, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		all = append(all, oid)
		if typ == "commit" || typ == "tag" {
			tips = append(tips, oid)
		}
	}
	reached, path, err := g.walk(ctx, git, repo, tips)
	if err != nil || path != "" {
		return path, 0, err
	}
	return "", unreached(all, reached), nil
}

// walk lists, with their paths, the objects every commit and tag of the
// store, every ref, pseudo-ref and reflog, and every worktree's index
// reach; it stops at the first path a Read deny rule covers.
func (g *gitStore) walk(ctx context.Context, git *safegit.Runner, repo gitrepo.Layout, tips []string) (reached []string, denied string, err error) {
	args := []string{"--no-replace-objects", "rev-list", "--objects", "--all", "--reflog", "--indexed-objects", "--stdin"}
	for _, ref := range pseudoRefs {
		for _, dir := range []string{repo.GitDir, repo.CommonDir} {
			if _, err := os.Stat(filepath.Join(dir, ref)); err == nil {
				args = append(args, ref)
				break
			}
		}
	}
	var in strings.Builder
	for _, t := range tips {
		in.WriteString(t + "\n")
	}
	objects, err := git.Run(ctx, safegit.Cmd{Repo: repo, Args: args, Stdin: []byte(in.String())})
	if err != nil {
		return nil, "", err
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(objects, "\n") {
		oid, p, _ := strings.Cut(line, " ")
		if oid == "" {
			continue
		}
		reached = append(reached, oid)
		if p == "" || seen[p] {
			continue
		}
		seen[p] = true
		if g.denied(filepath.Join(repo.WorkTree, p)) {
			return nil, p, nil
		}
	}
	return reached, "", nil
}

// unreached counts the names in all (sorted, as cat-file lists them) that
// reached lacks.
func unreached(all, reached []string) int {
	slices.Sort(reached)
	n := 0
	for _, oid := range all {
		if _, ok := slices.BinarySearch(reached, oid); !ok {
			n++
		}
	}
	return n
}
