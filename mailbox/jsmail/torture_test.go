package jsmail

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/helperproc"
	"github.com/cohort-dev/cohort/mailbox"

	"github.com/nats-io/nats.go"
)

// Environment of the writer processes.
const (
	envHelper = "JSMAIL_TEST_HELPER"
	envURL    = "JSMAIL_TEST_URL"
	envFrom   = "JSMAIL_TEST_FROM"
	envSeed   = "JSMAIL_TEST_SEED"
	envCount  = "JSMAIL_TEST_COUNT"
	envGarble = "JSMAIL_TEST_GARBLE_AFTER" // publish one unparseable message after this many, then stop
)

// writerMain appends JSMAIL_TEST_COUNT messages to lead's inbox of team t,
// signed as JSMAIL_TEST_FROM, retrying each with its id until the server
// stores it, and prints each id once Append has returned.
func writerMain() int {
	fail := func(err error) int { fmt.Fprintln(os.Stderr, err); return 2 }
	from := os.Getenv(envFrom)
	count, _ := strconv.Atoi(os.Getenv(envCount))
	garble, _ := strconv.Atoi(os.Getenv(envGarble))
	seed, err := base64.StdEncoding.DecodeString(os.Getenv(envSeed))
	if err != nil || len(seed) != ed25519.SeedSize {
		return fail(fmt.Errorf("bad %s", envSeed))
	}
	keys := NewKeys()
	if err := keys.Own(from, ed25519.NewKeyFromSeed(seed)); err != nil {
		return fail(err)
	}
	// 32 processes start at once on a loaded machine: the handshake and
	// the stream's first update get time, as a real client would.
	nc, err := nats.Connect(os.Getenv(envURL), nats.MaxReconnects(-1), nats.Timeout(30*time.Second))
	if err != nil {
		return fail(err)
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	var tr *Transport
	for tr == nil {
		if tr, err = Open(ctx, Config{Conn: nc, Team: "t", Keys: keys}); err != nil && ctx.Err() != nil {
			return fail(err)
		}
	}
	out := bufio.NewWriter(os.Stdout)
	for i := range count {
		if garble > 0 && i == garble {
			if err := nc.Publish(tr.inbox("lead"), []byte(`{"id":"torn","from":`)); err != nil {
				return fail(err)
			}
			if err := nc.Flush(); err != nil { // at the server before "garbled" gets this process killed
				return fail(err)
			}
			fmt.Fprintln(out, "garbled")
			out.Flush()
			<-ctx.Done() // killed here
			return 1
		}
		m := mailbox.Message{ID: mailbox.NewID(time.Now()), From: from, To: "lead", Text: fmt.Sprintf("%s #%d", from, i)}
		for {
			actx, acancel := context.WithTimeout(ctx, 10*time.Second)
			_, err := tr.Append(actx, m)
			acancel()
			if err == nil {
				break
			}
			if ctx.Err() != nil {
				return fail(err)
			}
		}
		fmt.Fprintln(out, m.ID)
		out.Flush()
	}
	return 0
}

type writerProc = helperproc.Proc

// startWriter runs writerMain in a process of its own (helperproc.Start).
func startWriter(ctx context.Context, t *testing.T, url, name string, key ed25519.PrivateKey, count int, extra []string,
	onLine func(*writerProc, string), wg *sync.WaitGroup) *writerProc {
	t.Helper()
	env := append([]string{envHelper + "=writer", envURL + "=" + url, envFrom + "=" + name,
		envSeed + "=" + base64.StdEncoding.EncodeToString(key.Seed()), fmt.Sprintf("%s=%d", envCount, count)}, extra...)
	return helperproc.Start(ctx, t, name, "^$", env, onLine, wg)
}

// TestTortureMultiProcess is the file mailbox's torture test on
// JetStream, with the same load: 32 writer processes append 1,000
// messages each to one inbox while this process consumes it. One writer
// is SIGKILLed after 300 acknowledged appends; another publishes a
// message that does not parse and is killed. Half-way, the consumer
// "crashes" with a batch received but not recorded, and a new one takes
// the inbox. Every acknowledged message must be recorded exactly once,
// the unparseable one dead-lettered and reported once, and nothing left.
func TestTortureMultiProcess(t *testing.T) {
	const (
		garbler, garbleAt = 0, 100
		victim, killAfter = 1, 300
	)
	// The file mailbox's load (32 × 1,000) takes 2–4 minutes of two cores
	// here, mostly the consumer's signature checks under -race: .ci/run's
	// stress step runs it (COHORT_STRESS); the README's command runs 8
	// writers × 400, which still kills one and garbles one mid-run.
	writers, perWriter := 8, 400
	if os.Getenv("COHORT_STRESS") != "" { // clitest.StressEnv (not imported: a cycle)
		writers, perWriter = 32, 1000
	}
	crashAt := writers * perWriter / 2
	began := time.Now()
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	f := newFixture(t, Config{}, []string{"test"}, "lead")
	in := f.open(t, "lead")

	var wg sync.WaitGroup
	writersDone := make(chan struct{})
	procs := make([]*writerProc, writers)
	for i := range writers {
		name := fmt.Sprintf("w%d", i)
		key := newKey(t)
		if err := f.keys.Trust(name, key.Public().(ed25519.PublicKey)); err != nil {
			t.Fatal(err)
		}
		var extra []string
		var onLine func(*writerProc, string)
		switch i {
		case garbler:
			extra = []string{fmt.Sprintf("%s=%d", envGarble, garbleAt)}
			onLine = helperproc.KillOn("garbled")
		case victim:
			onLine = helperproc.KillAfter(killAfter) // SIGKILL
		}
		procs[i] = startWriter(ctx, t, f.srv.URL(), name, key, perWriter, extra, onLine, &wg)
	}
	go func() { wg.Wait(); close(writersDone) }()
	t.Cleanup(func() { cancel(); <-writersDone })

	recorded := map[string]int{}
	from := map[string]string{}
	crashed := false
	record := func(msgs []mailbox.Message) {
		if !crashed && len(recorded) >= crashAt {
			// The consumer dies with this batch received, unrecorded.
			crashed = true
			in.Close()
			in = f.open(t, "lead")
			return
		}
		for _, m := range msgs {
			recorded[m.ID]++
			from[m.ID] = m.From
		}
		if err := in.Ack(ctx, ids(msgs)...); err != nil {
			t.Fatal(err)
		}
	}
	consumeUntil := func(stop <-chan struct{}) {
		for {
			rctx, rcancel := context.WithCancel(ctx)
			go func() {
				select {
				case <-stop:
				case <-rctx.Done():
				}
				rcancel()
			}()
			msgs, err := in.Receive(rctx)
			rcancel()
			if err != nil {
				if errors.Is(err, context.Canceled) && ctx.Err() == nil {
					return
				}
				t.Fatalf("Receive after %d messages: %v", len(recorded), err)
			}
			record(msgs)
		}
	}
	consumeUntil(writersDone)
	t.Logf("writers done after %v, %d recorded", time.Since(began), len(recorded))
	// Whatever was published before the sentinel comes before it.
	sentinel := f.send(t, mailbox.Message{From: "test", To: "lead", Text: "last"})
	for recorded[sentinel.ID] == 0 {
		msgs, err := in.Receive(ctx)
		if err != nil {
			n, perr := f.tr.Pending(context.Background(), "lead")
			t.Fatalf("waiting for the sentinel after %v: %v (%d recorded, %d pending (%v), crashed %v)",
				time.Since(began), err, len(recorded), n, perr, crashed)
		}
		record(msgs)
	}

	for i, w := range procs {
		switch {
		case i == garbler || i == victim:
			if !w.Killed || w.Err == nil {
				t.Errorf("%s: killed=%v, exit %v; want it SIGKILLed", w.Name, w.Killed, w.Err)
			}
		case w.Err != nil || len(w.Lines) != perWriter:
			t.Errorf("%s: exit %v after %d acknowledged appends; stderr:\n%s", w.Name, w.Err, len(w.Lines), w.Stderr.String())
		}
	}
	acked := helperproc.CheckOnce(t, procs, recorded, from, procs[victim].Name, sentinel.ID)
	if !crashed {
		t.Error("the consumer never crashed")
	}
	if probs := f.pr.all(); len(probs) != 1 || probs[0].Path != "cohort.team.t.inbox.lead" {
		t.Errorf("problems %v, want exactly one (the unparseable message)", probs)
	}
	if n := pending(t, f, "lead"); n != 0 {
		t.Errorf("%d messages left in the inbox", n)
	}
	t.Logf("%d writers, %d acknowledged, %d recorded, in %v", writers, acked, len(recorded), time.Since(began))
}
