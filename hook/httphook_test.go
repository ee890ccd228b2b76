package hook

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/tool"
)

// httpRunner loads hooks (the settings "hooks" value) into a runner with
// env as the hooks' environment.
func httpRunner(t *testing.T, hooks string, env ...string) *Runner {
	t.Helper()
	set, probs := loadSet(filepath.Join(t.TempDir(), "settings.json"), []byte(`{"hooks": `+hooks+`}`))
	if len(probs) > 0 {
		t.Fatalf("problems: %v", probs)
	}
	return NewRunner(Config{Hooks: set, Env: env, Grace: 100 * time.Millisecond})
}

// TestHTTPHookDecides posts a PreToolUse input to an httptest server that
// denies rm: the server reads the input as JSON with the configured
// headers, and its answer denies the call, as a command's would.
func TestHTTPHookDecides(t *testing.T) {
	var mu sync.Mutex
	var got []map[string]any
	var headers []http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in map[string]any
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil || r.Method != http.MethodPost {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		mu.Lock()
		got, headers = append(got, in), append(headers, r.Header.Clone())
		mu.Unlock()
		if cmd, _ := in["tool_input"].(map[string]any)["command"].(string); strings.HasPrefix(cmd, "rm") {
			fmt.Fprint(w, `{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "no deleting"}}`)
		}
	}))
	defer srv.Close()
	r := httpRunner(t, `{"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "http", "url": "`+srv.URL+`/check",
	  "headers": {"Authorization": "Bearer $HOOK_TOKEN", "X-Key": "${ANTHROPIC_API_KEY}", "X-Other": "[$HOME]"},
	  "allowedEnvVars": ["HOOK_TOKEN", "ANTHROPIC_API_KEY"]}]}]}`,
		"HOOK_TOKEN=t0ken", "ANTHROPIC_API_KEY=sk-secret", "HOME=/home/u")
	dir := t.TempDir()
	s := r.For(Subject{SessionID: "s1", Caller: tool.Caller{Cwd: dir}})
	if v := s.PreToolUse(t.Context(), call(dir, "Bash", `{"command": "rm -rf build"}`)); !v.Deny || !strings.Contains(v.Reason, "no deleting") {
		t.Fatalf("rm: %+v, want a deny with the server's reason", v)
	}
	if v := s.PreToolUse(t.Context(), call(dir, "Bash", `{"command": "ls"}`)); v.Deny || v.Allow {
		t.Fatalf("ls: %+v, want no opinion", v)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0]["hook_event_name"] != "PreToolUse" || got[0]["session_id"] != "s1" || got[0]["tool_name"] != "Bash" {
		t.Fatalf("the server read %v", got)
	}
	h := headers[0]
	if h.Get("Content-Type") != "application/json" || h.Get("Authorization") != "Bearer t0ken" || h.Get("X-Other") != "[]" {
		t.Fatalf("headers %v: want the listed variable interpolated and the unlisted one empty", h)
	}
	if h.Get("X-Key") != "" {
		t.Fatalf("the http hook was sent a credential Cohort holds: X-Key %q", h.Get("X-Key"))
	}
}

// TestHTTPHookFailures: a server error, a redirect, a server that does not
// answer in time and an unreachable one are non-blocking failures reported
// with the URL; the redirect is not followed, so the input reaches no
// other server.
func TestHTTPHookFailures(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
		io.Copy(io.Discard, r.Body)
	}))
	defer other.Close()
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/fail":
			http.Error(w, "database down", http.StatusInternalServerError)
		case "/moved":
			http.Redirect(w, r, other.URL+"/collect", http.StatusTemporaryRedirect)
		case "/hang":
			select {
			case <-hang:
			case <-r.Context().Done():
			}
		}
	}))
	defer srv.Close()
	defer close(hang)
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	for _, tt := range []struct{ path, want string }{
		{srv.URL + "/fail", "500 Internal Server Error: database down"},
		{srv.URL + "/moved", "307 Temporary Redirect"},
		{srv.URL + "/hang", "timed out"},
		{deadURL + "/", "connection refused"},
	} {
		r := httpRunner(t, `{"Stop": [{"hooks": [{"type": "http", "url": "`+tt.path+`", "timeout": 0.5}]}]}`)
		var recs []Record
		r.cfg.Observer = func(rec Record) { recs = append(recs, rec) }
		o := r.For(Subject{Caller: tool.Caller{Cwd: t.TempDir()}}).Stop(t.Context(), StopState{})
		if o.Block || len(o.Errors) != 1 || !strings.Contains(strings.Join(o.Messages, "\n"), tt.path) {
			t.Errorf("%s: outcome %+v, want one non-blocking error naming the URL", tt.path, o)
		}
		if len(recs) != 1 || !strings.Contains(recs[0].Stderr+fmt.Sprint(recs[0].Err), tt.want) {
			t.Errorf("%s: record %+v, want %q", tt.path, recs, tt.want)
		}
	}
	if n := elsewhere.Load(); n != 0 {
		t.Fatalf("the redirect was followed: the other server got %d requests", n)
	}
}
