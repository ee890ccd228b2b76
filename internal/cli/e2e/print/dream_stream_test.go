package print

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestDreamNeverDelaysTheCLIsNextTurn: after five sessions, the CLI's
// long-lived mode (stream-json input) starts a dream after its first turn;
// with the fake holding the dream's request open (the second turn is
// answered only then), the second turn runs to its result.
func TestDreamNeverDelaysTheCLIsNextTurn(t *testing.T) {
	t.Parallel()
	held := make(chan struct{})
	var once sync.Once
	h := clitest.New(t, func(r *fakeapi.Request) fakeapi.Reply {
		first := r.FirstUserText()
		switch {
		case strings.Contains(first, "Consolidate the memory in"):
			once.Do(func() { close(held) })
			<-r.Context().Done() // held until the CLI ends
			return fakeapi.TextReply("too late")
		case strings.Contains(first, "PAST-SESSION"):
			return fakeapi.TextReply("ok")
		}
		lines := strings.Split(strings.TrimSpace(r.LastUserText()), "\n")
		last := lines[len(lines)-1]
		if last == "LEAD-TWO" {
			// The second turn is answered only once the dream's request is
			// in the fake, held: it runs beside the dream, not after it.
			select {
			case <-held:
			case <-r.Context().Done():
			}
		}
		return fakeapi.TextReply("answered " + last)
	})
	for i := range 5 {
		if out, errOut, code := h.Run("-p", fmt.Sprint("PAST-SESSION ", i)); code != 0 {
			t.Fatalf("session %d: exit %d\n%s\n%s", i, code, out, errOut)
		}
	}
	// The second line waits in the pipe until the first turn's result is
	// out: the CLI reads it as the next turn.
	in := `{"type":"user","message":{"role":"user","content":"LEAD-ONE"}}` + "\n" +
		`{"type":"user","message":{"role":"user","content":"LEAD-TWO"}}` + "\n"
	out, errOut, code := h.RunStdin(in, append([]string{"--flag", "auto_dream_min_hours=0"}, streamArgs...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	select {
	case <-held:
	default:
		t.Fatalf("no dream started after the first turn\n%s\n%s", out, errOut)
	}
	var results []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.Contains(l, `"type":"result"`) {
			results = append(results, l)
		}
	}
	if len(results) != 2 || !strings.Contains(results[0], "answered LEAD-ONE") || !strings.Contains(results[1], "answered LEAD-TWO") {
		t.Fatalf("want both turns' results with the dream held; got %q\nstderr: %s", results, errOut)
	}
}
