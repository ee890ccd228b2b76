package crew

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/tool/shell"
)

// BackgroundShell starts a Bash command as a background task of the calling
// agent (Bash with run_in_background). Its output goes to the task's output
// file; the agent is notified when it ends. It has the signature of
// shell.BackgroundFunc.
func (rt *Crew) BackgroundShell(ctx context.Context, env *tool.Env, command, description string, run shell.RunFunc) (string, string, error) {
	caller, ok := rt.Lookup(env.Caller.ID)
	if !ok {
		return "", "", fmt.Errorf("runtime: background shell for unknown agent %q", env.Caller.ID)
	}
	if description == "" {
		description = command
	}
	spec := task.Spec{Kind: task.KindLocalBash, Description: description, Command: command,
		ToolUseID: env.ToolUseID, ParentAgentID: caller.ID(), Queue: caller.queue, Background: true}
	t, err := rt.cfg.Tasks.Start(ctx, spec, func(ctx context.Context, t *task.Task) (task.Outcome, error) {
		w := &lineWriter{out: t.Output()}
		exit, err := run(ctx, w) // the Bash tool's own start: sandboxed like the foreground
		w.flush()
		if err != nil {
			return task.Outcome{}, err
		}
		if exit.Stopped != nil && ctx.Err() != nil {
			return task.Outcome{}, ctx.Err()
		}
		code := exit.Code
		return task.Outcome{Text: shellOutcome(code, t.Output()), ExitCode: &code}, nil
	})
	if err != nil {
		return "", "", err
	}
	out := t.State().OutputFile
	caller.ownOutput(out)
	return t.ID(), out, nil
}

// Limits of the output a background command's notification carries: its
// last shellTailLines lines, at most shellTailBytes in all (the file has
// everything).
const (
	shellTailLines = 20
	shellTailBytes = 4 << 10
)

// shellOutcome is a background command's result for its notification:
// the exit code and the end of its output, so that the agent need not
// read the output file for a short command.
func shellOutcome(code int, out *task.Output) string {
	text := fmt.Sprintf("exit code %d", code)
	if out == nil {
		return text
	}
	lines := out.Tail(shellTailLines + 1)
	more := len(lines) > shellTailLines
	if more {
		lines = lines[1:]
	}
	for len(lines) > 1 && len(strings.Join(lines, "\n")) > shellTailBytes {
		lines, more = lines[1:], true
	}
	switch {
	case len(lines) == 0:
		return text + "; the command printed nothing."
	case more:
		return fmt.Sprintf("%s; the last %d lines of its output (the output file has all of it):\n%s", text, len(lines), strings.Join(lines, "\n"))
	}
	return text + "; its output:\n" + strings.Join(lines, "\n")
}

// lineWriter splits a byte stream into the task output's lines.
type lineWriter struct {
	mu  sync.Mutex
	out *task.Output
	buf []byte
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			break
		}
		if w.out != nil {
			_ = w.out.WriteLine(string(w.buf[:i]))
		}
		w.buf = w.buf[i+1:]
	}
	return len(p), nil
}

func (w *lineWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 && w.out != nil {
		_ = w.out.WriteLine(string(w.buf))
	}
	w.buf = nil
}
