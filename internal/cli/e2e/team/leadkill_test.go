package team

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestATmuxTeammateLeavesWhenItsLeadIsKilled is issue 17 item 4 end to end:
// a lead process with a teammate in a tmux pane of its private tmux server
// is SIGKILLed in the middle of the teammate's turn. The teammate must
// finish the turn, record that it stopped because its lead is gone, leave
// the team file, exit within 5 s, and take the private tmux server with it.
func TestATmuxTeammateLeavesWhenItsLeadIsKilled(t *testing.T) {
	clitest.NeedTmux(t)
	t.Parallel()
	bin := clitest.BuildBinary(t)
	carlWorking, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		first, turn := r.FirstUserText(), r.Turn()
		switch {
		case strings.Contains(first, "carl-job"):
			if turn == 0 {
				once.Do(func() { close(carlWorking) })
				select {
				case <-release:
				case <-r.Context().Done():
				}
			}
			return fakeapi.TextReply("carl: finished the job")
		case strings.Contains(first, "lead-start"):
			switch turn {
			case 0:
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("TeamCreate", map[string]any{"team_name": "headless"})}}
			case 1:
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Agent", map[string]any{"description": "carl",
					"team_name": "headless", "name": "carl", "prompt": "carl-job: work for a while"})}}
			}
			return fakeapi.TextReply("waiting for carl")
		}
		return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "no rule"}}
	}
	h := clitest.New(t, policy)
	h.ShortHome()
	h.Vars["COHORT_TEAMMATE_BIN"] = bin
	run := clitest.StartBinary(t, h, bin, "-p", "lead-start: a team", "--output-format", "json", "--teammate-mode", "tmux", "--cwd", h.Dir)
	lead, errb, exited := run.Cmd, run.Stderr, run.Exited
	select {
	case <-carlWorking:
	case <-exited:
		t.Fatalf("the lead exited early: %s", errb.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("carl never started working: %s", errb.String())
	}
	carl := readStatusFile(t, h, "headless", "carl")
	socks, _ := filepath.Glob(filepath.Join(h.Vars["COHORT_HOME"], "tmux", "*.sock"))
	if len(socks) != 1 {
		t.Fatalf("private tmux sockets: %v", socks)
	}
	out, err := exec.Command("tmux", "-S", socks[0], "display-message", "-p", "#{pid}").Output()
	if err != nil {
		t.Fatalf("tmux server pid: %v", err)
	}
	var serverPID int
	if _, err := fmt.Sscan(strings.TrimSpace(string(out)), &serverPID); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(serverPID, syscall.SIGKILL) })

	if err := lead.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	killedAt := time.Now()
	close(release)
	if !clitest.WaitFor(5*time.Second, func() bool { return !clitest.ProcessRunning(carl.PID) }) {
		t.Fatalf("teammate pid %d still runs %s after its lead was killed", carl.PID, time.Since(killedAt).Round(time.Millisecond))
	}
	st := readStatusFile(t, h, "headless", "carl")
	if st.State != "stopped" {
		t.Fatalf("carl's status: %+v; want stopped", st)
	}
	data, _ := os.ReadFile(filepath.Join(h.Vars["COHORT_HOME"], "teams", "headless", "status", "carl.json"))
	if !strings.Contains(string(data), "lead gone") {
		t.Fatalf("carl's status does not say why it stopped: %s", data)
	}
	if clitest.MemberActive(h.TeamConfig("headless"))["carl"] {
		t.Fatal("carl is still active in the team file")
	}
	if !clitest.WaitFor(5*time.Second, func() bool { return !clitest.ProcessRunning(serverPID) }) {
		t.Fatalf("the private tmux server (pid %d) outlived its last teammate", serverPID)
	}
	if _, err := os.Stat(socks[0]); !os.IsNotExist(err) {
		t.Fatalf("the private tmux socket is still there: %v", err)
	}
}
