package team

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// startLeader runs a helper process that claims team name for session and
// holds the lead until it is killed.
func startLeader(t *testing.T, s *Store, name, session string) *helper {
	t.Helper()
	hs := startHelpers(t, 1, func(int) []string {
		return []string{envHelper + "=lead", envRoot + "=" + s.Root(), envTeam + "=" + name, envOwner + "=" + session}
	})
	h := hs[0]
	if _, err := io.WriteString(h.stdin, "go\n"); err != nil {
		t.Fatal(err)
	}
	if line, err := h.out.ReadString('\n'); err != nil || line != "led\n" {
		t.Fatalf("leader: %q, %v; stderr: %s", line, err, h.cmd.Stderr)
	}
	return h
}

func kill(t *testing.T, h *helper) {
	t.Helper()
	if err := h.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = h.cmd.Wait()
}

// TestATeamWhoseLeadWasKilledIsOrphanedAndCanBeReplaced is issue 17 item 3
// at the store: a lead SIGKILLed leaves its team orphaned; another session
// may claim the name (a new, empty team) and nobody may while a lead runs.
func TestATeamWhoseLeadWasKilledIsOrphanedAndCanBeReplaced(t *testing.T) {
	s := newStore(t)
	h := startLeader(t, s, "t1", "sess-old")
	if _, err := s.AddMember(t.Context(), "t1", MemberSpec{Name: "alice", AgentType: "general-purpose"}); err != nil {
		t.Fatal(err)
	}
	info, err := s.LeadStatus("t1")
	if err != nil || info.State != Led || info.SessionID != "sess-old" || info.PID != h.cmd.Process.Pid {
		t.Fatalf("while the leader runs: %+v, %v", info, err)
	}
	if _, err := s.Claim(t.Context(), CreateSpec{Name: "t1", LeadSessionID: "sess-new"}); !errors.Is(err, ErrLed) || !strings.Contains(err.Error(), "sess-old") {
		t.Fatalf("claim of a led team: %v; want ErrLed naming the session", err)
	}
	if err := s.DeleteOrphaned(t.Context(), "t1"); !errors.Is(err, ErrLed) {
		t.Fatalf("delete of a led team: %v; want ErrLed", err)
	}

	kill(t, h)
	if info, err := s.LeadStatus("t1"); err != nil || info.State != Orphaned || info.SessionID != "sess-old" {
		t.Fatalf("after SIGKILL: %+v, %v; want orphaned, naming the old session", info, err)
	}
	c, err := s.Claim(t.Context(), CreateSpec{Name: "t1", Description: "new", LeadSessionID: "sess-new"})
	if err != nil {
		t.Fatalf("claim of an orphaned team: %v", err)
	}
	defer c.Lead.Release()
	if c.How != ClaimReplaced || c.Previous.SessionID != "sess-old" {
		t.Fatalf("claim: %s, previous %+v; want replaced", c.How, c.Previous)
	}
	tm, err := s.Load("t1")
	if err != nil {
		t.Fatal(err)
	}
	if tm.Config.Description != "new" || tm.Config.LeadSessionID != "sess-new" || len(tm.Config.Members) != 1 {
		t.Fatalf("replaced team file: %+v", tm.Config)
	}
	if info, _ := s.LeadStatus("t1"); info.State != Led || info.SessionID != "sess-new" || info.PID != os.Getpid() {
		t.Fatalf("after the claim: %+v", info)
	}
	if _, err := s.Mailbox("t1"); err != nil {
		t.Fatalf("the new team's mailbox: %v", err)
	}
}

// TestAResumedSessionAdoptsItsOrphanedTeam: the same session claiming its
// own orphaned team gets it back as it was.
func TestAResumedSessionAdoptsItsOrphanedTeam(t *testing.T) {
	s := newStore(t)
	c, err := s.Claim(t.Context(), CreateSpec{Name: "t1", Description: "mine", LeadSessionID: "sess-1"})
	if err != nil || c.How != ClaimCreated {
		t.Fatalf("first claim: %+v, %v", c, err)
	}
	if _, err := s.AddMember(t.Context(), "t1", MemberSpec{Name: "alice", AgentType: "general-purpose"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetActive(t.Context(), "t1", LeadName, false); err != nil {
		t.Fatal(err)
	}
	c.Lead.Release()
	again, err := s.Claim(t.Context(), CreateSpec{Name: "t1", Description: "other", LeadSessionID: "sess-1"})
	if err != nil {
		t.Fatal(err)
	}
	defer again.Lead.Release()
	if again.How != ClaimAdopted || again.Team.Config.Description != "mine" {
		t.Fatalf("re-claim: %s %+v", again.How, again.Team.Config)
	}
	if _, ok := again.Team.Config.Member("alice"); !ok {
		t.Fatal("adopted team lost its members")
	}
	if m, _ := again.Team.Config.Member(LeadName); !m.IsActive {
		t.Fatal("adopted team's lead is not active again")
	}
}

// TestAnOrphanedTeamCanBeDeletedAndAHalfMadeOneTakenOver covers deleting an
// orphaned team and a directory left by a creation cut short (no
// config.json): it is listed by ListAll and claimable.
func TestAnOrphanedTeamCanBeDeletedAndAHalfMadeOneTakenOver(t *testing.T) {
	s := newStore(t)
	mustCreate(t, s, "old") // Create takes no lead: orphaned from the start
	if info, _ := s.LeadStatus("old"); info.State != Orphaned {
		t.Fatalf("unled team: %+v", info)
	}
	if err := s.DeleteOrphaned(t.Context(), "old"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Load("old"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(s.Root(), "half", InboxesDir), 0o700); err != nil {
		t.Fatal(err)
	}
	names, err := s.ListAll()
	if err != nil || len(names) != 1 || names[0] != "half" {
		t.Fatalf("ListAll: %v, %v", names, err)
	}
	c, err := s.Claim(context.Background(), CreateSpec{Name: "half", LeadSessionID: "s"})
	if err != nil || c.How != ClaimReplaced {
		t.Fatalf("claim of a half-made team: %+v, %v", c, err)
	}
	c.Lead.Release()
	if _, err := s.Load("half"); err != nil {
		t.Fatal(err)
	}
}
