package task

import (
	"context"
	"slices"
	"testing"
)

// A foreground task moved to the background reports the move
// (task_updated with is_backgrounded) and joins the background set; a
// background task in the set leaves it only after its end was reported.
func TestBackgroundSet(t *testing.T) {
	r, rec := newReg(t, func(c *Config) { c.ProgressInterval = -1 })
	q := NewQueue()
	release := make(chan struct{})
	run := func(ctx context.Context, tk *Task) (Outcome, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return Outcome{Text: "done"}, nil
	}
	bg, err := r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "bg", Background: true, Queue: q}, run)
	if err != nil {
		t.Fatal(err)
	}
	fg, err := r.Start(t.Context(), Spec{Kind: KindLocalBash, Description: "fg", Queue: q}, run)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Background(fg.ID()); err != nil {
		t.Fatal(err)
	}
	close(release)
	waitDoneT(t, bg)
	waitDoneT(t, fg)
	var sets [][]string
	var moved bool
	for _, e := range rec.events() {
		switch e.Subtype {
		case SubtypeBackgroundTasksChanged:
			var ids []string
			for _, l := range e.Tasks {
				ids = append(ids, l.TaskID)
			}
			slices.Sort(ids)
			sets = append(sets, ids)
		case SubtypeTaskUpdated:
			if e.TaskID == fg.ID() && e.Patch.IsBackgrounded != nil && *e.Patch.IsBackgrounded {
				moved = len(sets) == 1 // after bg joined, before fg did
			}
		}
	}
	if !moved {
		t.Errorf("no task_updated with is_backgrounded for %s before it joined the set: %+v", fg.ID(), rec.events())
	}
	both := []string{bg.ID(), fg.ID()}
	slices.Sort(both)
	if len(sets) != 4 || !slices.Equal(sets[0], []string{bg.ID()}) || !slices.Equal(sets[1], both) ||
		len(sets[2]) != 1 || len(sets[3]) != 0 {
		t.Errorf("background sets %v; want [bg] [bg fg], then one left, then none", sets)
	}
}
