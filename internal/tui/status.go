package tui

import (
	"bytes"
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
	dir, run, sess := m.opts.Dir, m.opts.RunStatusLine, m.sess
	if run == nil {
		run = func(ctx context.Context, _ Session, in []byte) ([]byte, error) {
			c := exec.CommandContext(ctx, "/bin/sh", "-c", command)
			c.Dir, c.Stdin, c.WaitDelay = dir, bytes.NewReader(in), time.Second
			return c.Output()
		}
	}
	return m.background(func(ctx context.Context) tea.Msg {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		out, err := run(ctx, sess, in)
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
// terminal's desktop notification (OSC 9) and its bell. (The session runs
// the Notification hooks itself before it asks.)
func (m *Model) notify(message string) {
	if !m.focused && m.paint != nil {
		m.paint.send(ansi.Notify(Clean(message, false)) + "\a")
	}
}
