package cohort

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/crew"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestSiblingsStartBehindTheFirstFirstToken: three background agents of
// one type started in one message. While the first one's response has not
// begun, the others have sent nothing (they will read what it writes to
// the cache), and the lead's Bash call of the same message runs to its
// end; once it begins, both others start without waiting for it to finish
// (each second request waits for all three first ones, so serialising them
// would deadlock).
func TestSiblingsStartBehindTheFirstFirstToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	marker := filepath.Join(e.dir, "bash-ran")
	first := newGate()
	var mu sync.Mutex
	firstRequests := 0
	bothStarted := make(chan struct{})
	var once sync.Once
	e.rt.on("sibling-task", func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			mu.Lock()
			firstRequests++
			n := firstRequests
			mu.Unlock()
			if n == 1 {
				first.wait(r)
			}
			if n == 3 {
				once.Do(func() { close(bothStarted) })
			}
			return fakeapi.ToolReply("", "Bash", map[string]any{"command": "true", "description": "noop"})
		}
		// Every sibling's second request waits until all three have
		// started: a serialised fan-out never gets here.
		select {
		case <-bothStarted:
		case <-r.Context().Done():
		}
		return fakeapi.TextReply("sibling done")
	})
	e.rt.on("start three siblings", func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			var blocks []fakeapi.Block
			for i := 1; i <= 3; i++ {
				blocks = append(blocks, use("Agent", map[string]any{"description": fmt.Sprint("sibling ", i),
					"subagent_type": "general-purpose", "prompt": fmt.Sprint("sibling-task ", i), "run_in_background": true}))
			}
			blocks = append(blocks, use("Bash", map[string]any{"command": "touch " + marker, "description": "mark"}))
			return fakeapi.Reply{Content: blocks}
		}
		return fakeapi.TextReply("lead done")
	})
	cfg := e.config()
	cfg.AllowedTools = []string{"Bash"}
	s := e.open(cfg)
	done := make(chan []Event, 1)
	go func() { done <- collect(t, s, "start three siblings") }()
	first.await(t)
	// The first sibling's response is held. The lead's Bash call still
	// runs to its end, and no sibling sends its request meanwhile.
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the lead's Bash call did not run while the first sibling's response was held")
		}
		time.Sleep(5 * time.Millisecond)
	}
	// The two others wait for it, each in its task, having sent nothing.
	for waiting := 0; waiting < 2; {
		waiting = 0
		for _, st := range s.parts.Tasks().List() {
			if st.Phase == crew.PhaseWaitingForSibling {
				waiting++
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d siblings wait for the first one's response, want 2", waiting)
		}
		time.Sleep(5 * time.Millisecond)
	}
	mu.Lock()
	n := firstRequests
	mu.Unlock()
	if n != 1 {
		t.Fatalf("%d siblings sent their first request before the first one's response began, want 1", n)
	}
	close(first.open)
	evs := <-done
	if res := last(evs); res.IsError || !strings.Contains(res.Result, "lead done") {
		t.Fatalf("result: %+v", res)
	}
}
