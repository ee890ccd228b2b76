package permission

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/internal/childenv"
)

// Command is the Prompter behind --permission-prompt-command: it runs a
// program through sh -c, writes the PromptRequest as JSON to its stdin and
// reads one JSON object from its stdout, in the shape of Claude Code's
// permission prompt tool:
//
//	{"behavior": "allow", "updatedInput": {...}, "updatedPermissions": [...]}
//	{"behavior": "deny", "message": "why"}
//
// Anything else (a non-zero exit, no answer before the timeout, output
// that is not exactly such an object) denies the call with a reason that
// says what went wrong. The program runs in its own process group, which
// is sent SIGTERM and then SIGKILL when it overruns, and is always reaped.
// Safe for concurrent use: every Prompt runs its own process.
type Command struct {
	// Command is the shell command line.
	Command string
	// Dir is its working directory ("" for the current one).
	Dir string
	// Env is its environment (nil for Cohort's own without the credentials
	// Cohort holds; see internal/childenv).
	Env []string
	// Timeout bounds one answer (default 60s); Grace is the wait between
	// SIGTERM and SIGKILL (default 2s).
	Timeout, Grace time.Duration
}

// maxAnswer bounds what is read from the program.
const maxAnswer = 1 << 20

// commandAnswer is the program's JSON answer.
type commandAnswer struct {
	Behavior           string          `json:"behavior"`
	Message            string          `json:"message"`
	UpdatedInput       json.RawMessage `json:"updatedInput"`
	UpdatedPermissions []RuleUpdate    `json:"updatedPermissions"`
}

// Prompt runs the program once. It returns an error only when ctx ends;
// every failure of the program itself is a deny with its reason.
func (c *Command) Prompt(ctx context.Context, req PromptRequest) (PromptDecision, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return PromptDecision{}, fmt.Errorf("encode permission request: %w", err)
	}
	timeout, grace := c.Timeout, c.Grace
	if timeout <= 0 {
		timeout = time.Minute
	}
	if grace <= 0 {
		grace = 2 * time.Second
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, "/bin/sh", "-c", c.Command)
	cmd.Dir, cmd.Env = c.Dir, c.Env
	if cmd.Env == nil {
		cmd.Env = childenv.Scrub(os.Environ())
	}
	cmd.Stdin = bytes.NewReader(body)
	var stdout, stderr capped
	stdout.limit, stderr.limit = maxAnswer, 4<<10
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	ownGroup(cmd)
	cmd.WaitDelay = grace
	runErr := cmd.Run()
	killGroup(cmd) // stragglers the program left behind
	deny := func(format string, args ...any) (PromptDecision, error) {
		msg := fmt.Sprintf("Permission to use %s was denied: the permission prompt command %s.", req.ToolName, fmt.Sprintf(format, args...))
		return PromptDecision{Message: msg}, nil
	}
	if ctx.Err() != nil {
		return PromptDecision{Message: "The permission request was cancelled."}, ctx.Err()
	}
	if runCtx.Err() != nil {
		return deny("did not answer within %s", timeout)
	}
	var exitErr *exec.ExitError
	switch {
	case errors.As(runErr, &exitErr):
		return deny("failed with exit status %d%s", exitErr.ExitCode(), stderrNote(stderr.String()))
	case runErr != nil && !errors.Is(runErr, exec.ErrWaitDelay):
		return deny("could not run (%v)", runErr)
	case stdout.over:
		return deny("wrote more than %d bytes", maxAnswer)
	}
	ans, err := parseAnswer(stdout.Bytes())
	if err != nil {
		return deny("gave an answer Cohort cannot read (%v); it must print one JSON object such as {\"behavior\":\"allow\"} or {\"behavior\":\"deny\",\"message\":\"...\"}", err)
	}
	d := PromptDecision{Allow: ans.Behavior == "allow", Message: ans.Message, Updates: ans.UpdatedPermissions}
	if d.Allow && len(ans.UpdatedInput) > 0 && string(ans.UpdatedInput) != "null" {
		d.UpdatedInput = ans.UpdatedInput
	}
	if !d.Allow && d.Message == "" {
		d.Message = fmt.Sprintf("Permission to use %s was denied by the permission prompt command.", req.ToolName)
	}
	return d, nil
}

func parseAnswer(out []byte) (commandAnswer, error) {
	var ans commandAnswer
	dec := json.NewDecoder(bytes.NewReader(out))
	if err := dec.Decode(&ans); err != nil {
		if errors.Is(err, io.EOF) {
			return ans, errors.New("no output")
		}
		return ans, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return ans, errors.New("more than one JSON value")
	}
	if ans.Behavior != "allow" && ans.Behavior != "deny" {
		return ans, fmt.Errorf("behavior is %q, want \"allow\" or \"deny\"", ans.Behavior)
	}
	if len(ans.UpdatedInput) > 0 && string(ans.UpdatedInput) != "null" && !bytes.HasPrefix(bytes.TrimSpace(ans.UpdatedInput), []byte("{")) {
		return ans, errors.New("updatedInput must be a JSON object")
	}
	return ans, nil
}

func stderrNote(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	return ": " + s
}

// capped is a buffer that keeps at most limit bytes and remembers overflow.
// It deliberately has no ReadFrom, so io.Copy goes through Write.
type capped struct {
	buf   bytes.Buffer
	limit int
	over  bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.limit - c.buf.Len(); room < len(p) {
		c.over = true
		if room > 0 {
			c.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return c.buf.Write(p)
}

func (c *capped) Bytes() []byte  { return c.buf.Bytes() }
func (c *capped) String() string { return c.buf.String() }
