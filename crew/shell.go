package crew

import (
	"bytes"
	"context"
	"fmt"
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
		return task.Outcome{Text: fmt.Sprintf("exit code %d", code), ExitCode: &code}, nil
	})
	if err != nil {
		return "", "", err
	}
	return t.ID(), t.State().OutputFile, nil
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
