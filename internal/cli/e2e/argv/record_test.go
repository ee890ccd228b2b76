package argv

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/internal/npmtest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// recordingFile holds what Claude Code did with each line.
const recordingFile = "testdata/claude-code.json"

// recording is recordingFile's content.
type recording struct {
	// ClaudeCode is what the recorded claude --version printed.
	ClaudeCode string     `json:"claude_code"`
	Lines      []recorded `json:"lines"`
}

type recorded struct {
	Name     string   `json:"name"`
	Args     []string `json:"args"`
	Observed observed `json:"observed"`
}

// claudeStderr reads Claude Code's messages.
var claudeStderr = stderrPatterns{
	warning:  regexp.MustCompile(`(?m)^"(.*)" was read as a value of (\S+), not as a prompt`),
	unknown:  regexp.MustCompile(`error: unknown option '([^']+)'`),
	missing:  regexp.MustCompile(`error: option '(-[^,' ]+)[^']*' argument missing`),
	noPrompt: regexp.MustCompile(`Input must be provided either through stdin or as a prompt argument`),
	badMCP:   regexp.MustCompile(`MCP config file not found`),
	beta:     regexp.MustCompile(`Beta header '([^']+)' is not allowed`),
}

// TestRecordClaudeCode runs every line with the real Claude Code, at the
// version Cohort speaks (cohort.ProtocolVersion, installed from npm by
// internal/npmtest), against the fake API, and writes what it observed to
// testdata/claude-code.json. It runs only when asked:
//
//	COHORT_RECORD_ARGV=1 go test ./internal/cli/e2e/argv -run TestRecordClaudeCode
func TestRecordClaudeCode(t *testing.T) {
	if os.Getenv("COHORT_RECORD_ARGV") == "" {
		t.Skip("records Claude Code's parse of the lines; set COHORT_RECORD_ARGV=1 to re-record testdata/claude-code.json")
	}
	modules := npmtest.Install(t, "@anthropic-ai/claude-code@"+cohort.ProtocolVersion)
	exe := filepath.Join(modules, "node_modules", "@anthropic-ai", "claude-code", "bin", "claude.exe")
	cmd := exec.Command(exe, "--version")
	cmd.Env = []string{"HOME=" + t.TempDir(), "PATH=" + os.Getenv("PATH")}
	version, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s --version: %v", exe, err)
	}
	rec := recording{ClaudeCode: strings.TrimSpace(string(version))}
	for _, l := range lines {
		o := runClaude(t, exe, l.args)
		js, _ := json.Marshal(o)
		t.Logf("%s: %s", l.name, js)
		rec.Lines = append(rec.Lines, recorded{Name: l.name, Args: l.args, Observed: o})
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(recordingFile, append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}

// runClaude runs one line with Claude Code in a fresh project and home.
func runClaude(t *testing.T, exe string, args []string) observed {
	t.Helper()
	dir, home := filepath.Join(t.TempDir(), "work"), t.TempDir()
	newProject(t, dir)
	srv := fakeapi.New(fakeapi.Config{Policy: policy(dir)})
	defer srv.Close()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, append([]string{"--output-format", "stream-json", "--verbose"}, args...)...)
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TMPDIR=" + t.TempDir(),
		"ANTHROPIC_BASE_URL=" + srv.URL, "ANTHROPIC_API_KEY=sk-test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1"}
	cmd.Stdin = strings.NewReader("")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 10 * time.Second
	_ = cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("claude %q did not finish: %s", args, stderr.String())
	}
	var o observed
	claudeStderr.read(&o, stderr.String())
	if o.Stop == "" {
		o.ran(t, dir, stdout.String(), srv.Requests(), args)
		if o.Prompt == "" {
			t.Fatalf("claude %q neither stopped nor asked the model:\nstdout %s\nstderr %s", args, stdout.String(), stderr.String())
		}
	}
	return o
}
