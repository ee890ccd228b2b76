package cohort

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestATurnIsOverWhenItsResultIsRead: a caller acting on a result the
// moment it reads it (the Agent SDK's rewind_files after a result, the
// next prompt) finds the session free, not ErrBusy: the turn ends before
// its result is yielded. (It failed in CI: the SDK's rewind_files raced
// the iterator's return.)
func TestATurnIsOverWhenItsResultIsRead(t *testing.T) {
	e := newEnv(t)
	e.rt.on("say done", func(*fakeapi.Request) fakeapi.Reply { return fakeapi.TextReply("done") })
	s := e.open(e.config())
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sawResult := false
	for ev, err := range s.Run(ctx, "say done") {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type != EventResult {
			continue
		}
		sawResult = true
		if _, err := s.Rewind(ctx, RewindRequest{}); errors.Is(err, ErrBusy) {
			t.Fatalf("Rewind while the result is read: %v", err)
		}
		for _, err := range s.Run(ctx, "say done") {
			if errors.Is(err, ErrBusy) {
				t.Fatalf("Run while the result is read: %v", err)
			}
		}
	}
	if !sawResult {
		t.Fatal("no result")
	}
}
