package cohort

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestConversationRewindKeepsThePrefix: after the lead's conversation is
// rewound to before its second turn, the next request's bytes equal the
// second turn's first request up to where that turn's prompt began (the
// cache is read); the files the second turn wrote are gone too.
func TestConversationRewindKeepsThePrefix(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var mu sync.Mutex
	var bodies [][]byte // the lead's requests, as sent
	e.rt.on("first turn", func(r *fakeapi.Request) fakeapi.Reply {
		mu.Lock()
		bodies = append(bodies, bytes.Clone(r.Raw))
		mu.Unlock()
		last := r.LastUserText()
		if strings.Contains(last, "second turn") && r.Turn() == 1 {
			return fakeapi.Reply{Content: []fakeapi.Block{use("Bash", map[string]any{"command": "echo from turn two > two.txt"})}}
		}
		return fakeapi.TextReply("answered: " + last)
	})
	cfg := e.config()
	cfg.PermissionMode = "bypassPermissions"
	s := e.open(cfg)
	collect(t, s, "first turn")
	collect(t, s, "second turn")
	if got, _ := os.ReadFile(filepath.Join(e.dir, "two.txt")); string(got) != "from turn two\n" {
		t.Fatalf("two.txt = %q", got)
	}
	rep, err := s.Rewind(t.Context(), RewindRequest{Turn: 2, Mode: "both"})
	if err != nil || !rep.Conversation {
		t.Fatalf("Rewind = %+v, %v", rep, err)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "two.txt")); err == nil {
		t.Error("two.txt is still there after the rewind")
	}
	collect(t, s, "again, turn two")
	// The turn after the rewind takes a number of its own: the list of
	// turns names each once.
	list, err := s.Rewind(t.Context(), RewindRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var turns []string
	for _, r := range list.Turns {
		turns = append(turns, fmt.Sprintf("%d %s", r.Turn, r.Prompt))
	}
	if want := []string{"1 first turn", "2 second turn", "3 again, turn two"}; !slices.Equal(turns, want) {
		t.Errorf("turns %q, want %q", turns, want)
	}
	var original, again []byte
	mu.Lock()
	defer mu.Unlock()
	for _, raw := range bodies {
		switch {
		case bytes.Contains(raw, []byte("second turn")) && original == nil:
			original = raw
		case bytes.Contains(raw, []byte("again, turn two")) && again == nil:
			again = raw
		}
	}
	cut := bytes.Index(original, []byte("second turn"))
	if original == nil || again == nil || cut < 0 {
		t.Fatalf("requests not found in the fake API's log")
	}
	if !bytes.Equal(original[:cut-1], again[:cut-1]) || bytes.Contains(again, []byte("second turn")) {
		n := 0
		for n < len(original) && n < len(again) && original[n] == again[n] {
			n++
		}
		t.Fatalf("the request after the rewind differs from turn two's at byte %d (turn two's prompt starts at %d):\n%s\n%s", n, cut, original[max(0, n-80):min(len(original), n+80)], again[max(0, n-80):min(len(again), n+80)])
	}
}
