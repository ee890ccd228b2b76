package binary

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// tmuxPane is one pane of a private tmux server running a command.
type tmuxPane struct {
	t      *testing.T
	socket string
}

func startPane(t *testing.T, dir string, env []string, argv ...string) *tmuxPane {
	t.Helper()
	sockDir, err := os.MkdirTemp("", "ct")
	if err != nil {
		t.Fatal(err)
	}
	p := &tmuxPane{t: t, socket: filepath.Join(sockDir, "s")}
	// The pane stays after the program ends, so that what it said last
	// can be read.
	conf := filepath.Join(sockDir, "conf")
	if err := os.WriteFile(conf, []byte("set -g remain-on-exit on\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		exec.Command("tmux", "-S", p.socket, "kill-server").Run()
		os.RemoveAll(sockDir)
	})
	cmd := append([]string{"env"}, env...)
	cmd = append(cmd, argv...)
	args := append([]string{"-S", p.socket, "-f", conf, "new-session", "-d", "-x", "110", "-y", "32", "-c", dir, "--"}, cmd...)
	if out, err := exec.Command("tmux", args...).CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	return p
}

func (p *tmuxPane) tmux(args ...string) string {
	p.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", p.socket}, args...)...).CombinedOutput()
	if err != nil {
		p.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// keys sends tmux key names (Enter, C-t) or, with literal, text.
func (p *tmuxPane) keys(literal bool, keys ...string) {
	p.t.Helper()
	args := []string{"send-keys", "-t", "0"}
	if literal {
		args = append(args, "-l")
	}
	p.tmux(append(args, keys...)...)
}

// waitFor polls capture-pane until the pane shows what cond wants; tmux
// tells no one when a pane changes, so this is the one wait that looks
// again on a timer, bounded by a deadline.
func (p *tmuxPane) waitFor(what string, cond func(string) bool) string {
	p.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var scr string
	for time.Now().Before(deadline) {
		scr = p.tmux("capture-pane", "-p", "-t", "0")
		if cond(scr) {
			return scr
		}
		<-tick.C
	}
	p.t.Fatalf("the pane never showed %s; it shows:\n%s", what, scr)
	return ""
}

func (p *tmuxPane) waitText(want ...string) string {
	p.t.Helper()
	return p.waitFor(strings.Join(want, ", "), func(s string) bool {
		for _, w := range want {
			if !strings.Contains(s, w) {
				return false
			}
		}
		return true
	})
}

// TestInteractiveInTmux runs the real cohort binary with no -p in a tmux
// pane against the fake API: a prompt typed in, a permission prompt
// answered with a key, three subagents shown running in the tree and then
// done, and Ctrl+C ending the session.
func TestInteractiveInTmux(t *testing.T) {
	clitest.NeedTmux(t)
	t.Parallel()
	bin := clitest.BuildBinary(t)
	release := make(chan struct{})
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		first := r.FirstUserText()
		switch {
		case strings.Contains(first, "SUB-"):
			select {
			case <-release:
			case <-r.Context().Done():
				return fakeapi.FaultReply(fakeapi.ServerError)
			}
			return fakeapi.TextReply("counted")
		case r.Turn() == 0:
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Bash", map[string]any{"command": "touch answered.txt", "description": "mark it"})}}
		case r.Turn() == 1:
			var blocks []fakeapi.Block
			for _, f := range []string{"apples", "pears", "plums"} {
				blocks = append(blocks, clitest.Use("Agent", map[string]any{"description": "count " + f, "prompt": "SUB- count the " + f, "subagent_type": "general-purpose"}))
			}
			return fakeapi.Reply{Content: blocks}
		}
		return fakeapi.TextReply("Fan-out finished.")
	}
	h := clitest.New(t, policy)
	env := append(h.Environ(), "TERM=xterm-256color")
	p := startPane(t, h.Dir, env, bin, "--cwd", h.Dir)
	p.waitText("default mode")
	p.keys(true, "mark and count")
	p.keys(false, "Enter")
	p.waitText("Permission", "touch answered.txt", "always allow")
	p.keys(true, "1")
	p.keys(false, "C-t")
	running := p.waitText("3 running", "count apples", "count pears", "count plums")
	if strings.Count(running, "◐ running") < 3 {
		t.Errorf("the tree does not show three running agents:\n%s", running)
	}
	if _, err := os.Stat(filepath.Join(h.Dir, "answered.txt")); err != nil {
		t.Errorf("the allowed Bash call did not run: %v", err)
	}
	close(release)
	p.waitFor("three agents done", func(s string) bool {
		return strings.Count(s, "✓ done") == 3 && strings.Contains(s, "lead idle · 3 agents · 0 running · 3 done")
	})
	p.keys(false, "C-t")
	p.waitText("Fan-out finished.")
	p.keys(false, "C-c")
	// The pane is dead once the process has gone; its status is known once
	// tmux has reaped it, which it does not always do at once (it then
	// reports no status), so only a status it does report must be 0.
	p.waitFor("the session to end", func(string) bool {
		dead, status, _ := strings.Cut(strings.TrimSpace(p.tmux("display-message", "-p", "-t", "0", "#{pane_dead} #{pane_dead_status}")), " ")
		if dead == "1" && status != "" && status != "0" {
			t.Fatalf("cohort exited with status %s", status)
		}
		return dead == "1"
	})
}
