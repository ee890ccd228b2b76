package worktree_test

import (
	"context"
	"fmt"
	"log"

	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/worktree"
)

// The life of an isolated agent: sweep orphans at start-up, give the agent
// a worktree and a write guard, and let go of it when it is done.
func ExampleManager() {
	ctx := context.Background()
	m, err := worktree.New(ctx, worktree.Config{Dir: ".", Symlinks: []string{"node_modules"}})
	if err != nil {
		log.Fatal(err) // no git, or not a repository: do not run the agent unisolated
	}
	if _, err := m.Sweep(ctx); err != nil {
		log.Print(err)
	}

	wt, err := m.Create(ctx, "agent-a1b2", worktree.Owner{SessionID: "s1", AgentID: "a1b2"})
	if err != nil {
		log.Fatal(err)
	}
	guard, err := m.Guard(ctx, wt, "")
	if err != nil {
		log.Fatal(err)
	}
	env := &tool.Env{Caller: tool.Caller{Cwd: wt.Path, ID: "a1b2"}, SessionID: "s1", Guard: guard}
	_ = env // ... the agent runs with env ...

	out, err := m.Finish(ctx, wt)
	if err != nil {
		log.Fatal(err)
	}
	if out.Kept {
		fmt.Printf("changes kept in %s on branch %s:\n%s\n", out.Path, out.Branch, out.Changes)
	}
}
