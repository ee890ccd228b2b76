package permission

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSendMessageToAnySocketAsks is issue 15's finding 8: SendMessage
// {to: "uds:<path>"} connected to any Unix socket of the user without
// approval. Only the socket of a Cohort session ($COHORT_HOME/sessions)
// passes; any other asks, in bypassPermissions too (the sandbox keeps
// commands off such sockets, and that mode skips prompts, never the
// sandbox's bounds); a link in the sessions directory that points
// elsewhere asks too.
func TestSendMessageToAnySocketAsks(t *testing.T) {
	f := newFixture(t)
	sessions := filepath.Join(f.cohortHome, "sessions")
	if err := os.MkdirAll(sessions, 0o700); err != nil {
		t.Fatal(err)
	}
	tmuxSock := f.path("tmux-0/default")
	f.mkdir("tmux-0")
	f.write("tmux-0/default", "")
	if err := os.Symlink(tmuxSock, filepath.Join(sessions, "disguised.sock")); err != nil {
		t.Fatal(err)
	}
	send := func(to string) Request { return Request{Tool: "SendMessage", Input: input("to", to, "message", "hi")} }
	tests := []struct {
		to   string
		mode Mode
		want Behavior
	}{
		{"alice", ModeDefault, Allow},
		{"team-lead", ModeDefault, Allow},
		{"uds:" + filepath.Join(sessions, "0b1c2d3e.sock"), ModeDefault, Allow},
		{"uds:" + tmuxSock, ModeDefault, Ask},
		{"uds:/var/run/docker.sock", ModeDefault, Ask},
		{"uds:" + filepath.Join(sessions, "disguised.sock"), ModeDefault, Ask},
		{"uds:" + filepath.Join(sessions, "..", "tmux.sock"), ModeDefault, Ask},
		{"uds:relative.sock", ModeDefault, Ask},
		{"uds:" + tmuxSock, ModeAcceptEdits, Ask},
		{"uds:" + tmuxSock, ModeDontAsk, Deny},
		{"uds:" + tmuxSock, ModeBypassPermissions, Ask},
		{"uds:" + filepath.Join(sessions, "disguised.sock"), ModeBypassPermissions, Ask},
		{"uds:" + filepath.Join(sessions, "0b1c2d3e.sock"), ModeBypassPermissions, Allow},
	}
	for _, tt := range tests {
		d := f.decide(f.checker(tt.mode), send(tt.to))
		if d.Behavior != tt.want {
			t.Errorf("SendMessage to %s in %s: %s (%s), want %s", tt.to, tt.mode, d.Behavior, d.Reason, tt.want)
		}
	}
}
