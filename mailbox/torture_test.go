package mailbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/helperproc"
)

// writerProc is one writer process of the multi-process tests.
type writerProc = helperproc.Proc

// startWriter re-runs the test binary as a writer process appending count
// messages to agent's inbox. extra adds environment variables; onLine is
// helperproc.Start's.
func startWriter(ctx context.Context, t testing.TB, d *Dir, agent, name string, count int, extra []string,
	onLine func(w *writerProc, line string), wg *sync.WaitGroup) *writerProc {
	t.Helper()
	env := append([]string{envHelper + "=writer", envDir + "=" + d.Path(), envTo + "=" + agent, envFrom + "=" + name,
		fmt.Sprintf("%s=%d", envCount, count)}, extra...)
	return helperproc.Start(ctx, t, name, "^TestHelperProcess$", env, onLine, wg)
}

// TestTortureMultiProcess: 32 writer processes append 1,000 messages each to
// one inbox while this process consumes it and compacts every 64 KiB. One
// writer is SIGKILLed half-way through a line while holding the lock, another
// at an arbitrary point of its loop. Every acknowledged message must be
// delivered exactly once, nothing twice, and the inbox must still parse.
func TestTortureMultiProcess(t *testing.T) {
	const (
		writers, perWriter = 32, 1000
		tearer, tearAfter  = 0, 100 // writes half a line, then is killed
		victim, killAfter  = 1, 300 // killed after this many acknowledged appends
	)
	began := time.Now()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	d, pr := testDir(t, Config{CompactBytes: 64 << 10}, "lead")
	r := openReader(t, d, "lead")

	var wg sync.WaitGroup
	writersDone := make(chan struct{})
	procs := make([]*writerProc, writers)
	for i := range writers {
		var extra []string
		var onLine func(*writerProc, string)
		switch i {
		case tearer:
			extra = []string{fmt.Sprintf("%s=%d", envTearAfter, tearAfter)}
			onLine = helperproc.KillOn("torn")
		case victim:
			onLine = helperproc.KillAfter(killAfter)
		}
		procs[i] = startWriter(ctx, t, d, "lead", fmt.Sprintf("w%d", i), perWriter, extra, onLine, &wg)
	}
	go func() { wg.Wait(); close(writersDone) }()
	t.Cleanup(func() { cancel(); <-writersDone })

	// Consume until every writer has exited.
	recvCtx, stopRecv := context.WithCancel(ctx)
	defer stopRecv()
	go func() {
		select {
		case <-writersDone:
		case <-ctx.Done():
		}
		stopRecv()
	}()
	delivered := map[string]int{}
	from := map[string]string{}
	consume := func(msgs []Message) {
		for _, m := range msgs {
			delivered[m.ID]++
			from[m.ID] = m.From
		}
		if err := r.Ack(ctx, ids(msgs)...); err != nil {
			t.Fatal(err)
		}
	}
	for {
		msgs, err := r.Receive(recvCtx)
		if err != nil {
			if errors.Is(err, context.Canceled) && ctx.Err() == nil {
				break
			}
			t.Fatalf("Receive after %d messages: %v", len(delivered), err)
		}
		consume(msgs)
	}
	// The torn line may still end the inbox; the next append terminates it.
	sentinel := mustAppend(t, d, Message{From: "test", To: "lead", Text: "last"})
	for {
		msgs, err := r.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			break
		}
		consume(msgs)
	}

	// Every writer but the two victims finished cleanly.
	for i, w := range procs {
		switch {
		case i == tearer || i == victim:
			if !w.Killed || w.Err == nil {
				t.Errorf("%s: killed=%v, exit %v; want it SIGKILLed", w.Name, w.Killed, w.Err)
			}
		case w.Err != nil || len(w.Lines) != perWriter:
			t.Errorf("%s: exit %v after %d acknowledged appends; stderr:\n%s", w.Name, w.Err, len(w.Lines), w.Stderr.String())
		}
	}
	if n := len(procs[tearer].Lines); n != tearAfter {
		t.Errorf("tearing writer acknowledged %d appends, want %d", n, tearAfter)
	}
	// Zero acknowledged messages lost, zero delivered twice.
	acked := helperproc.CheckOnce(t, procs, delivered, from, procs[victim].Name, sentinel.ID)

	// The torn line was reported once; nothing else went wrong.
	if probs := pr.all(); len(probs) != 1 || probs[0].Line == 0 {
		t.Errorf("problems %v, want exactly one (the torn line)", probs)
	}
	bad := 0
	for i, l := range inboxLines(t, d, "lead") {
		if _, err := ParseLine([]byte(l)); err != nil {
			bad++
			t.Logf("inbox line %d does not parse: %v", i+1, err)
		}
	}
	if bad > 1 {
		t.Errorf("%d inbox lines do not parse, at most the torn one may", bad)
	}
	// A restarted reader finds nothing left to deliver.
	r.Close()
	r2 := openReader(t, d, "lead")
	if got := read(t, r2); len(got) != 0 {
		t.Errorf("restarted reader redelivered %d messages", len(got))
	}
	t.Logf("%d writers, %d acknowledged, %d delivered, in %v", writers, acked, len(delivered), time.Since(began))
	if testing.Verbose() {
		st, _ := os.Stat(d.inboxPath("lead"))
		t.Logf("final inbox %d bytes, %s", st.Size(), strings.TrimSpace(fmt.Sprint(pr.all())))
	}
}
