package team

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestATeamOutlivesItsSessionAsOrphaned is issue 17 item 3: after a session
// that created team t1 has ended, the next session can create t1 again
// (taking the orphaned team over), spawn into it, and delete it; and
// `cohort teams` lists the team and its state and removes it.
func TestATeamOutlivesItsSessionAsOrphaned(t *testing.T) {
	t.Parallel()
	rec := &clitest.Seen{}
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		first, turn := r.FirstUserText(), r.Turn()
		if turn > 0 {
			// Keyed by the prompt: the first message's last line (the
			// lead's memory reminder comes before it).
			rec.Add(first[strings.LastIndex(first, "\n")+1:], r.LastUserText())
		}
		switch {
		case strings.Contains(first, "make-team"):
			if turn == 0 {
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("TeamCreate", map[string]any{"team_name": "t1", "description": "first"})}}
			}
			return fakeapi.TextReply("made")
		case strings.Contains(first, "reuse-team"):
			switch turn {
			case 0:
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("TeamCreate", map[string]any{"team_name": "t1", "description": "second"})}}
			case 1:
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Agent", map[string]any{"description": "alice", "team_name": "t1", "name": "alice", "prompt": "alice-task: report"})}}
			}
			return fakeapi.TextReply("reused")
		case strings.Contains(first, "alice-task"):
			if turn == 0 {
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("SendMessage", map[string]any{"to": "team-lead", "message": "alice reporting"})}}
			}
			return fakeapi.TextReply("alice done")
		case strings.Contains(first, "drop-team"):
			if turn == 0 {
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("TeamDelete", map[string]any{"team_name": "t1"})}}
			}
			return fakeapi.TextReply("dropped")
		}
		return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "no rule"}}
	}
	h := clitest.New(t, policy)
	run := func(prompt string) {
		t.Helper()
		out, errOut, code := h.Run("-p", prompt, "--output-format", "json", "--teammate-mode", "in-process")
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s\n%s", prompt, code, out, errOut)
		}
	}
	run("make-team")
	if got := rec.All("make-team"); !strings.Contains(got, "Team t1 created") {
		t.Fatalf("first session could not create t1: %s", got)
	}

	run("reuse-team")
	got := rec.All("reuse-team")
	if !strings.Contains(got, "Team t1 created") {
		t.Fatalf("the second session could not take the orphaned team over; it saw:\n%s", got)
	}
	if !strings.Contains(got, "alice reporting") {
		t.Fatalf("the teammate spawned into the taken-over team never reported; the lead saw:\n%s", got)
	}
	if d := h.TeamConfig("t1")["description"]; d != "second" {
		t.Fatalf("team file description %v; want the new team's", d)
	}

	out, errOut, code := h.Run("teams")
	if code != 0 || !strings.Contains(out, "t1") || !strings.Contains(out, "orphaned") {
		t.Fatalf("cohort teams: exit %d\n%s\n%s", code, out, errOut)
	}

	out, errOut, code = h.Run("teams", "rm", "nosuch")
	if code != 1 || !strings.Contains(errOut, "nosuch") {
		t.Fatalf("cohort teams rm of a missing team: exit %d\n%s\n%s", code, out, errOut)
	}

	run("drop-team")
	if got := rec.All("drop-team"); !strings.Contains(got, "Team t1 deleted") {
		t.Fatalf("a third session could not delete the orphaned team; it saw:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(h.Vars["COHORT_HOME"], "teams", "t1")); !os.IsNotExist(err) {
		t.Fatalf("team directory still there: %v", err)
	}

	run("make-team")
	out, errOut, code = h.Run("teams", "prune")
	if code != 0 || !strings.Contains(out, "removed t1") {
		t.Fatalf("cohort teams prune: exit %d\n%s\n%s", code, out, errOut)
	}
	if out, _, _ := h.Run("teams"); !strings.Contains(out, "no teams") {
		t.Fatalf("after prune: %s", out)
	}
}
