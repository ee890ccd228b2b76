package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(goleak.IgnoreCurrent()); err != nil {
			os.Stderr.WriteString("goroutine leak: " + err.Error() + "\n")
			code = 1
		}
	}
	cleanupMCPServer()
	os.Exit(code)
}

// harness is one CLI environment: a temp HOME and COHORT_HOME, a project
// directory, and a fake Messages API.
type harness struct {
	t    *testing.T
	home string
	dir  string
	srv  *fakeapi.Server
	vars map[string]string
}

func newHarness(t *testing.T, policy fakeapi.Policy) *harness {
	t.Helper()
	root := t.TempDir()
	h := &harness{t: t, home: filepath.Join(root, "home"), dir: filepath.Join(root, "project")}
	for _, d := range []string{h.home, h.dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	h.srv = fakeapi.New(fakeapi.Config{Policy: policy})
	t.Cleanup(h.srv.Close)
	h.vars = map[string]string{
		"HOME":               h.home,
		"COHORT_HOME":        filepath.Join(h.home, ".cohort"),
		"ANTHROPIC_API_KEY":  "test-key",
		"ANTHROPIC_BASE_URL": h.srv.URL,
		"PATH":               os.Getenv("PATH"),
	}
	h.useTestProvider()
	return h
}

func (h *harness) environ() []string {
	var out []string
	for k, v := range h.vars {
		out = append(out, k+"="+v)
	}
	return out
}

// run runs the CLI in-process with a deadline.
func (h *harness) run(args ...string) (stdout, stderr string, code int) {
	ctx, cancel := context.WithTimeout(h.t.Context(), 60*time.Second)
	defer cancel()
	return h.runCtx(ctx, args...)
}

func (h *harness) runCtx(ctx context.Context, args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	code = Main(ctx, Invocation{
		Args: append([]string{"--cwd", h.dir}, args...), Stdin: strings.NewReader(""),
		Stdout: &out, Stderr: &errb,
		Getenv:  func(k string) string { return h.vars[k] },
		Environ: h.environ,
		Getwd:   func() (string, error) { return h.dir, nil },
	})
	return out.String(), errb.String(), code
}

// result decodes a --output-format json result.
func (h *harness) result(stdout string) resultLine {
	h.t.Helper()
	var r resultLine
	if err := json.Unmarshal([]byte(strings.TrimSpace(lastLine(stdout))), &r); err != nil {
		h.t.Fatalf("result is not JSON: %v\n%s", err, stdout)
	}
	return r
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

func (h *harness) write(name, content string) string {
	h.t.Helper()
	p := filepath.Join(h.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		h.t.Fatal(err)
	}
	return p
}

func (h *harness) read(name string) string {
	h.t.Helper()
	data, err := os.ReadFile(filepath.Join(h.dir, name))
	if err != nil {
		h.t.Fatal(err)
	}
	return string(data)
}

// conv keys a policy on the conversation's first user message, so the lead
// and its subagents each follow their own script.
type conv struct {
	mu    sync.Mutex
	steps map[string][]func(*fakeapi.Request) fakeapi.Reply
}

func newConv() *conv { return &conv{steps: map[string][]func(*fakeapi.Request) fakeapi.Reply{}} }

// on adds the replies, by turn, for conversations whose first user message
// contains marker.
func (c *conv) on(marker string, steps ...func(*fakeapi.Request) fakeapi.Reply) *conv {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.steps[marker] = steps
	return c
}

func (c *conv) policy(r *fakeapi.Request) fakeapi.Reply {
	c.mu.Lock()
	var steps []func(*fakeapi.Request) fakeapi.Reply
	first := r.FirstUserText()
	for marker, s := range c.steps {
		if strings.Contains(first, marker) {
			steps = s
		}
	}
	c.mu.Unlock()
	turn := r.Turn()
	if steps == nil || turn >= len(steps) {
		return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "test policy has no reply for this turn: " + first}}
	}
	return steps[turn](r)
}

func text(s string) func(*fakeapi.Request) fakeapi.Reply {
	return func(*fakeapi.Request) fakeapi.Reply { return fakeapi.TextReply(s) }
}

func calls(blocks ...fakeapi.Block) func(*fakeapi.Request) fakeapi.Reply {
	return func(*fakeapi.Request) fakeapi.Reply { return fakeapi.Reply{Content: blocks} }
}

func use(name string, input any) fakeapi.Block { return fakeapi.ToolUseBlock("", name, input) }

// toolResults returns the tool_result texts of a request's last message.
func toolResults(r *fakeapi.Request) []string {
	last := r.Messages[len(r.Messages)-1]
	var out []string
	for _, b := range last.Content {
		if b.Type == "tool_result" {
			var parts []string
			for _, c := range b.Content {
				parts = append(parts, c.Text)
			}
			if b.IsError {
				parts = append([]string{"ERROR:"}, parts...)
			}
			out = append(out, strings.Join(parts, ""))
		}
	}
	return out
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
