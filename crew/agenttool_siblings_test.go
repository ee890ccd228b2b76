package crew

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestSiblingSubagentsShareTheirPrefix: three subagents of one type that
// one message starts send first requests that are byte for byte the same
// but for their prompts — tools, system prompt (no per-instance id, date
// or path that differs) and everything around the prompt — so the cache
// entry the first writes is what the others read. The request is golden.
func TestSiblingSubagentsShareTheirPrefix(t *testing.T) {
	s := &script{}
	s.on(func(r *fakeapi.Request) bool { return strings.Contains(r.FirstUserText(), "sibling-prompt-") },
		say("sibling done"))
	var blocks []fakeapi.Block
	for i := range 3 {
		blocks = append(blocks, call("Agent", map[string]any{"description": fmt.Sprintf("sibling %d", i),
			"subagent_type": "general-purpose", "prompt": fmt.Sprintf("sibling-prompt-%c: look around", 'A'+i)}))
	}
	s.on(firstUserAt("start siblings", 0), reply(blocks...))
	s.on(firstUserAt("start siblings", 1), say("all done"))
	r := newRig(t, rigConfig{policy: s.policy})
	r.send("start siblings")
	firsts := map[string][]byte{}
	for _, rec := range r.srv.Requests() {
		if rec.Request == nil || rec.Request.Turn() != 0 {
			continue
		}
		first := rec.Request.FirstUserText()
		if i := strings.Index(first, "sibling-prompt-"); i >= 0 {
			p := first[i : i+len("sibling-prompt-A")]
			firsts[p] = bytes.ReplaceAll(rec.Body, []byte(p), []byte("sibling-prompt-X"))
		}
	}
	if len(firsts) != 3 {
		t.Fatalf("saw %d sibling first requests, want 3", len(firsts))
	}
	a, b, c := firsts["sibling-prompt-A"], firsts["sibling-prompt-B"], firsts["sibling-prompt-C"]
	for _, other := range [][]byte{b, c} {
		if !bytes.Equal(a, other) {
			t.Fatalf("sibling requests differ beyond their prompts, first at byte %d:\n…%s…\n…%s…", firstDiff(a, other),
				around(a, firstDiff(a, other)), around(other, firstDiff(a, other)))
		}
	}
	checkGolden(t, "sibling_request.golden", prettyJSON(t, a), "the sibling request")
}

func around(b []byte, i int) []byte {
	return b[max(0, i-80):min(len(b), i+80)]
}
