package roles

import (
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestDenialAdviceFitsTheSession: what a denied call's result advises is
// computed from the session: the rule that would allow the call, and a
// permission mode only when that mode would allow it — never the mode the
// session is already in.
func TestDenialAdviceFitsTheSession(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, mode string
		call       fakeapi.Block
		want       []string
		not        []string
	}{
		{"rm in acceptEdits", "acceptEdits", clitest.Use("Bash", map[string]any{"command": "rm scratch_test.go"}),
			[]string{`"Bash(rm:*)"`, "bypassPermissions"}, []string{"acceptEdits"}},
		{"a write in default mode", "default", clitest.Use("Write", map[string]any{"file_path": "PROJECT/notes.txt", "content": "x\n"}),
			[]string{"acceptEdits", "bypassPermissions"}, nil},
		{"a command outside the work dirs in default mode", "default", clitest.Use("Bash", map[string]any{"command": "rm -r /etc/cohort-nothing"}),
			[]string{`"Bash(rm:*)"`}, []string{"acceptEdits"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var got string
			var h *clitest.Harness
			h = clitest.New(t, func(r *fakeapi.Request) fakeapi.Reply {
				if r.Turn() == 0 {
					call := tc.call
					call.Input = []byte(strings.ReplaceAll(string(call.Input), "PROJECT", h.Dir))
					return fakeapi.Reply{Content: []fakeapi.Block{call}}
				}
				mu.Lock()
				got = r.LastToolResultText()
				mu.Unlock()
				return fakeapi.TextReply("could not")
			})
			h.Write("scratch_test.go", "package x\n")
			if out, errOut, code := h.Run("-p", "clean up", "--permission-mode", tc.mode); code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
			}
			mu.Lock()
			defer mu.Unlock()
			if !strings.Contains(got, "denied") {
				t.Fatalf("the call was not denied: %q", got)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("the advice lacks %s: %q", w, got)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(got, n) {
					t.Errorf("the advice names %s, which would not allow the call: %q", n, got)
				}
			}
		})
	}
}
