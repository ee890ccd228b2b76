package tasklist

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/filelock"
	"github.com/cohort-dev/cohort/tool"
)

func TestTaskToolsInfrastructureErrors(t *testing.T) {
	t.Parallel()
	l := newTaskList(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	// Hold the list lock so that the tool has to wait, then find its
	// context cancelled: a Go error, not a result for the model.
	lk, err := filelock.Sidecar(t.Context(), l.Dir()+"/"+taskLockFile, false, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Unlock()
	res, err := Tools(oneList{l})[0].Run(ctx, &tool.Env{Caller: tool.Caller{Team: "alpha", Name: "alice"}}, json.RawMessage(`{"subject":"s","description":"d"}`))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("TaskCreate with a cancelled context: %+v, %v", res, err)
	}
}

// oneList is Lists for a single list whose team has every member.
type oneList struct{ l *List }

func (o oneList) Tasks(string) (*List, error)               { return o.l, nil }
func (o oneList) ActiveMember(string, string) (bool, error) { return true, nil }
