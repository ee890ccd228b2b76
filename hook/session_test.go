package hook

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/tool/file"
)

// TestSessionStart: what the hooks print is context for the model's first
// turn (plain stdout as Claude Code reads it, or additionalContext); the
// matcher selects the source; exit 2 cannot stop a session from starting
// and is only reported.
func TestSessionStart(t *testing.T) {
	dir := t.TempDir()
	plain := script(t, dir, "plain.sh", `cat >/dev/null; echo "Branch: main, 2 files changed"`)
	ctxJSON := script(t, dir, "ctx.sh", `cat >/dev/null; echo '{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "open issue: #12"}}'`)
	resumeOnly := script(t, dir, "resume.sh", `cat >/dev/null; echo "welcome back"`)
	refuse := script(t, dir, "refuse.sh", `cat >/dev/null; echo "not today" >&2; exit 2`)
	r := newRunner(t, Config{},
		spec{event: SessionStart, cmd: plain},
		spec{event: SessionStart, matcher: "startup", cmd: ctxJSON},
		spec{event: SessionStart, matcher: "resume", cmd: resumeOnly},
		spec{event: SessionStart, matcher: "startup|resume", cmd: refuse})
	got := r.For(Subject{Caller: tool.Caller{Cwd: dir}}).SessionStart(t.Context(), SourceStartup, "claude-sonnet-4-5")
	want := Outcome{Ran: 3, Context: []string{"Branch: main, 2 files changed", "open issue: #12"}, Messages: []string{"not today"}}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("startup (-want +got):\n%s", diff)
	}
	got = r.For(Subject{Caller: tool.Caller{Cwd: dir}}).SessionStart(t.Context(), SourceResume, "")
	if !slices.Contains(got.Context, "welcome back") || slices.Contains(got.Context, "open issue: #12") {
		t.Errorf("resume context = %q", got.Context)
	}
}

// TestSessionEndAndNotification: SessionEnd's matcher is the reason and
// Notification's the notification type; neither can block.
func TestSessionEndAndNotification(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	rec := func(name string) string {
		return script(t, dir, name+".sh", `in=$(cat); echo "`+name+` $in" >> `+log+`; exit 2`)
	}
	r := newRunner(t, Config{},
		spec{event: SessionEnd, matcher: "clear", cmd: rec("end-clear")},
		spec{event: SessionEnd, cmd: rec("end-any")},
		spec{event: Notification, matcher: "permission_prompt", cmd: rec("notify-perm")},
		spec{event: Notification, matcher: "idle_prompt", cmd: rec("notify-idle")})
	s := r.For(Subject{Caller: tool.Caller{Cwd: dir}})
	if o := s.SessionEnd(t.Context(), EndOther); o.Ran != 1 || o.Block {
		t.Errorf("SessionEnd(other) = %+v; want the unfiltered hook only, and no block", o)
	}
	if o := s.Notification(t.Context(), Notice{Type: NoticePermission, Message: "Cohort needs your permission to use Bash"}); o.Ran != 1 || o.Block {
		t.Errorf("Notification = %+v", o)
	}
	lines := strings.Split(strings.TrimSpace(readFile(t, log)), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "end-any ") || !strings.Contains(lines[0], `"reason":"other"`) ||
		!strings.HasPrefix(lines[1], "notify-perm ") || !strings.Contains(lines[1], `"notification_type":"permission_prompt"`) ||
		!strings.Contains(lines[1], `"message":"Cohort needs your permission to use Bash"`) {
		t.Errorf("hooks ran:\n%s", strings.Join(lines, "\n"))
	}
}

// TestPreCompactSkipsAutomaticCompaction runs an engine whose history
// crosses the compaction threshold with a PreCompact hook that blocks: no
// summary is asked for, the hook saw trigger "auto", and the conversation
// goes on. Without the hook the same conversation compacts.
func TestPreCompactSkipsAutomaticCompaction(t *testing.T) {
	for _, blocked := range []bool{true, false} {
		dir := t.TempDir()
		notes := filepath.Join(dir, "notes.txt")
		writeFileT(t, notes, "n\n")
		var specs []spec
		if blocked {
			specs = append(specs, spec{event: PreCompact, matcher: "auto",
				cmd: script(t, dir, "keep.sh", `cat > `+filepath.Join(dir, "in.json")+`; echo "keep the full history" >&2; exit 2`)})
		}
		r := newRunner(t, Config{}, specs...)
		var mu sync.Mutex
		summaries, turns := 0, 0
		model := replyFunc(func(req *llm.Request) *llm.Response {
			mu.Lock()
			defer mu.Unlock()
			if strings.Contains(llm.JoinText(req.Messages[len(req.Messages)-1].Content), "about to be compacted") {
				summaries++
				return &llm.Response{Content: []llm.Block{llm.Text("SUMMARY")}, StopReason: llm.StopEndTurn}
			}
			turns++
			u := llm.Usage{InputTokens: int64(100 * turns), OutputTokens: 10}
			if turns <= 8 {
				return &llm.Response{Content: []llm.Block{use("toolu_"+string(rune('a'+turns)), "Read", map[string]string{"file_path": notes})},
					StopReason: llm.StopToolUse, Usage: u}
			}
			return &llm.Response{Content: []llm.Block{llm.Text("finished")}, StopReason: llm.StopEndTurn, Usage: u}
		})
		a := engine.New(engine.Config{Model: model, Tools: []tool.Tool{file.NewRead(file.ReadConfig{})}, Env: tool.Env{Caller: tool.Caller{Cwd: dir}},
			Hooks: r.For(Subject{Caller: tool.Caller{Cwd: dir}}), Compaction: engine.Compaction{ContextWindow: 1000, Threshold: 0.8, KeepRecent: 4}})
		res, err := a.Send(t.Context(), []llm.Block{llm.Text("read eight times")}, "")
		if err != nil || res.Text != "finished" {
			t.Fatalf("blocked=%v: %+v, %v", blocked, res, err)
		}
		switch {
		case blocked && summaries != 0:
			t.Errorf("the PreCompact hook blocked, yet the history was compacted %d times", summaries)
		case !blocked && summaries == 0:
			t.Errorf("without the hook the conversation never compacted (the test does not reach the threshold)")
		}
		if blocked {
			if in := readJSON(t, filepath.Join(dir, "in.json")); in["trigger"] != "auto" || in["custom_instructions"] != "" {
				t.Errorf("PreCompact input = %v", in)
			}
		}
	}
}

// TestManualCompactionIgnoresTheBlock: a manual compaction runs the hooks
// but goes ahead.
func TestManualCompactionIgnoresTheBlock(t *testing.T) {
	dir := t.TempDir()
	r := newRunner(t, Config{}, spec{event: PreCompact, cmd: script(t, dir, "keep.sh", `cat >/dev/null; exit 2`)})
	s := r.For(Subject{Caller: tool.Caller{Cwd: dir}})
	if !s.PreCompact(t.Context(), engine.CompactAuto) {
		t.Error("an automatic compaction was not skipped")
	}
	if s.PreCompact(t.Context(), engine.CompactManual) {
		t.Error("a manual compaction was skipped")
	}
}

// recordingPrompter is the approver behind the hooks: it counts the
// prompts that reach it and denies them.
type recordingPrompter struct {
	mu   sync.Mutex
	seen []permission.PromptRequest
}

func (p *recordingPrompter) Prompt(_ context.Context, req permission.PromptRequest) (permission.PromptDecision, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seen = append(p.seen, req)
	return permission.PromptDecision{Message: "the user said no"}, nil
}

// TestPermissionRequest: the hooks answer permission prompts for the user:
// allow (rewriting the input; an allow given with nobody asked, NoPerson,
// so it opens nothing that needs a person), deny with a message, exit 2, or
// nothing, in which case the prompt reaches the approver, after a
// Notification.
func TestPermissionRequest(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name     string
		body     string
		want     permission.PromptDecision
		prompted bool
	}{
		{"allow with a rewrite", `echo '{"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow", "updatedInput": {"command": "make test"}}}}'`,
			permission.PromptDecision{Allow: true, UpdatedInput: json.RawMessage(`{"command": "make test"}`), NoPerson: true}, false},
		{"deny with a message", `echo '{"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "deny", "message": "no deploys on Friday"}}}'`,
			permission.PromptDecision{Message: "no deploys on Friday"}, false},
		{"exit 2 denies", `echo "blocked by policy" >&2; exit 2`, permission.PromptDecision{Message: "blocked by policy"}, false},
		{"no opinion asks the user", `echo '{}'`, permission.PromptDecision{Message: "the user said no"}, true},
		{"a behavior not understood asks the user", `echo '{"hookSpecificOutput": {"decision": {"behavior": "maybe"}}}'`,
			permission.PromptDecision{Message: "the user said no"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "notified")
			r := newRunner(t, Config{},
				spec{event: PermissionRequest, matcher: "Bash", cmd: script(t, dir, strings.ReplaceAll(tt.name, " ", "-")+".sh", "cat >/dev/null\n"+tt.body)},
				spec{event: Notification, matcher: "permission_prompt", cmd: "cat > " + log})
			next := &recordingPrompter{}
			p := Prompter{Hooks: r.For(Subject{Caller: tool.Caller{Cwd: dir}}), Next: next, Notify: true}
			got, err := p.Prompt(t.Context(), permission.PromptRequest{ToolName: "Bash", Input: json.RawMessage(`{"command": "make deploy"}`)})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("decision (-want +got):\n%s", diff)
			}
			if (len(next.seen) == 1) != tt.prompted {
				t.Errorf("the approver was asked %d times, want prompted=%v", len(next.seen), tt.prompted)
			}
			if tt.prompted && !strings.Contains(readFile(t, log), `"notification_type":"permission_prompt"`) {
				t.Errorf("no Notification before the prompt")
			}
		})
	}
}
