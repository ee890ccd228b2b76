package fakeapi

import (
	"bufio"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A reply decided later: the stream begins at once, pings keep it alive
// while Await waits, and the content follows as any reply's.
func TestAwaitStreamsPingsUntilTheReply(t *testing.T) {
	release := make(chan struct{})
	srv := start(t, Config{AwaitPing: time.Millisecond, Policy: func(*Request) Reply {
		return Reply{Label: "later", Await: func(ctx context.Context) Reply {
			select {
			case <-release:
				return ToolReply("", "Bash", map[string]any{"command": "true"})
			case <-ctx.Done():
				return Reply{}
			}
		}}
	}})
	raw, _ := json.Marshal(body(user("wait for me")))
	req, err := newRequest(t, srv.URL+"/v1/messages", raw)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := httpClient(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	var names []string
	pings := 0
	for sc.Scan() {
		name, ok := strings.CutPrefix(sc.Text(), "event: ")
		if !ok {
			continue
		}
		names = append(names, name)
		if name == "ping" {
			if pings++; pings == 3 {
				close(release) // the client has waited through three pings
			}
		}
	}
	if len(names) < 5 || names[0] != "message_start" || names[1] != "ping" || names[len(names)-1] != "message_stop" {
		t.Fatalf("events = %v; want message_start, pings, the reply, message_stop", names)
	}
	if pings < 3 {
		t.Fatalf("%d pings before the reply, want 3", pings)
	}
	rec := srv.Requests()[0]
	if rec.Label != "later" || rec.Usage.OutputTokens == 0 || rec.Error != "" {
		t.Fatalf("record = %+v", rec)
	}
}

// A client that leaves while the reply is awaited ends Await and the
// handler; nothing is left running (goleak checks at the end).
func TestAwaitEndsWhenTheClientLeaves(t *testing.T) {
	entered := make(chan struct{})
	srv := start(t, Config{Policy: func(*Request) Reply {
		return Reply{Await: func(ctx context.Context) Reply {
			close(entered)
			<-ctx.Done()
			return TextReply("too late")
		}}
	}})
	ctx, cancel := context.WithCancel(t.Context())
	raw, _ := json.Marshal(body(user("hello")))
	req, err := newRequest(t, srv.URL+"/v1/messages", raw)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		resp, err := httpClient(t).Do(req.WithContext(ctx))
		if err == nil {
			_, err = bufio.NewReader(resp.Body).ReadString(0)
			resp.Body.Close()
		}
		done <- err
	}()
	<-entered
	cancel()
	<-done
	srv.Close() // waits for the handler
	if rec := srv.Requests()[0]; rec.Error != "request cancelled while awaiting the reply" {
		t.Fatalf("record error = %q", rec.Error)
	}
}

// An awaited reply that is an HTTP fault cannot change the begun stream's
// status: it fails the stream with an error event of its type. A request
// that does not stream waits for the reply before it begins.
func TestAwaitFaultAndNonStreaming(t *testing.T) {
	srv := start(t, Config{Policy: func(r *Request) Reply {
		return Reply{Await: func(context.Context) Reply {
			if r.Stream {
				return FaultReply(Overloaded)
			}
			return TextReply("whole")
		}}
	}})
	res := call(t, httpClient(t), srv.URL, "/v1/messages", body(user("a")))
	evs, err := readSSE(strings.NewReader(string(res.Body)))
	if err != nil {
		t.Fatal(err)
	}
	d := decode(t, evs)
	if res.Status != 200 || d.Stopped || d.ErrorEvent["type"] != "overloaded_error" {
		t.Fatalf("status %d, events %v, error %v", res.Status, d.Names, d.ErrorEvent)
	}
	b := body(user("b"))
	b["stream"] = false
	res = call(t, httpClient(t), srv.URL, "/v1/messages", b)
	if res.Status != 200 || !strings.Contains(string(res.Body), `"text":"whole"`) {
		t.Fatalf("status %d: %s", res.Status, res.Body)
	}
}

// The chat protocol is paced too: its content and argument chunks wait
// for their bytes.
func TestPacedChatStream(t *testing.T) {
	clock := newFakeClock()
	reply := paceReply()
	srv := start(t, Config{Policy: func(*Request) Reply { return reply }, Now: clock.Now, Sleep: clock.Sleep,
		OutputTokensPerSecond: 100})
	res := call(t, httpClient(t), srv.URL, "/v1/chat/completions", map[string]any{"model": "m", "stream": true,
		"messages": []map[string]any{{"role": "user", "content": "fan out"}}})
	if res.Status != 200 || !strings.Contains(string(res.Body), "[DONE]") {
		t.Fatalf("status %d: %.300s", res.Status, res.Body)
	}
	var total time.Duration
	for _, w := range clock.waits() {
		total += w
	}
	n, _ := normalize(reply, [32]byte{})
	if want := time.Duration(contentBytes(n)) * 2500 * time.Microsecond; total < want-time.Microsecond || total > want+time.Microsecond {
		t.Fatalf("waited %s, want %s", total, want)
	}
}

func TestPaceRejectsNegativeKnobs(t *testing.T) {
	for _, cfg := range []Config{{FirstTokenDelay: -time.Second}, {OutputTokensPerSecond: -1}} {
		if s, err := Start(cfg); err == nil {
			s.Close()
			t.Errorf("Start(%+v) accepted a negative knob", cfg)
		}
	}
}
