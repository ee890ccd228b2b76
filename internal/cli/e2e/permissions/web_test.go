package permissions

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestWebFetchLoopbackRefusedInBypass is issue 15's finding 7 through the
// CLI: in bypassPermissions a model fetched loopback and link-local
// addresses. Without a rule naming the host, nothing is fetched; with
// WebFetch(domain:127.0.0.1) it is.
func TestWebFetchLoopbackRefusedInBypass(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, "internal admin page")
	}))
	defer srv.Close()
	var mu sync.Mutex
	var got []string
	c := clitest.NewConv().On("fetch it",
		clitest.Calls(clitest.Use("WebFetch", map[string]any{"url": srv.URL + "/admin", "prompt": "what is there"})),
		func(r *fakeapi.Request) fakeapi.Reply {
			mu.Lock()
			got = append(got, clitest.ToolResults(r)...)
			mu.Unlock()
			return fakeapi.TextReply("done")
		})
	h := clitest.New(t, c.Policy)
	out, errOut, code := h.Run("-p", "fetch it", "--permission-mode", "bypassPermissions")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if hits.Load() != 0 {
		t.Errorf("the loopback server was reached %d times", hits.Load())
	}
	out, errOut, code = h.Run("-p", "fetch it", "--permission-mode", "bypassPermissions", "--allowedTools", "WebFetch(domain:127.0.0.1)")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || !strings.Contains(got[0], "not a public address") || !strings.Contains(got[1], "internal admin page") {
		t.Errorf("results %q: want a refusal, then the page once a rule names the host", got)
	}
}
