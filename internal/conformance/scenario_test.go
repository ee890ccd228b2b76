package conformance

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

var (
	buildOnce sync.Once
	binPath   string
	buildOut  []byte
	buildErr  error
)

// binary builds cmd/cohort once per test run.
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "cohort-conformance-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "cohort")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/cohort")
		cmd.Dir = repoRoot(t)
		buildOut, buildErr = cmd.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("build cohort: %v\n%s", buildErr, buildOut)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// call is one step: a tool call the model makes.
type call struct {
	tool  string
	input map[string]any
}

// scenario is one run of a scripted sequence in a fresh project: the model
// (the fake) makes one call per turn, then ends. The default sequence is
// Write, Read, Edit, Grep, Glob and Bash.
type scenario struct {
	t       *testing.T
	home    string
	project string
	srv     *fakeapi.Server

	// calls is the sequence (the default one unless a test sets it).
	calls []call
	// override replaces the input of some steps (by index).
	override map[int]map[string]any
	// side answers requests that are not the lead's (a WebSearch call's
	// own request); nil answers them with a line of text.
	side func(*fakeapi.Request) fakeapi.Reply

	mu       sync.Mutex
	requests int
	results  map[int]bool   // step index → the tool result was an error
	texts    map[int]string // step index → the tool result's text
}

func newScenario(t *testing.T) *scenario {
	t.Helper()
	root := t.TempDir()
	sc := &scenario{t: t, home: filepath.Join(root, "home"), project: filepath.Join(root, "project"),
		results: map[int]bool{}, texts: map[int]string{}}
	// The home is empty but for ~/.claude, which Claude Code creates on its
	// first run (hooks in the corpus append logs there).
	for _, d := range []string{filepath.Join(sc.home, ".claude"), sc.project} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f := sc.file()
	sc.calls = []call{
		{"Write", map[string]any{"file_path": f, "content": "hello from the sequence\n"}},
		{"Read", map[string]any{"file_path": f}},
		{"Edit", map[string]any{"file_path": f, "old_string": "hello", "new_string": "goodbye"}},
		{"Grep", map[string]any{"pattern": "goodbye", "path": sc.project}},
		{"Glob", map[string]any{"pattern": "*.txt", "path": sc.project}},
		{"Bash", map[string]any{"command": "ls", "description": "List the project"}},
	}
	sc.srv = fakeapi.New(fakeapi.Config{Policy: sc.policy})
	t.Cleanup(sc.srv.Close)
	return sc
}

// tools names the sequence's tools, for --allowedTools.
func (sc *scenario) tools() []string {
	var out []string
	for _, c := range sc.calls {
		if !slices.Contains(out, c.tool) {
			out = append(out, c.tool)
		}
	}
	return out
}

// file is the file the sequence writes, reads and edits.
func (sc *scenario) file() string { return filepath.Join(sc.project, "notes.txt") }

func (sc *scenario) policy(r *fakeapi.Request) fakeapi.Reply {
	sc.mu.Lock()
	calls, override, side := sc.calls, sc.override, sc.side
	sc.mu.Unlock()
	if !strings.Contains(r.FirstUserText(), "run the sequence") {
		if side != nil {
			return side(r)
		}
		return fakeapi.TextReply("(not part of the sequence)")
	}
	turn := r.Turn()
	sc.mu.Lock()
	sc.requests++
	if turn > 0 {
		last := r.Messages[len(r.Messages)-1]
		for _, b := range last.Content {
			if b.Type == "tool_result" {
				sc.results[turn-1] = b.IsError
				for _, c := range b.Content {
					sc.texts[turn-1] += c.Text
				}
			}
		}
	}
	sc.mu.Unlock()
	if turn < len(calls) {
		c := calls[turn]
		if in, ok := override[turn]; ok {
			c.input = in
		}
		return fakeapi.ToolReply("", c.tool, c.input)
	}
	return fakeapi.TextReply("The sequence is done.")
}

// run runs the binary in the project with the six tools pre-approved and
// returns the outcome and the CLI's output.
func (sc *scenario) run(extra ...string) (outcome, string) {
	sc.t.Helper()
	// Reading the sequence under the lock also publishes what the test set
	// (calls, override, side) to the server's handlers, which read it under
	// the same lock.
	sc.mu.Lock()
	allowed := sc.tools()
	sc.mu.Unlock()
	ctx, cancel := context.WithTimeout(sc.t.Context(), 3*time.Minute)
	defer cancel()
	args := append([]string{"-p", "run the sequence", "--output-format", "json",
		"--allowedTools", strings.Join(allowed, ",")}, extra...)
	cmd := exec.CommandContext(ctx, binary(sc.t), args...)
	cmd.Dir = sc.project
	cmd.Env = []string{
		"HOME=" + sc.home,
		"COHORT_HOME=" + filepath.Join(sc.home, ".cohort"),
		"ANTHROPIC_API_KEY=test-key",
		"ANTHROPIC_BASE_URL=" + sc.srv.URL,
		"PATH=" + os.Getenv("PATH"),
		"TMPDIR=" + sc.t.TempDir(),
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); ctx.Err() != nil {
		sc.t.Fatalf("cohort did not finish the sequence in time: %v\n%s", err, out.String())
	}
	return sc.outcome(), out.String()
}

func (sc *scenario) outcome() outcome {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.requests == 0 {
		return outcome{Verdict: "PROMPT_BLOCKED", Steps: strings.Repeat("-", len(sc.calls))}
	}
	steps := make([]byte, len(sc.calls))
	verdict := "OK"
	for i := range steps {
		isErr, ran := sc.results[i]
		switch {
		case !ran:
			steps[i], verdict = '-', "FAIL"
		case isErr:
			steps[i], verdict = 'x', "FAIL"
		default:
			steps[i] = 'o'
		}
	}
	return outcome{Verdict: verdict, Steps: string(steps)}
}

// resultText returns the text of step i's tool result.
func (sc *scenario) resultText(i int) string {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.texts[i]
}
