package cohort

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cohort-dev/cohort/internal/testbin"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

func TestMain(m *testing.M) {
	if sock := os.Getenv("COHORT_TEST_SEND_TO"); sock != "" {
		sendAndExit(sock)
	}
	testbin.UseRaceOptions()
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(goleak.IgnoreCurrent()); err != nil {
			os.Stderr.WriteString("goroutine leak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

// router answers each conversation by a marker in its first user message.
type router struct {
	mu     sync.Mutex
	routes []route
}

type route struct {
	marker string
	reply  func(*fakeapi.Request) fakeapi.Reply
}

func (rt *router) on(marker string, reply func(*fakeapi.Request) fakeapi.Reply) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.routes = append(rt.routes, route{marker, reply})
}

func (rt *router) policy(r *fakeapi.Request) fakeapi.Reply {
	first := r.FirstUserText()
	rt.mu.Lock()
	var reply func(*fakeapi.Request) fakeapi.Reply
	for _, ro := range rt.routes {
		if strings.Contains(first, ro.marker) {
			reply = ro.reply
			break
		}
	}
	rt.mu.Unlock()
	if reply == nil {
		return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "test router has no route for: " + first}}
	}
	return reply(r)
}

// env is a test session's world: a HOME, a COHORT_HOME and a project
// directory, and the fake API.
type env struct {
	t    testing.TB
	home string
	dir  string
	srv  *fakeapi.Server
	rt   *router
	vars map[string]string
}

func newEnv(t testing.TB) *env {
	t.Helper()
	root := t.TempDir()
	e := &env{t: t, home: filepath.Join(root, "home"), dir: filepath.Join(root, "project"), rt: &router{}}
	for _, d := range []string{e.home, e.dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e.srv = fakeapi.New(fakeapi.Config{Policy: e.rt.policy})
	t.Cleanup(e.srv.Close)
	e.vars = map[string]string{"HOME": e.home, "PATH": os.Getenv("PATH")}
	return e
}

// cohortHome is where the env's sessions keep their state.
func (e *env) cohortHome() string { return filepath.Join(e.home, ".cohort") }

// config is a session on the env's fake API.
func (e *env) config() Config {
	return Config{Dir: e.dir, Home: e.cohortHome(), Model: "sonnet", BaseURL: e.srv.URL, APIKey: "test-key",
		Getenv: func(k string) string { return e.vars[k] }, Environ: func() []string {
			var out []string
			for k, v := range e.vars {
				out = append(out, k+"="+v)
			}
			return out
		}, Stderr: testWriter{e.t}}
}

// open makes a session and closes it at the end of the test.
func (e *env) open(cfg Config) *Session {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := New(ctx, cfg)
	if err != nil {
		e.t.Fatalf("New: %v", err)
	}
	e.t.Cleanup(func() {
		if err := s.Close(); err != nil {
			e.t.Errorf("Close: %v", err)
		}
	})
	return s
}

// testWriter sends warnings to the test log.
type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// collect runs prompt to the end and returns its events; it fails the test
// when the run takes longer than a minute.
func collect(t testing.TB, s *Session, prompt string) []Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out []Event
	for ev, err := range s.Run(ctx, prompt) {
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		out = append(out, ev)
	}
	if len(out) == 0 || out[len(out)-1].Type != EventResult {
		t.Fatalf("the run did not end with a result: %d events", len(out))
	}
	return out
}

func last(evs []Event) Event { return evs[len(evs)-1] }

// use is a tool_use block.
func use(name string, input any) fakeapi.Block { return fakeapi.ToolUseBlock("", name, input) }

// gate blocks a fake reply until it is opened or the request ends.
type gate struct {
	reached chan struct{}
	open    chan struct{}
	once    sync.Once
}

func newGate() *gate { return &gate{reached: make(chan struct{}), open: make(chan struct{})} }

// wait marks the gate reached and waits for it to open; false when the
// request was cancelled first.
func (g *gate) wait(r *fakeapi.Request) bool {
	g.once.Do(func() { close(g.reached) })
	select {
	case <-g.open:
		return true
	case <-r.Context().Done():
		return false
	}
}

// await waits until a request reached the gate.
func (g *gate) await(t *testing.T) {
	t.Helper()
	select {
	case <-g.reached:
	case <-time.After(30 * time.Second):
		t.Fatal("no request reached the gate")
	}
}
