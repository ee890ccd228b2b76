package team

// The task list's tests that need a team store: a list shared by
// processes, and the list of a deleted team.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cohort-dev/cohort/tasklist"
)

func TestClaimOneWinnerProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	t.Parallel()
	s := newStore(t)
	mustCreate(t, s, "alpha")
	l := mustTasks(t, s, "alpha")
	if _, err := l.Create(t.Context(), tasklist.TaskSpec{Subject: "contested", Description: "do contested"}); err != nil {
		t.Fatal(err)
	}
	hs := startHelpers(t, 4, func(i int) []string {
		return []string{envHelper + "=claim", envRoot + "=" + s.Root(), envTeam + "=alpha", envTask + "=1", envOwner + fmt.Sprintf("=proc%d", i)}
	})
	outs := release(t, hs)
	winner := -1
	for i, out := range outs {
		switch out {
		case "won":
			if winner >= 0 {
				t.Errorf("helpers %d and %d both won", winner, i)
			}
			winner = i
		case "lost":
		default:
			t.Errorf("helper %d said %q", i, out)
		}
	}
	if winner < 0 {
		t.Fatalf("nobody won: %v", outs)
	}
	if task, err := l.Get(t.Context(), "1"); err != nil || task.Owner != fmt.Sprintf("proc%d", winner) {
		t.Errorf("task %+v (%v), winner proc%d", task, err, winner)
	}
}

func TestTaskListOfDeletedTeam(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	mustCreate(t, s, "alpha")
	l := mustTasks(t, s, "alpha")
	if _, err := l.Create(t.Context(), tasklist.TaskSpec{Subject: "t", Description: "do t"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(t.Context(), "alpha"); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Create(t.Context(), tasklist.TaskSpec{Subject: "x"}); !errors.Is(err, tasklist.ErrGone) {
		t.Errorf("Create in a deleted team: %v", err)
	}
	if _, err := l.List(t.Context()); !errors.Is(err, tasklist.ErrGone) {
		t.Errorf("List in a deleted team: %v", err)
	}
	if _, err := os.Stat(filepath.Join(s.Root(), "alpha")); !os.IsNotExist(err) {
		t.Errorf("the team directory came back: %v", err)
	}
	if _, err := s.Tasks("alpha"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Tasks of a deleted team: %v", err)
	}
}
