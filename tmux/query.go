package tmux

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cohort-dev/cohort/internal/clip"
)

// PaneStatus is what tmux knows about a pane.
type PaneStatus struct {
	ID   string
	PID  int  // the pane's command (for a dead pane: the pid it had)
	Dead bool // the command exited; the pane stays because of remain-on-exit
	// ExitStatus is the dead command's exit status, -1 if unknown: killed
	// by a signal, a tmux too old to say, or not reaped yet (tmux can notice
	// the terminal closing well before it reaps the process).
	ExitStatus int
	// Signal is the signal that killed the dead command (tmux 3.3+), 0 if
	// none or unknown.
	Signal int
}

// paneFormat lists a pane's fields; fields that an older tmux does not know
// expand to nothing.
const paneFormat = "#{pane_id}|#{pane_pid}|#{pane_dead}|#{pane_dead_status}|#{pane_dead_signal}"

// listPanes returns every pane of the server.
func (s *Server) listPanes(ctx context.Context) ([]PaneStatus, error) {
	out, err := s.run(ctx, "list-panes", "-a", "-F", paneFormat)
	if err != nil {
		return nil, err
	}
	var panes []PaneStatus
	for line := range strings.Lines(out) {
		if strings.TrimSpace(line) == "" {
			continue
		}
		p, err := parsePaneLine(line)
		if err != nil {
			return nil, fmt.Errorf("tmux list-panes: %w", err)
		}
		panes = append(panes, p)
	}
	return panes, nil
}

// parsePaneLine reads one line of paneFormat.
func parsePaneLine(line string) (PaneStatus, error) {
	f := strings.Split(strings.TrimRight(line, "\r\n"), "|")
	if len(f) != 5 {
		return PaneStatus{}, fmt.Errorf("unexpected line %q", clip.String(line, 80))
	}
	pid, err := strconv.Atoi(f[1])
	if err != nil || checkPaneID(f[0]) != nil || (f[2] != "0" && f[2] != "1") {
		return PaneStatus{}, fmt.Errorf("unexpected line %q", clip.String(line, 80))
	}
	p := PaneStatus{ID: f[0], PID: pid, Dead: f[2] == "1", ExitStatus: -1}
	if !p.Dead {
		return p, nil
	}
	if code, err := strconv.Atoi(f[3]); err == nil {
		p.ExitStatus = code
	}
	if sig, err := strconv.Atoi(f[4]); err == nil {
		p.Signal = sig
	}
	return p, nil
}

// Status reports on pane id. A pane that does not exist, or a server that
// is gone, gives ErrNoPane.
func (s *Server) Status(ctx context.Context, id string) (PaneStatus, error) {
	if err := checkPaneID(id); err != nil {
		return PaneStatus{}, err
	}
	panes, err := s.listPanes(ctx)
	if errors.Is(err, ErrNoServer) {
		return PaneStatus{}, fmt.Errorf("tmux pane %s: %w (%w)", id, ErrNoPane, err)
	}
	if err != nil {
		return PaneStatus{}, err
	}
	for _, p := range panes {
		if p.ID == id {
			return p, nil
		}
	}
	return PaneStatus{}, fmt.Errorf("tmux pane %s: %w", id, ErrNoPane)
}

// Alive reports whether pane id exists and its command is still running.
// A missing pane or server is not an error: the answer is false.
func (s *Server) Alive(ctx context.Context, id string) (bool, error) {
	p, err := s.Status(ctx, id)
	if errors.Is(err, ErrNoPane) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return !p.Dead && running(p.PID), nil
}

// PanePID returns the process id of pane id's command.
func (s *Server) PanePID(ctx context.Context, id string) (int, error) {
	p, err := s.Status(ctx, id)
	if err != nil {
		return 0, err
	}
	return p.PID, nil
}

// Kill removes pane id and makes sure its processes are gone: tmux hangs
// up the pane's terminal, and whatever of the pane's session survives that
// gets SIGTERM and, after the grace period, SIGKILL. A pane that is already
// gone is not an error. Processes that left the pane's session (setsid) are
// out of reach.
func (s *Server) Kill(ctx context.Context, id string) error {
	p, err := s.Status(ctx, id)
	if errors.Is(err, ErrNoPane) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("kill tmux pane %s: %w", id, err)
	}
	if _, err := s.run(ctx, "kill-pane", "-t", id); err != nil && !errors.Is(err, ErrNoPane) && !errors.Is(err, ErrNoServer) {
		return fmt.Errorf("kill tmux pane %s: %w", id, err)
	}
	if p.Dead {
		return nil // the pid may belong to someone else by now
	}
	if err := stopSession(ctx, p.PID, s.grace); err != nil {
		return fmt.Errorf("kill tmux pane %s: %w", id, err)
	}
	return nil
}

// Capture returns the text of pane id: the visible screen and, when lines
// is positive, up to that many lines of history above it. Wrapped lines
// are joined and trailing blanks trimmed. For debugging and for showing
// why a teammate died.
func (s *Server) Capture(ctx context.Context, id string, lines int) (string, error) {
	if err := checkPaneID(id); err != nil {
		return "", err
	}
	args := []string{"capture-pane", "-p", "-J", "-t", id}
	if lines > 0 {
		args = append(args, "-S", "-"+strconv.Itoa(lines))
	}
	out, err := s.run(ctx, args...)
	if err != nil {
		return "", fmt.Errorf("capture tmux pane %s: %w", id, err)
	}
	var b strings.Builder
	for line := range strings.Lines(out) {
		b.WriteString(strings.TrimRight(line, " \t\r\n"))
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n") + "\n", nil
}

// SetTitle sets pane id's title (tmux 2.6 or newer).
func (s *Server) SetTitle(ctx context.Context, id, title string) error {
	if err := checkPaneID(id); err != nil {
		return err
	}
	if !s.feat.paneTitle {
		return fmt.Errorf("tmux %s cannot set pane titles; 2.6 or newer can", s.version)
	}
	if strings.ContainsFunc(title, isControl) {
		return fmt.Errorf("tmux pane title %q contains a control character", clip.String(title, 60))
	}
	if _, err := s.run(ctx, "select-pane", "-t", id, "-T", escapeFormat(title)); err != nil {
		return fmt.Errorf("set title of tmux pane %s: %w", id, err)
	}
	return nil
}

// SelectLayout arranges the panes of target's window (a pane id; empty
// means the Server's default target) in layout.
func (s *Server) SelectLayout(ctx context.Context, target string, layout Layout) error {
	if err := layout.check(); err != nil {
		return err
	}
	if target != "" {
		if err := checkPaneID(target); err != nil {
			return err
		}
	}
	args := []string{"select-layout"}
	if t := cmp.Or(target, s.defaultTarget); t != "" {
		args = append(args, "-t", t)
	}
	if _, err := s.run(ctx, append(args, string(layout))...); err != nil {
		return fmt.Errorf("tmux select-layout %s: %w", layout, err)
	}
	return nil
}
