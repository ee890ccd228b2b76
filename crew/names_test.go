package crew_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestAReusedNameReachesTheNewAgent starts a background agent named
// "worker", lets it finish, and starts a second "worker": a message to the
// name joins the running second agent, never resumes the finished first;
// once both have finished, a message resumes the latest.
func TestAReusedNameReachesTheNewAgent(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var w1Saw, w2Saw []string
	note := func(list *[]string, q *fakeapi.Request) {
		mu.Lock()
		defer mu.Unlock()
		*list = append(*list, q.LastUserText())
	}
	r := newRig(t, rigConfig{policy: func(q *fakeapi.Request) fakeapi.Reply {
		first := q.FirstUserText()
		switch {
		case strings.Contains(first, "W1:"):
			note(&w1Saw, q)
			return fakeapi.TextReply("w1 done")
		case strings.Contains(first, "W2:"):
			note(&w2Saw, q)
			if q.Turn() == 0 {
				select { // hold the second worker's first turn until the message is in
				case <-release:
				case <-q.Context().Done():
				}
			}
			return fakeapi.TextReply("w2 done")
		case strings.Contains(q.LastUserText(), "LEAD: one"):
			return reply(agentCall(map[string]any{"prompt": "W1: work", "name": "worker", "run_in_background": true}))
		case strings.Contains(q.LastUserText(), "LEAD: two"):
			return reply(agentCall(map[string]any{"prompt": "W2: work", "name": "worker", "run_in_background": true}))
		}
		return fakeapi.TextReply("lead ok")
	}})
	r.send("LEAD: one")
	ids := r.children()
	if len(ids) != 1 {
		t.Fatalf("children: %v", ids)
	}
	w1 := ids[0]
	r.finished(w1)
	r.send("LEAD: two")
	ids = r.children()
	if len(ids) != 2 || ids[0] != w1 {
		t.Fatalf("children: %v", ids)
	}
	w2 := ids[1]

	text, err := r.rt.Deliver(t.Context(), "worker", llm.Text("PING for the running worker"))
	if err != nil || !strings.Contains(text, "delivered") {
		t.Fatalf("Deliver to the running worker: %q, %v", text, err)
	}
	close(release)
	r.finished(w2)
	mu.Lock()
	got1, got2 := append([]string(nil), w1Saw...), strings.Join(w2Saw, "\n")
	mu.Unlock()
	if len(got1) != 1 {
		t.Errorf("the finished first worker was asked again: %q", got1)
	}
	if !strings.Contains(got2, "PING for the running worker") {
		t.Errorf("the running second worker never saw the message; it saw %q", got2)
	}

	// Both have finished: the name resumes the latest.
	text, err = r.rt.Deliver(t.Context(), "worker", llm.Text("PING again"))
	if err != nil {
		t.Fatal(err)
	}
	r.finished(resumedTask(t, text))
	mu.Lock()
	defer mu.Unlock()
	if len(w1Saw) != 1 || !strings.Contains(w2Saw[len(w2Saw)-1], "PING again") {
		t.Errorf("the resume went to the wrong worker: first saw %q, second saw %q", w1Saw, w2Saw)
	}
}
