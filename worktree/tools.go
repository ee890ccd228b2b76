package worktree

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
)

// Tool names (Claude Code's).
const (
	EnterName = "EnterWorktree"
	ExitName  = "ExitWorktree"
)

// Tools returns EnterWorktree and ExitWorktree, in that order. Both move
// the calling agent (and EnterWorktree makes a branch and a checkout,
// ExitWorktree may delete them), so calls are neither read-only nor
// concurrency-safe.
func (w *Workspaces) Tools() []tool.Tool {
	return []tool.Tool{
		tool.New(tool.Spec[enterInput]{Name: EnterName, Description: enterDescription, Input: enterSchema, Run: w.enterWorktree}),
		tool.New(tool.Spec[exitInput]{Name: ExitName, Description: exitDescription, Input: exitSchema, Run: w.exitWorktree}),
	}
}

// Entered is the Meta of a successful EnterWorktree call.
type Entered struct {
	WorktreePath   string `json:"worktreePath"`
	WorktreeBranch string `json:"worktreeBranch"`
	Created        bool   `json:"created"`
}

// Exited is the Meta of a successful ExitWorktree call.
type Exited struct {
	Action         string `json:"action"`
	WorktreePath   string `json:"worktreePath"`
	WorktreeBranch string `json:"worktreeBranch"`
	Kept           bool   `json:"kept"`
}

const enterDescription = `Moves you into a git worktree: a separate checkout of this repository on its own branch, so that your changes stay apart from the main checkout and from other agents until someone merges them.

- With no input, a new worktree is made under .cohort/worktrees/ on a new branch cohort/<name>, starting from the current commit.
- name: use the worktree of that name under .cohort/worktrees/, making it if it does not exist yet.
- path: use an existing linked worktree of this repository, given by its absolute path.

Afterwards your working directory is the worktree: Bash commands run there and file paths should point into it. Writing into the main checkout is refused while you are in the worktree. Commit what you want to keep, and call ExitWorktree when you are done.`

var enterSchema = tool.Object(
	tool.Optional("name", tool.String("Name of the worktree under .cohort/worktrees/ (letters, digits, '.', '_', '-', '/'-separated; at most 64 characters). Made if it does not exist.")),
	tool.Optional("path", tool.String("Absolute path of an existing linked worktree of this repository.")),
)

type enterInput struct {
	Name string `json:"name"`
	Path string `json:"path"`
}

// enterWorktree is EnterWorktree: it finds or makes the worktree and
// moves the agent into it.
func (w *Workspaces) enterWorktree(ctx context.Context, env *tool.Env, in enterInput) (tool.Result, error) {
	switch {
	case env == nil || env.Caller.ID == "" || w.cfg.Move == nil:
		return tool.Result{}, errors.New("isolation: EnterWorktree needs the calling agent's id and a way to move it (Config.Move)")
	case env.Guard != nil:
		if g, ok := env.Guard.(*Guard); ok {
			return tool.Errorf("You already work in the worktree %s. Leave it with ExitWorktree first; an agent started in a worktree (isolation: \"worktree\") stays in it until it ends.", g.Worktree()), nil
		}
		return tool.Errorf("Your writes are already confined to a particular area, so you cannot move into a worktree."), nil
	case in.Name != "" && in.Path != "":
		return tool.Errorf("Give either name or path, not both."), nil
	}
	lease, created, err := w.openForEnter(ctx, env.Caller.ID, in.Name, in.Path)
	if err != nil {
		return tool.Errorf("Could not enter a worktree: %v", err), nil
	}
	e := &entry{lease: lease, prevCwd: env.Cwd, prevGuard: env.Guard}
	w.mu.Lock()
	_, busy := w.entered[env.Caller.ID]
	if !busy {
		w.entered[env.Caller.ID] = e
	}
	w.mu.Unlock()
	cwd := lease.Cwd(env.Cwd)
	var moveErr error
	if !busy {
		moveErr = w.cfg.Move(env.Caller.ID, cwd, lease.Guard)
	}
	if busy || moveErr != nil {
		fctx, cancel := w.FinishContext(ctx)
		defer cancel()
		if !busy {
			w.mu.Lock()
			delete(w.entered, env.Caller.ID)
			w.mu.Unlock()
		}
		letGo(fctx, lease, created)
		if busy {
			return tool.Errorf("You are already in a worktree; leave it with ExitWorktree first."), nil
		}
		return tool.Result{}, fmt.Errorf("isolation: move agent %s into %s: %w", env.Caller.ID, cwd, moveErr)
	}
	how := "Entered the existing worktree"
	if created {
		how = "Created and entered the worktree"
	}
	branch := lease.Branch()
	if branch == "" {
		branch = "(detached HEAD)"
	}
	text := fmt.Sprintf("%s %s on branch %s. Your working directory is now %s: Bash commands run there and file paths should point into the worktree. The main checkout %s is read-only for you until you call ExitWorktree; commit the changes you want to keep.",
		how, lease.Path(), branch, cwd, lease.Root())
	return tool.Result{Content: []llm.Block{llm.Text(text)},
		Meta: Entered{WorktreePath: lease.Path(), WorktreeBranch: lease.Branch(), Created: created}}, nil
}

// openForEnter finds or makes the worktree an EnterWorktree call asks
// for.
func (w *Workspaces) openForEnter(ctx context.Context, agentID, name, path string) (*Lease, bool, error) {
	owner := Owner{SessionID: w.cfg.SessionID, AgentID: agentID}
	hooks := w.hooks(agentID)
	switch {
	case path != "":
		l, err := w.Enter(ctx, Target{Path: path}, owner, hooks)
		return l, false, err
	case name != "":
		if err := ValidateSlug(name); err != nil {
			return nil, false, err
		}
		m, err := w.manager(ctx)
		if err != nil {
			return nil, false, err
		}
		if _, err := os.Lstat(filepath.Join(m.Root(), filepath.FromSlash(WorktreesDir), filepath.FromSlash(name))); err == nil {
			l, err := w.Enter(ctx, Target{Name: name}, owner, hooks)
			return l, false, err
		}
		l, err := w.Create(ctx, name, owner, hooks)
		return l, true, err
	}
	base := "wt-" + label(strings.TrimPrefix(agentID, "a"), 8)
	for i := 1; ; i++ {
		slug := base
		if i > 1 {
			slug = fmt.Sprintf("%s-%d", base, i)
		}
		l, err := w.Create(ctx, slug, owner, hooks)
		if !errors.Is(err, ErrExists) || i == 20 {
			return l, true, err
		}
	}
}

// letGo releases a lease that was not handed over: a worktree made for it
// goes if still clean; an existing one is kept as it was.
func letGo(ctx context.Context, l *Lease, created bool) {
	if created {
		_, _ = l.Finish(ctx)
		return
	}
	_, _ = l.Keep(ctx)
}

const exitDescription = `Leaves the worktree you entered with EnterWorktree and takes you back to your previous working directory.

- action "keep": leave the worktree and its branch in place, changes and all, so the work can be reviewed or merged later. The result names the path and the branch.
- action "remove": delete the worktree and its cohort/ branch. This is refused when it would lose anything — changed or untracked files, or commits that only this branch has — and the refusal lists them; commit and keep instead, or pass discard_changes: true to delete them anyway.

An agent started with isolation "worktree" cannot leave its worktree; it is kept or removed automatically when the agent ends.`

var exitSchema = tool.Object(
	tool.Required("action", tool.Enum(`"keep" leaves the worktree in place; "remove" deletes it and its branch.`, "keep", "remove")),
	tool.Optional("discard_changes", tool.Boolean("With remove: delete the worktree even though it has changes that would be lost.")),
)

type exitInput struct {
	Action         string `json:"action"`
	DiscardChanges bool   `json:"discard_changes"`
}

// exitWorktree is ExitWorktree: it keeps or removes the worktree the
// agent entered and moves the agent back.
func (w *Workspaces) exitWorktree(ctx context.Context, env *tool.Env, in exitInput) (tool.Result, error) {
	if env == nil || env.Caller.ID == "" || w.cfg.Move == nil {
		return tool.Result{}, errors.New("isolation: ExitWorktree needs the calling agent's id and a way to move it (Config.Move)")
	}
	w.mu.Lock()
	e := w.entered[env.Caller.ID]
	w.mu.Unlock()
	if e == nil {
		if g, ok := env.Guard.(*Guard); ok {
			return tool.Errorf("You were started in the worktree %s and stay in it until you finish; it is kept (if it has changes) or removed automatically then.", g.Worktree()), nil
		}
		return tool.Errorf("You are not in a worktree: there is nothing to exit. EnterWorktree moves you into one."), nil
	}
	var out Outcome
	var err error
	switch in.Action {
	case "keep":
		out, err = e.lease.Keep(ctx)
	case "remove":
		out, err = e.lease.Remove(ctx, in.DiscardChanges)
		var dirty *DirtyError
		if errors.As(err, &dirty) {
			return tool.Errorf("The worktree %s was not removed: it has changes that removing it would lose.\n%s\nKeep it (action \"keep\") after committing what matters, or call ExitWorktree with action \"remove\" and discard_changes: true to delete them. You are still in the worktree.", dirty.Path, dirty.Lost), nil
		}
		if err != nil {
			return tool.Errorf("The worktree %s was not removed: %v. You are still in the worktree.", e.lease.Path(), err), nil
		}
	default:
		return tool.Errorf("action must be \"keep\" or \"remove\", not %q.", in.Action), nil
	}
	w.mu.Lock()
	delete(w.entered, env.Caller.ID)
	w.mu.Unlock()
	if merr := w.cfg.Move(env.Caller.ID, e.prevCwd, e.prevGuard); merr != nil {
		return tool.Result{}, fmt.Errorf("isolation: move agent %s back to %s: %w", env.Caller.ID, e.prevCwd, merr)
	}
	return exitResult(in.Action, e, out, err), nil
}

func exitResult(action string, e *entry, out Outcome, keepErr error) tool.Result {
	var b strings.Builder
	if action == "keep" {
		fmt.Fprintf(&b, "Left the worktree %s; it stays in place on branch %s", out.Path, out.Branch)
		if !out.Changes.Empty() {
			fmt.Fprintf(&b, " with these changes:\n%s\n", out.Changes)
		} else {
			b.WriteString(" (no changes).\n")
		}
		if keepErr != nil {
			fmt.Fprintf(&b, "Note: releasing it reported a problem: %v\n", keepErr)
		}
	} else {
		fmt.Fprintf(&b, "Removed the worktree %s", out.Path)
		if strings.HasPrefix(out.Branch, BranchPrefix) {
			fmt.Fprintf(&b, " and its branch %s", out.Branch)
		}
		if !out.Changes.Empty() {
			fmt.Fprintf(&b, ", discarding:\n%s\n", out.Changes)
		} else {
			b.WriteString(".\n")
		}
	}
	fmt.Fprintf(&b, "Your working directory is %s again.", e.prevCwd)
	return tool.Result{Content: []llm.Block{llm.Text(b.String())},
		Meta: Exited{Action: action, WorktreePath: out.Path, WorktreeBranch: out.Branch, Kept: out.Kept}}
}
