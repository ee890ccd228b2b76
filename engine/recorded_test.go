package engine

import (
	"errors"
	"testing"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/transcript"
)

// A part's Recorded runs only once its transcript entry is written: an
// inbox that releases a task's pending marker there cannot lose the
// notification to a crash between the drain and the write.
func TestPartRecordedAfterItsEntry(t *testing.T) {
	rec := &countingRecorder{}
	model := replyFunc(func(*llm.Request) *llm.Response {
		return &llm.Response{Content: []llm.Block{llm.Text("ok")}, StopReason: llm.StopEndTurn}
	})
	a := New(Config{Model: model, Recorder: rec})
	var entriesAtAck []int
	parts := []Part{
		{Content: []llm.Block{llm.Text("first")}, Origin: transcript.OriginNotification, Recorded: func() { entriesAtAck = append(entriesAtAck, rec.n) }},
		{Content: []llm.Block{llm.Text("second")}, Origin: transcript.OriginTeammate, From: "bob", Recorded: func() { entriesAtAck = append(entriesAtAck, rec.n) }},
	}
	if _, err := a.SendParts(t.Context(), parts); err != nil {
		t.Fatal(err)
	}
	if len(entriesAtAck) != 2 || entriesAtAck[0] != 1 || entriesAtAck[1] != 2 {
		t.Fatalf("Recorded ran with %v entries written; want [1 2] (each after its own entry)", entriesAtAck)
	}

	failing := &countingRecorder{err: errors.New("disk full")}
	b := New(Config{Model: model, Recorder: failing})
	acked := false
	_, err := b.SendParts(t.Context(), []Part{{Content: []llm.Block{llm.Text("lost?")}, Recorded: func() { acked = true }}})
	if err == nil {
		t.Fatal("a failed transcript write was not reported")
	}
	if acked {
		t.Fatal("a part whose entry could not be written was acknowledged")
	}
}

type countingRecorder struct {
	n   int
	err error
}

func (c *countingRecorder) Append(transcript.Entry) error {
	if c.err != nil {
		return c.err
	}
	c.n++
	return nil
}
