package print

import (
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestMessageResumesAFinishedAgent sends a message to a named subagent that
// has finished: it is resumed in the background from its history, reads
// its cached prefix, and its result reaches the lead as a notification.
func TestMessageResumesAFinishedAgent(t *testing.T) {
	t.Parallel()
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		first, turn := r.FirstUserText(), r.Turn()
		switch {
		case strings.Contains(first, "scout-job"):
			if strings.Contains(r.LastUserText(), "one more thing") {
				return fakeapi.TextReply("scout: the second answer")
			}
			return fakeapi.TextReply("scout: the first answer")
		case strings.Contains(first, "lead-start"):
			switch turn {
			case 0:
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Agent", map[string]any{"description": "scout",
					"name": "scout", "prompt": "scout-job: find the answer"})}}
			case 1:
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("SendMessage", map[string]any{"to": "scout", "message": "one more thing"})}}
			}
			if strings.Contains(r.LastUserText(), "scout: the second answer") {
				return fakeapi.TextReply("got both answers")
			}
			return fakeapi.TextReply("waiting for scout")
		}
		return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "no rule"}}
	}
	h := clitest.New(t, policy)
	h.Srv.Close()
	h.Srv = fakeapi.New(fakeapi.Config{Policy: policy, Cache: fakeapi.CacheConfig{MinTokens: 1024}})
	t.Cleanup(h.Srv.Close)
	h.Vars["ANTHROPIC_BASE_URL"] = h.Srv.URL
	out, errOut, code := h.Run("-p", "lead-start: ask the scout twice", "--output-format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if r := h.Result(out); r.Result != "got both answers" {
		t.Fatalf("result = %+v", r)
	}
	var scout []fakeapi.Recorded
	for _, rec := range h.Srv.Requests() {
		if rec.Request != nil && strings.Contains(rec.Request.FirstUserText(), "scout-job") {
			scout = append(scout, rec)
		}
	}
	if len(scout) != 2 {
		t.Fatalf("scout made %d requests, want 2 (the first run and the resumed one)", len(scout))
	}
	resumed := scout[1]
	if n := len(resumed.Request.Messages); n != 3 {
		t.Fatalf("the resumed request has %d messages, want the old 2 plus the new one", n)
	}
	if resumed.Usage.CacheReadInputTokens == 0 {
		t.Fatalf("the resumed agent did not read its cached prefix: %+v", resumed.Usage)
	}
}
