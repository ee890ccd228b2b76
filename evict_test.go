package cohort

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/transcript"
)

// evictRig runs a lead that starts a named background helper, waits for
// it, and on its second prompt messages it; the helper's requests are
// kept.
type evictRig struct {
	mu   sync.Mutex
	reqs []*fakeapi.Request // the helper's, in order
	sent string             // what SendMessage told the lead
}

func newEvictRig(e *env) *evictRig {
	r := &evictRig{}
	e.rt.on("helper-task", func(req *fakeapi.Request) fakeapi.Reply {
		r.mu.Lock()
		r.reqs = append(r.reqs, req)
		r.mu.Unlock()
		switch req.Turn() {
		case 0:
			return fakeapi.ToolReply("", "Bash", map[string]any{"command": "echo one", "description": "one"})
		case 1:
			return fakeapi.TextReply("helper done")
		}
		return fakeapi.TextReply("helper again")
	})
	e.rt.on("evict-lead", func(req *fakeapi.Request) fakeapi.Reply {
		last := req.LastUserText()
		switch {
		case req.Turn() == 0:
			return fakeapi.ToolReply("", "Agent", map[string]any{"description": "helper", "name": "helper",
				"prompt": "helper-task: echo one", "run_in_background": true})
		case strings.HasSuffix(strings.TrimSpace(last), "ask the helper again"):
			return fakeapi.ToolReply("", "SendMessage", map[string]any{"to": "helper", "message": "one more thing", "summary": "again"})
		}
		if strings.Contains(last, "one more thing") || strings.Contains(last, "helper") {
			r.mu.Lock()
			if r.sent == "" && req.LastToolResultText() != "" {
				r.sent = req.LastToolResultText()
			}
			r.mu.Unlock()
		}
		return fakeapi.TextReply("noted")
	})
	return r
}

// startEvicted runs the helper to its end in a session that evicts after
// 10 ms, and returns once it has been evicted (and its id).
func startEvicted(t *testing.T) (*env, *evictRig, *Session, string) {
	t.Helper()
	e := newEnv(t)
	r := newEvictRig(e)
	cfg := e.config()
	cfg.AllowedTools, cfg.EvictAfter = []string{"Bash"}, 10*time.Millisecond
	s := e.open(cfg)
	collect(t, s, "evict-lead: start the helper")
	return e, r, s, evicted(t, s)
}

// evicted waits until the helper has left memory, conversation and
// record (its line in the index of retired agents), and returns its id.
func evicted(t *testing.T, s *Session) string {
	t.Helper()
	index := transcript.RetiredIndexPath(s.parts.Process.ProjectDir, s.ID())
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, ok := s.parts.Crew().LookupName("helper", true); !ok && s.parts.Crew().Retired().Agents == 1 {
			b, err := os.ReadFile(index)
			if err != nil {
				t.Fatal(err)
			}
			var rec struct {
				Agent struct{ ID, Name string } `json:"agent"`
			}
			if err := json.Unmarshal(b, &rec); err != nil || rec.Agent.Name != "helper" {
				t.Fatalf("the index %s holds %q (%v); want the helper's one line", index, b, err)
			}
			return rec.Agent.ID
		}
		if time.Now().After(deadline) {
			t.Fatal("the finished helper did not leave memory")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestRetiredAgentLeavesTheListing: once out of memory the helper is not
// in Agents but its usage is in the retired totals, and after a message
// resumes it the result's per-agent list counts it once and still adds up
// to the total.
func TestRetiredAgentLeavesTheListing(t *testing.T) {
	t.Parallel()
	_, _, s, id := startEvicted(t)
	for _, a := range s.Agents() {
		if a.ID == id {
			t.Fatalf("the retired helper is still listed: %+v", a)
		}
	}
	r := s.parts.Crew().Retired()
	if r.CostUSD <= 0 || r.Usage.OutputTokens == 0 {
		t.Fatalf("the retired totals lost the helper's usage: %+v", r)
	}
	evs := collect(t, s, "ask the helper again")
	res := last(evs)
	// The resumed helper may have retired again by the result: it is
	// listed, or summed in the retired line, never both nor neither.
	var sum float64
	seen := 0
	for _, u := range res.Agents {
		sum += u.CostUSD
		if u.ID == id || (u.Kind == "retired" && u.Name == "1 finished agent") {
			seen++
		}
	}
	if seen != 1 {
		t.Fatalf("the helper is counted %d times in the result's agents: %+v", seen, res.Agents)
	}
	if diff := sum - res.TotalCostUSD; diff > 1e-9 || diff < -1e-9 {
		t.Fatalf("the per-agent costs add up to %v, the total is %v", sum, res.TotalCostUSD)
	}
}

// TestRetiredAgentWithACorruptIndex: a message to a retired agent whose
// index line cannot be read gets an error naming the index and the line;
// the session goes on.
func TestRetiredAgentWithACorruptIndex(t *testing.T) {
	t.Parallel()
	_, r, s, _ := startEvicted(t)
	index := transcript.RetiredIndexPath(s.parts.Process.ProjectDir, s.ID())
	if err := os.WriteFile(index, []byte("{not json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	evs := collect(t, s, "ask the helper again")
	if res := last(evs); res.IsError {
		t.Fatalf("the lead's turn failed: %s", res.Result)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !strings.Contains(r.sent, "line 1 of the index of finished agents at "+index+" is unreadable") {
		t.Fatalf("SendMessage said %q; want it to name line 1 of %s", r.sent, index)
	}
}

// TestEvictedAgentResumesWithTheSamePrefix: a finished background agent's
// conversation leaves memory after EvictAfter; a message to it then
// resumes it from its transcript, and its request begins with the bytes of
// its last one (system prompt, tools, messages), so it reads the cache.
func TestEvictedAgentResumesWithTheSamePrefix(t *testing.T) {
	t.Parallel()
	e, r, s, _ := startEvicted(t)
	collect(t, s, "ask the helper again")
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.reqs) != 3 {
		t.Fatalf("the helper sent %d requests, want 3 (two, then one after its resume); the lead was told %q", len(r.reqs), r.sent)
	}
	before, after := r.reqs[1], r.reqs[2]
	if !strings.Contains(after.LastUserText(), "one more thing") {
		t.Fatalf("the resumed request does not carry the message: %q", after.LastUserText())
	}
	if string(stripped(t, before.System)) != string(stripped(t, after.System)) ||
		string(stripped(t, before.Tools)) != string(stripped(t, after.Tools)) {
		t.Fatal("the resumed helper's system prompt or tools differ from its last request's")
	}
	if len(after.Messages) < len(before.Messages) {
		t.Fatalf("the resumed request has %d messages, the last one %d", len(after.Messages), len(before.Messages))
	}
	for i := range before.Messages[:len(before.Messages)-1] {
		if string(stripped(t, before.Messages[i])) != string(stripped(t, after.Messages[i])) {
			t.Fatalf("message %d differs after the resume", i)
		}
	}
	if got := e.srv.Requests(); len(got) > 0 {
		for _, rec := range got {
			if rec.Request == after && rec.Usage.CacheReadInputTokens < 1024 {
				t.Errorf("the resumed request read %d tokens from the cache; its prefix should have been cached", rec.Usage.CacheReadInputTokens)
			}
		}
	}
}

// TestEvictedAgentWithAnUnreadableTranscript: the message that would
// resume it gets an error naming the transcript, and nothing else breaks.
func TestEvictedAgentWithAnUnreadableTranscript(t *testing.T) {
	t.Parallel()
	_, r, s, id := startEvicted(t)
	path := transcript.SidechainPath(s.parts.Process.ProjectDir, s.ID(), id)
	if err := os.WriteFile(path, []byte("this is not a transcript\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	evs := collect(t, s, "ask the helper again")
	if res := last(evs); res.IsError {
		t.Fatalf("the lead's turn failed: %s", res.Result)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !strings.Contains(r.sent, "transcript at "+path+" is unreadable") {
		t.Fatalf("SendMessage said %q; want it to name the unreadable transcript %s", r.sent, path)
	}
}

var cacheControl = regexp.MustCompile(`,?"cache_control":\{[^}]*\}`)

// stripped is v's JSON without cache markers, which move from request to
// request.
func stripped(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return cacheControl.ReplaceAll(b, nil)
}
