package attach

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// waitUntil looks at cond every 10 ms for at most 20 s: the server says
// nothing when a request starts waiting.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// serveSession opens a session of cfg on a fake model answering with
// policy, in a new directory, and serves its control socket; the test's
// cleanup closes them and removes the directory.
func serveSession(t *testing.T, cfg cohort.Config, policy fakeapi.Policy) (dir string, sv *Server, s *cohort.Session, sock string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "att")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	srv := fakeapi.New(fakeapi.Config{Policy: policy})
	t.Cleanup(srv.Close)
	sv = NewServer()
	cfg.Dir, cfg.Home, cfg.BaseURL, cfg.APIKey, cfg.CanUseTool = dir, filepath.Join(dir, "h"), srv.URL, "fake", sv.CanUseTool
	s, err = cohort.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	sock = filepath.Join(dir, "c.ctl")
	if err := sv.Serve(sock, s, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sv.Close() })
	return dir, sv, s, sock
}

// TestWaitingPromptOutlivesADetach: a permission request waits with no
// client; a client that leaves without answering leaves it waiting, a
// second client meanwhile is refused, and the next client's answer lets
// the call run. That client's own run streams its events.
func TestWaitingPromptOutlivesADetach(t *testing.T) {
	var target string
	dir, sv, s, sock := serveSession(t, cohort.Config{}, func(r *fakeapi.Request) fakeapi.Reply {
		if strings.Contains(r.LastUserText(), "second") {
			return fakeapi.TextReply("second answer")
		}
		if r.Turn() == 0 {
			return fakeapi.Reply{Content: []fakeapi.Block{fakeapi.ToolUseBlock("", "Write", map[string]any{"file_path": target, "content": "x"})}}
		}
		return fakeapi.TextReply("wrote")
	})
	target = filepath.Join(dir, "f.txt")
	first := make(chan string, 1)
	go func() {
		var result string
		for ev, err := range s.Run(context.Background(), "write it") {
			if err != nil {
				result = err.Error()
			}
			if ev.Type == cohort.EventResult {
				result = ev.Result
			}
		}
		first <- result
	}()
	waitUntil(t, "the Write waits", func() bool { return sv.Waiting() == 1 })

	asked := make(chan struct{}, 1)
	silent := func(ctx context.Context, _ cohort.PermissionRequest) (cohort.Decision, error) {
		asked <- struct{}{}
		<-ctx.Done()
		return cohort.Decision{}, ctx.Err()
	}
	c1, err := Dial(context.Background(), sock, silent)
	if err != nil {
		t.Fatal(err)
	}
	<-asked // the waiting request reached the client
	if _, err := Dial(context.Background(), sock, silent); err == nil || !strings.Contains(err.Error(), "another terminal") {
		t.Fatalf("a second client: %v", err)
	}
	if err := c1.call(call{Op: "nope"}); err == nil || !strings.Contains(err.Error(), "unknown call") {
		t.Fatalf("an unknown call: %v", err)
	}
	if err := c1.call(call{Op: "decide", ID: "99", Decision: &cohort.Decision{Allow: true}}); err == nil {
		t.Fatalf("an answer to no request was taken")
	}
	c1.Close()
	if _, err := os.Stat(target); err == nil || sv.Waiting() != 1 {
		t.Fatalf("a detach answered the request (waiting %d)", sv.Waiting())
	}

	allow := func(context.Context, cohort.PermissionRequest) (cohort.Decision, error) {
		return cohort.Decision{Allow: true}, nil
	}
	var c2 *Client
	waitUntil(t, "the first client's seat is free", func() bool {
		c2, err = Dial(context.Background(), sock, allow)
		return err == nil
	})
	defer c2.Close()
	if got := <-first; got != "wrote" {
		t.Fatalf("the session's run: %q", got)
	}
	if _, err := os.Stat(target); err != nil {
		t.Fatalf("the answered Write did not run: %v", err)
	}
	if c2.ID() != s.ID() {
		t.Fatalf("hello: id %q, want %q", c2.ID(), s.ID())
	}
	var result string
	for ev, err := range c2.Run(context.Background(), "second") {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == cohort.EventResult {
			result = ev.Result
		}
	}
	if result != "second answer" {
		t.Fatalf("the client's run ended with %q", result)
	}
	waitUntil(t, "the agent list", func() bool { return len(c2.Agents()) > 0 })
}

// TestHelloComesFirst: every client reads the session's hello (its id,
// model and mode) as the first line, never the agent list the server
// also pushes at once (which came first now and then, and attached a
// client with no id, model or mode).
func TestHelloComesFirst(t *testing.T) {
	_, _, s, sock := serveSession(t, cohort.Config{Model: "claude-opus-4-1", PermissionMode: "acceptEdits"},
		func(*fakeapi.Request) fakeapi.Reply { return fakeapi.TextReply("ok") })
	deny := func(context.Context, cohort.PermissionRequest) (cohort.Decision, error) {
		return cohort.Decision{}, nil
	}
	for i := range 40 {
		var cl *Client
		waitUntil(t, "a free seat", func() bool {
			var err error
			cl, err = Dial(context.Background(), sock, deny)
			return err == nil
		})
		id, model, mode := cl.ID(), cl.Model(), cl.Mode()
		cl.Close()
		if id != s.ID() || model != "claude-opus-4-1" || mode != "acceptEdits" {
			t.Fatalf("dial %d: hello says id %q, model %q, mode %q", i, id, model, mode)
		}
	}
}
