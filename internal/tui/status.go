package tui

import (
	"context"
	"encoding/json"
	"os/exec"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

type statusMsg struct{ text string }

// statusCmd runs the statusLine command once (Claude Code's: the session's
// JSON on stdin, the first line of its output under the input). It runs
// again after each turn, never on a timer.
func (m *Model) statusCmd() tea.Cmd {
	command := m.opts.StatusLine
	if command == "" {
		return nil
	}
	in, _ := json.Marshal(map[string]any{"session_id": m.sess.ID(), "cwd": m.opts.Dir,
		"model":           map[string]string{"id": m.model, "display_name": m.model},
		"workspace":       map[string]string{"current_dir": m.opts.Dir, "project_dir": m.opts.Dir},
		"permission_mode": m.mode})
	dir := m.opts.Dir
	return m.background(func(ctx context.Context) tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		c := exec.CommandContext(ctx, "/bin/sh", "-c", command)
		c.Dir, c.Stdin, c.WaitDelay = dir, strings.NewReader(string(in)), time.Second
		out, err := c.Output()
		if err != nil && len(out) == 0 {
			return statusMsg{}
		}
		line, _, _ := strings.Cut(string(out), "\n")
		// Colours are the statusLine's own business; anything else that
		// could move the cursor is not.
		return statusMsg{Clean(ansi.Strip(line), false)}
	})
}

// notify tells a user who is not looking that a prompt waits: the
// terminal's desktop notification (OSC 9) and bell, and the Notification
// hook.
func (m *Model) notify(message string) tea.Cmd {
	var cmds []tea.Cmd
	if !m.focused && m.paint != nil {
		m.paint.send(ansi.Notify(Clean(message, false)) + "\a")
	}
	if hook := m.opts.Notify; hook != nil {
		cmds = append(cmds, m.background(func(ctx context.Context) tea.Msg {
			hook(ctx, message)
			return nil
		}))
	}
	return tea.Batch(cmds...)
}
