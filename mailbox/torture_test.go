package mailbox

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// writerProc is one writer process of the multi-process tests.
type writerProc struct {
	name   string
	cmd    *exec.Cmd
	stdin  io.WriteCloser // closed by Wait
	stderr bytes.Buffer
	acked  []string // ids the process printed after Append returned
	killed bool
	err    error // from Wait
}

// startWriter re-runs the test binary as a writer process appending count
// messages to agent's inbox. extra adds environment variables. onLine, if
// set, sees every stdout line and may kill the process; the goroutine that
// reads stdout reaps the process and then calls wg.Done.
func startWriter(ctx context.Context, t testing.TB, d *Dir, agent, name string, count int, extra []string,
	onLine func(w *writerProc, line string), wg *sync.WaitGroup) *writerProc {
	t.Helper()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(),
		envHelper+"=writer", envDir+"="+d.Path(), envTo+"="+agent, envFrom+"="+name,
		fmt.Sprintf("%s=%d", envCount, count))
	cmd.Env = append(cmd.Env, extra...)
	cmd.WaitDelay = 10 * time.Second
	w := &writerProc{name: name, cmd: cmd}
	cmd.Stderr = &w.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if w.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if onLine != nil {
				onLine(w, sc.Text())
			} else {
				w.acked = append(w.acked, sc.Text())
			}
		}
		w.err = cmd.Wait()
	}()
	return w
}

func (w *writerProc) kill() {
	w.killed = true
	w.cmd.Process.Kill() // SIGKILL
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
			onLine = func(w *writerProc, line string) {
				if line == "torn" {
					w.kill()
					return
				}
				w.acked = append(w.acked, line)
			}
		case victim:
			onLine = func(w *writerProc, line string) {
				w.acked = append(w.acked, line)
				if len(w.acked) == killAfter {
					w.kill()
				}
			}
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
	acked := map[string]bool{}
	for i, w := range procs {
		switch {
		case i == tearer || i == victim:
			if !w.killed || w.err == nil {
				t.Errorf("%s: killed=%v, exit %v; want it SIGKILLed", w.name, w.killed, w.err)
			}
		case w.err != nil || len(w.acked) != perWriter:
			t.Errorf("%s: exit %v after %d acknowledged appends; stderr:\n%s", w.name, w.err, len(w.acked), w.stderr.String())
		}
		for _, id := range w.acked {
			acked[id] = true
		}
	}
	if n := len(procs[tearer].acked); n != tearAfter {
		t.Errorf("tearing writer acknowledged %d appends, want %d", n, tearAfter)
	}
	acked[sentinel.ID] = true

	// Zero acknowledged messages lost, zero delivered twice.
	lost, unacked := 0, 0
	for id := range acked {
		if delivered[id] == 0 {
			lost++
		}
	}
	for id, n := range delivered {
		if n != 1 {
			t.Errorf("message %s delivered %d times", id, n)
		}
		if !acked[id] {
			unacked++
			// Only the victim can have appended without printing the id.
			if from[id] != procs[victim].name {
				t.Errorf("message %s from %s delivered but never acknowledged", id, from[id])
			}
		}
	}
	if lost > 0 || unacked > 1 {
		t.Errorf("%d acknowledged messages lost, %d delivered unacknowledged (at most 1 allowed)", lost, unacked)
	}

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
	t.Logf("%d writers, %d acknowledged, %d delivered, in %v", writers, len(acked), len(delivered), time.Since(began))
	if testing.Verbose() {
		st, _ := os.Stat(d.inboxPath("lead"))
		t.Logf("final inbox %d bytes, %s", st.Size(), strings.TrimSpace(fmt.Sprint(pr.all())))
	}
}
