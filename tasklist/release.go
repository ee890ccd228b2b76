package tasklist

import (
	"context"
	"strings"
)

// Release gives back every task owner holds that is not completed: its
// owner is cleared and an in-progress task is pending again, so another
// member can claim it. The team layer calls it for a member that died
// without finishing (its machine vanished). It returns the released
// tasks, in id order; releasing an owner with no open task changes
// nothing.
func (l *List) Release(ctx context.Context, owner string) ([]Task, error) {
	var out []Task
	err := l.mutate(ctx, func(st *listState) error {
		for _, id := range st.order {
			t := st.tasks[id]
			if t.Owner == "" || !strings.EqualFold(t.Owner, owner) || t.Status == StatusCompleted {
				continue
			}
			t.Owner = ""
			if t.Status == StatusInProgress {
				t.Status = StatusPending
			}
			st.touch(id)
			out = append(out, st.view(t))
		}
		return nil
	})
	return out, err
}
