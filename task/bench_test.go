package task

import (
	"context"
	"testing"
)

// BenchmarkStartCompleteNotify measures one task's whole life: register,
// create the output file, run, finalize, notify, drain.
func BenchmarkStartCompleteNotify(b *testing.B) {
	r, _ := newReg(b, func(c *Config) { c.OnEvent = func(Event) {} })
	q := NewQueue()
	run := func(ctx context.Context, t *Task) (Outcome, error) {
		t.Output().WriteLine(`{"type":"assistant","message":"done"}`)
		t.RecordToolUse("Read", "x")
		return Outcome{Text: "done"}, nil
	}
	spec := Spec{Kind: KindLocalAgent, Description: "bench", Background: true, Queue: q}
	for b.Loop() {
		t, err := r.Start(b.Context(), spec, run)
		if err != nil {
			b.Fatal(err)
		}
		<-t.Done()
		if len(q.Drain()) != 1 {
			b.Fatal("no notification")
		}
	}
}

// BenchmarkOutputWriteLine measures appending one transcript line.
func BenchmarkOutputWriteLine(b *testing.B) {
	r, _ := newReg(b, nil)
	release := make(chan struct{})
	t, err := r.Start(b.Context(), Spec{Kind: KindLocalAgent, Description: "bench", Background: true}, block(release, ""))
	if err != nil {
		b.Fatal(err)
	}
	line := `{"type":"assistant","message":{"content":[{"type":"text","text":"some text of a typical length for one line"}]}}`
	for b.Loop() {
		if err := t.Output().WriteLine(line); err != nil {
			b.Fatal(err)
		}
	}
	close(release)
	<-t.Done()
}
