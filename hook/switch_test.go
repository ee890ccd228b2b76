package hook

import (
	"path/filepath"
	"testing"

	"github.com/cohort-dev/cohort/tool"
)

// TestInstructionsLoadedInput: each memory file's hook reads Claude
// Code's fields, and the matcher is the load reason.
func TestInstructionsLoadedInput(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "in.json")
	other := filepath.Join(dir, "other.json")
	r := newRunner(t, Config{},
		spec{event: InstructionsLoaded, matcher: "session_start", cmd: "cat > " + log},
		spec{event: InstructionsLoaded, matcher: "compact", cmd: "cat > " + other})
	s := r.For(Subject{Caller: tool.Caller{Cwd: dir}, SessionID: "s1", TranscriptPath: "/t.jsonl"})
	out := s.InstructionsLoaded(t.Context(), MemoryFile{Path: "/p/CLAUDE.md", Type: MemoryProject, Reason: LoadSessionStart})
	if out.Ran != 1 {
		t.Fatalf("ran %d hooks, want the session_start one only", out.Ran)
	}
	got := readJSON(t, log)
	for k, want := range map[string]any{"hook_event_name": "InstructionsLoaded", "file_path": "/p/CLAUDE.md",
		"memory_type": "Project", "load_reason": "session_start", "session_id": "s1", "cwd": dir} {
		if got[k] != want {
			t.Errorf("%s = %v, want %v", k, got[k], want)
		}
	}
}

// TestModelSwitchHooks: requested_model is null when the session's
// first model is asked for (TestInputs checks the other fields);
// PreModelSwitch refuses the switch by exit 2, decision "block" or permissionDecision
// "deny" or "ask"; "allow", no answer or a broken one let it go ahead.
// PostModelSwitch cannot refuse.
func TestModelSwitchHooks(t *testing.T) {
	sw := ModelSwitch{From: "claude-sonnet-4-5", To: "claude-haiku-4-5", Source: SwitchSDK, ContextTokens: 21867,
		CacheWarm: true, CacheTTL: "5m", EstimatedUSD: 0.0273, Pricing: "catalog"}
	t.Run("first model", func(t *testing.T) {
		dir := t.TempDir()
		log := filepath.Join(dir, "in.json")
		r := newRunner(t, Config{}, spec{event: PostModelSwitch, cmd: "cat > " + log})
		r.For(Subject{Caller: tool.Caller{Cwd: dir}}).PostModelSwitch(t.Context(), sw)
		if got, ok := readJSON(t, log)["requested_model"]; !ok || got != nil {
			t.Errorf("requested_model = %v (present %v), want null", got, ok)
		}
	})
	tests := []struct {
		name, body string
		block      bool
		reason     string
	}{
		{"exit 2", `echo "not during the release" >&2; exit 2`, true, "not during the release"},
		{"block", `echo '{"decision": "block", "reason": "stay on sonnet"}'`, true, "stay on sonnet"},
		{"deny", `echo '{"hookSpecificOutput": {"hookEventName": "PreModelSwitch", "permissionDecision": "deny", "permissionDecisionReason": "cache is warm"}}'`, true, "cache is warm"},
		{"ask refuses", `echo '{"hookSpecificOutput": {"hookEventName": "PreModelSwitch", "permissionDecision": "ask"}}'`, true, ""},
		{"allow", `echo '{"hookSpecificOutput": {"hookEventName": "PreModelSwitch", "permissionDecision": "allow"}}'`, false, ""},
		{"silent", `true`, false, ""},
		{"not understood", `echo '{"hookSpecificOutput": {"hookEventName": "PreModelSwitch", "permissionDecision": "maybe"}}'`, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			cmd := script(t, dir, "h.sh", "cat >/dev/null\n"+tt.body)
			r := newRunner(t, Config{}, spec{event: PreModelSwitch, cmd: cmd}, spec{event: PostModelSwitch, cmd: cmd})
			s := r.For(Subject{Caller: tool.Caller{Cwd: dir}})
			pre := s.PreModelSwitch(t.Context(), sw)
			want := tt.reason
			if tt.name == "ask refuses" {
				want = `the PreModelSwitch hook "` + cmd + `" refused the switch without saying why`
			}
			if pre.Block != tt.block || pre.Reason != want {
				t.Errorf("PreModelSwitch: block %v reason %q, want %v %q", pre.Block, pre.Reason, tt.block, want)
			}
			if tt.name == "not understood" && len(pre.Errors) == 0 {
				t.Error("an answer that is not understood is reported")
			}
			if post := s.PostModelSwitch(t.Context(), sw); post.Block {
				t.Errorf("PostModelSwitch blocked: %+v", post)
			}
		})
	}
}
