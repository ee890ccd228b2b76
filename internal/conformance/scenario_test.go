package conformance

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
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

// stepTools are the tools of the scripted sequence, in order.
var stepTools = []string{"Write", "Read", "Edit", "Grep", "Glob", "Bash"}

// scenario is one run of the scripted sequence in a fresh project: the
// model (the fake) calls Write, Read, Edit, Grep, Glob and Bash, one per
// turn, then ends.
type scenario struct {
	t       *testing.T
	home    string
	project string
	srv     *fakeapi.Server

	mu       sync.Mutex
	requests int
	results  map[int]bool // step index → the tool result was an error
}

func newScenario(t *testing.T) *scenario {
	t.Helper()
	root := t.TempDir()
	sc := &scenario{t: t, home: filepath.Join(root, "home"), project: filepath.Join(root, "project"), results: map[int]bool{}}
	// The home is empty but for ~/.claude, which Claude Code creates on its
	// first run (hooks in the corpus append logs there).
	for _, d := range []string{filepath.Join(sc.home, ".claude"), sc.project} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sc.srv = fakeapi.New(fakeapi.Config{Policy: sc.policy})
	t.Cleanup(sc.srv.Close)
	return sc
}

// file is the file the sequence writes, reads and edits.
func (sc *scenario) file() string { return filepath.Join(sc.project, "notes.txt") }

func (sc *scenario) policy(r *fakeapi.Request) fakeapi.Reply {
	if !strings.Contains(r.FirstUserText(), "run the sequence") {
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
			}
		}
	}
	sc.mu.Unlock()
	inputs := []map[string]any{
		{"file_path": sc.file(), "content": "hello from the sequence\n"},
		{"file_path": sc.file()},
		{"file_path": sc.file(), "old_string": "hello", "new_string": "goodbye"},
		{"pattern": "goodbye", "path": sc.project},
		{"pattern": "*.txt", "path": sc.project},
		{"command": "ls", "description": "List the project"},
	}
	if turn < len(inputs) {
		return fakeapi.ToolReply("", stepTools[turn], inputs[turn])
	}
	return fakeapi.TextReply("The sequence is done.")
}

// run runs the binary in the project with the six tools pre-approved and
// returns the outcome and the CLI's output.
func (sc *scenario) run(extra ...string) (outcome, string) {
	sc.t.Helper()
	ctx, cancel := context.WithTimeout(sc.t.Context(), 3*time.Minute)
	defer cancel()
	args := append([]string{"-p", "run the sequence", "--output-format", "json",
		"--allowedTools", strings.Join(stepTools, ",")}, extra...)
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
		return outcome{Verdict: "PROMPT_BLOCKED", Steps: strings.Repeat("-", len(stepTools))}
	}
	steps := make([]byte, len(stepTools))
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
