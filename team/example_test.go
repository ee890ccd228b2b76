package team_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cohort-dev/cohort/tasklist"
	"github.com/cohort-dev/cohort/team"
)

// A lead creates a team, a teammate joins, and the two share a task list.
func Example() {
	home, _ := os.MkdirTemp("", "cohort-example-")
	defer os.RemoveAll(home)
	ctx := context.Background()

	store, _ := team.NewStore(team.StoreConfig{Root: filepath.Join(home, "teams")})
	t, err := store.Create(ctx, team.CreateSpec{Name: "docs", Description: "write the manual", Cwd: "/src"})
	if err != nil {
		fmt.Println(err)
		return
	}
	alice, _ := store.AddMember(ctx, "docs", team.MemberSpec{Name: "alice", AgentType: "general-purpose", BackendType: team.BackendInProcess})
	fmt.Println(t.Config.LeadAgentID, alice.AgentID, alice.Color)

	tasks, _ := store.Tasks("docs")
	outline, _ := tasks.Create(ctx, tasklist.TaskSpec{Subject: "Outline the manual"})
	chapters, _ := tasks.Create(ctx, tasklist.TaskSpec{Subject: "Write the chapters", BlockedBy: []string{outline.ID}})

	_, err = tasks.Claim(ctx, chapters.ID, "alice")
	fmt.Println(err)
	claimed, _ := tasks.Claim(ctx, outline.ID, "alice")
	fmt.Println(claimed.ID, claimed.Status, claimed.Owner)
	// Output:
	// team-lead@docs alice@docs red
	// task #2 is blocked by #1 (pending); it can start once that task is completed
	// 1 in_progress alice
}
