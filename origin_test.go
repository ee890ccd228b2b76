package cohort

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/transcript"
)

// TestTranscriptKeepsOrigins: what wakes the lead keeps its origin in the
// transcript: a teammate's message is the teammate's (with its sender), a
// task notification is one, the prompt is the user's (issue 17 item 6).
func TestTranscriptKeepsOrigins(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.rt.on("ALICE-GO", func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			return fakeapi.Reply{Content: []fakeapi.Block{use("SendMessage", map[string]any{"to": "team-lead", "summary": "report", "message": "ALICE-REPORT"})}}
		}
		return fakeapi.TextReply("done")
	})
	e.rt.on("BG-NOTE", func(r *fakeapi.Request) fakeapi.Reply { return fakeapi.TextReply("bg result") })
	e.rt.on("organise", func(r *fakeapi.Request) fakeapi.Reply {
		switch r.Turn() {
		case 0:
			return fakeapi.Reply{Content: []fakeapi.Block{use("TeamCreate", map[string]any{"team_name": "orig"})}}
		case 1:
			return fakeapi.Reply{Content: []fakeapi.Block{
				use("Agent", map[string]any{"description": "alice", "prompt": "ALICE-GO", "name": "alice", "team_name": "orig", "subagent_type": "general-purpose"}),
				use("Agent", map[string]any{"description": "note", "prompt": "BG-NOTE", "run_in_background": true}),
			}}
		}
		return fakeapi.TextReply("noted")
	})
	cfg := e.config()
	cfg.TeammateMode = "in-process"
	s := e.open(cfg)
	collect(t, s, "organise the work")
	s.Close()

	f, err := os.Open(transcript.Path(s.parts.Process.ProjectDir, s.ID()))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var mates, notes, prompts int
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var en transcript.Entry
		if err := json.Unmarshal(sc.Bytes(), &en); err != nil || en.Type != transcript.TypeUser {
			continue
		}
		var text strings.Builder
		for _, b := range en.Message.Content {
			text.WriteString(b.Text)
		}
		switch txt := text.String(); {
		case strings.Contains(txt, "<teammate-message"):
			mates++
			if en.Origin != transcript.OriginTeammate || en.From != "alice" || strings.Contains(txt, "<task-notification") {
				t.Errorf("a teammate's message is recorded as origin %q from %q: %.120s", en.Origin, en.From, txt)
			}
		case strings.Contains(txt, "<task-notification"):
			notes++
			if en.Origin != transcript.OriginNotification {
				t.Errorf("a task notification is recorded as origin %q", en.Origin)
			}
		case strings.Contains(txt, "organise the work"):
			prompts++
			if en.Origin != "" {
				t.Errorf("the prompt is recorded as origin %q", en.Origin)
			}
		}
	}
	if mates == 0 || notes == 0 || prompts != 1 {
		t.Fatalf("transcript has %d teammate messages, %d notifications, %d prompts", mates, notes, prompts)
	}
}
