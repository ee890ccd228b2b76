package argv

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// cohortStderr reads Cohort's messages.
var cohortStderr = stderrPatterns{
	warning:  regexp.MustCompile(`(?m)^cohort: warning: "(.*)" went to (\S+) as one of its values, not to the model`),
	unknown:  regexp.MustCompile(`cohort: unknown flag (\S+?)[;: ]`),
	missing:  regexp.MustCompile(`cohort: (--\S+) needs at least one value`),
	noPrompt: regexp.MustCompile(`cohort: no prompt:`),
	badMCP:   regexp.MustCompile(`cohort: .*--mcp-config.*(no such file|not found)`),
}

// TestCommandLinesAsClaudeCodeReadsThem runs every line of the table
// through Cohort's command line, in-process, against the fake API, and
// compares what reached the model and the permission layer with what
// Claude Code did with the same line (testdata/claude-code.json, recorded
// by TestRecordClaudeCode).
func TestCommandLinesAsClaudeCodeReadsThem(t *testing.T) {
	t.Parallel()
	rec := readRecording(t)
	for _, l := range rec.Lines {
		t.Run(l.Name, func(t *testing.T) {
			t.Parallel()
			got := runCohort(t, l.Args)
			if d := cmp.Diff(l.Observed, got); d != "" {
				t.Errorf("cohort %q, against %s (-claude +cohort):\n%s", l.Args, rec.ClaudeCode, d)
			}
		})
	}
}

// readRecording reads the recording and checks that it records the table
// as it is, made with the Claude Code release Cohort speaks.
func readRecording(t *testing.T) recording {
	t.Helper()
	data, err := os.ReadFile(recordingFile)
	if err != nil {
		t.Fatal(err)
	}
	var rec recording
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatalf("%s: %v", recordingFile, err)
	}
	if want := cohort.ProtocolVersion + " (Claude Code)"; rec.ClaudeCode != want {
		t.Errorf("%s was recorded with %q, not %q: re-record it (COHORT_RECORD_ARGV=1 go test ./internal/cli/e2e/argv -run TestRecordClaudeCode)", recordingFile, rec.ClaudeCode, want)
	}
	same := func(l line, r recorded) bool { return l.name == r.Name && slices.Equal(l.args, r.Args) }
	if !slices.EqualFunc(lines, rec.Lines, same) {
		t.Fatalf("%s does not record the table in lines_test.go as it is: re-record it (COHORT_RECORD_ARGV=1 go test ./internal/cli/e2e/argv -run TestRecordClaudeCode)", recordingFile)
	}
	if len(rec.Lines) < 25 {
		t.Fatalf("the table has %d lines; it must keep at least 25", len(rec.Lines))
	}
	return rec
}

// runCohort runs one line through Cohort's command line in a fresh
// project and home.
func runCohort(t *testing.T, args []string) observed {
	t.Helper()
	var dir atomic.Pointer[string]
	h := clitest.New(t, func(r *fakeapi.Request) fakeapi.Reply { return policy(*dir.Load())(r) })
	dir.Store(&h.Dir)
	newProject(t, h.Dir)
	stdout, stderr, _ := h.Run(append([]string{"--output-format", "stream-json", "--verbose"}, args...)...)
	var o observed
	cohortStderr.read(&o, stderr)
	if o.Stop == "" {
		o.ran(t, h.Dir, stdout, h.Srv.Requests(), args)
		if o.Prompt == "" {
			t.Fatalf("cohort %q neither stopped nor asked the model:\nstdout %s\nstderr %s", args, stdout, stderr)
		}
	} else if n := len(h.Srv.Requests()); n > 0 {
		t.Errorf("cohort %q stopped (%s), but only after %d model requests", args, o.Stop, n)
	}
	return o
}

// TestBadFlagsSayWhatToDo: an unknown flag is named with the nearest known
// ones, a variadic flag without a value says so, and neither reaches the
// model; with --output-format json the reason is also the result.
func TestBadFlagsSayWhatToDo(t *testing.T) {
	t.Parallel()
	h := clitest.New(t, func(*fakeapi.Request) fakeapi.Reply { return fakeapi.TextReply("ran") })
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"-p", "--allowedTool", "Write", "fix the bug"}, []string{"unknown flag --allowedTool", "--allowedTools", "--allowed-tools"}},
		{[]string{"-p", "fix the bug", "--disalowedTools", "Write"}, []string{"unknown flag --disalowedTools", "--disallowedTools"}},
		{[]string{"-p", "fix the bug", "--add-dir"}, []string{"--add-dir needs at least one value"}},
		{[]string{"-p", "fix the bug", "--output-format", "json", "--betas"}, []string{"--betas needs at least one value"}},
	} {
		stdout, stderr, code := h.Run(c.args...)
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("cohort %q: stderr lacks %q:\n%s", c.args, w, stderr)
			}
		}
		if code != 2 {
			t.Errorf("cohort %q: exit %d, want 2 (bad usage)", c.args, code)
		}
		if slices.Contains(c.args, "json") && !strings.Contains(stdout, `"is_error":true`) {
			t.Errorf("cohort %q: no error result on stdout:\n%s", c.args, stdout)
		}
	}
	if n := len(h.Srv.Requests()); n != 0 {
		t.Errorf("bad flags reached the model: %d requests", n)
	}
}
