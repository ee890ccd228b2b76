package mailbox

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
)

// BenchmarkDeliveryLatency measures the time from calling Append to the
// recipient's handler holding the message, with the recipient idle (waiting
// in Receive) each time. Custom metrics: p50-ms and p99-ms. The poll case
// shows the fallback used when fsnotify is unavailable.
func BenchmarkDeliveryLatency(b *testing.B) {
	b.Run("fsnotify", func(b *testing.B) { benchLatency(b, Config{}) })
	b.Run("poll-250ms", func(b *testing.B) { benchLatency(b, Config{NoFSNotify: true}) })
}

func benchLatency(b *testing.B, cfg Config) {
	d, _ := testDir(b, cfg, "lead")
	r := openReader(b, d, "lead")
	ctx, cancel := context.WithCancel(b.Context())
	received := make(chan time.Time)
	handled := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the recipient: handler = note the time, then acknowledge
		defer wg.Done()
		for {
			msgs, err := r.Receive(ctx)
			if err != nil {
				return
			}
			at := time.Now()
			select {
			case received <- at:
			case <-ctx.Done():
				return
			}
			if err := r.Ack(ctx, ids(msgs)...); err != nil {
				b.Error(err)
			}
			select {
			case handled <- struct{}{}:
			case <-ctx.Done():
				return
			}
		}
	}()
	defer func() { cancel(); wg.Wait() }()

	var lat []time.Duration
	for b.Loop() {
		if cfg.NoFSNotify {
			// Arrive at a random point of the poll cycle, not right after
			// the tick that delivered the previous message.
			time.Sleep(rand.N(250 * time.Millisecond))
		}
		start := time.Now()
		mustAppend(b, d, Message{From: "alice", To: "lead", Text: "ping"})
		select {
		case at := <-received:
			lat = append(lat, at.Sub(start))
		case <-time.After(10 * time.Second):
			b.Fatal("message not delivered within 10 s")
		}
		<-handled // the recipient is idle again
	}
	slices.Sort(lat)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(lat[len(lat)/2]), "p50-ms")
	b.ReportMetric(ms(lat[len(lat)*99/100]), "p99-ms")
}

// BenchmarkThroughput16Writers: 16 writer processes append 500 messages
// each while this process receives and acknowledges them. Process start-up
// is not timed: writers wait for a start line on stdin. Custom metric:
// msgs/s from the start signal to the last message acknowledged.
func BenchmarkThroughput16Writers(b *testing.B) {
	const writers, perWriter = 16, 500
	d, _ := testDir(b, Config{}, "lead")
	r := openReader(b, d, "lead")
	var delivered int
	var busy time.Duration
	for b.Loop() {
		ctx, cancel := context.WithTimeout(b.Context(), 5*time.Minute)
		var wg sync.WaitGroup
		ready := make(chan struct{}, writers)
		procs := make([]*writerProc, writers)
		for i := range procs {
			procs[i] = startWriter(ctx, b, d, "lead", fmt.Sprintf("w%d", i), perWriter,
				[]string{envWaitGo + "=1", envQuiet + "=1"},
				func(w *writerProc, line string) {
					if line == "ready" {
						ready <- struct{}{}
					}
				}, &wg)
		}
		for range writers {
			<-ready
		}
		start := time.Now()
		for _, p := range procs {
			p.Stdin.Write([]byte("go\n"))
		}
		for n := 0; n < writers*perWriter; {
			msgs, err := r.Receive(ctx)
			if err != nil {
				b.Fatalf("after %d messages: %v", n, err)
			}
			if err := r.Ack(ctx, ids(msgs)...); err != nil {
				b.Fatal(err)
			}
			n += len(msgs)
		}
		busy += time.Since(start)
		delivered += writers * perWriter
		wg.Wait()
		cancel()
		for _, p := range procs {
			if p.Err != nil {
				b.Fatalf("%s: %v\n%s", p.Name, p.Err, p.Stderr.String())
			}
		}
	}
	b.ReportMetric(float64(delivered)/busy.Seconds(), "msgs/s")
}
