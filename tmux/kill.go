package tmux

import (
	"context"
	"errors"
	"fmt"
	"os"
)

// KillServer stops the tmux server listening on socket (`tmux -S socket
// kill-server`) and removes the socket; no server there is not an error.
// It is for a private server whose owner is gone — a teammate whose lead
// was killed takes the lead's private server down as it leaves — and does
// not wait for the panes' processes: the caller may be one of them.
func KillServer(ctx context.Context, socket string) error {
	bin, _, err := detect(ctx, "", DefaultTimeout)
	if err != nil {
		return err
	}
	_, err = runTmux(ctx, bin, cleanEnv(nil), DefaultTimeout, []string{"-S", socket, "kill-server"})
	if err != nil && !errors.Is(err, ErrNoServer) {
		return fmt.Errorf("kill tmux server %s: %w", socket, err)
	}
	if err := os.Remove(socket); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// SocketOf returns the socket of the tmux server a pane runs in, from the
// value of its $TMUX ("socket,pid,session"); "" when tmuxVar is empty or
// malformed.
func SocketOf(tmuxVar string) string {
	s, err := parseTMUX(tmuxVar)
	if err != nil {
		return ""
	}
	return s
}
