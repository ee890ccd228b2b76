package hook

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/tool"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestPostToolUse(t *testing.T) {
	dir := t.TempDir()
	ctxHook := script(t, dir, "ctx.sh", `cat >/dev/null; echo '{"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "gofmt rewrote main.go"}}'`)
	complain := script(t, dir, "complain.sh", `cat >/dev/null; echo "vet: unused variable x" >&2; exit 2`)
	block := script(t, dir, "block.sh", `cat >/dev/null; echo '{"decision": "block", "reason": "run the tests next"}'`)
	quiet := script(t, dir, "quiet.sh", `cat >/dev/null; echo "formatted"`)
	r := newRunner(t, Config{},
		spec{event: PostToolUse, matcher: "Write|Edit", cmd: ctxHook},
		spec{event: PostToolUse, matcher: "Write", cmd: complain},
		spec{event: PostToolUse, matcher: "Write", cmd: block},
		spec{event: PostToolUse, matcher: "*", cmd: quiet},
	)
	res := tool.Text("wrote 3 lines")
	got := r.For(Subject{Caller: tool.Caller{Cwd: dir}}).PostToolUse(t.Context(), call(dir, "Write", `{"file_path": "main.go"}`), &res)
	want := "[PostToolUse hook] gofmt rewrote main.go\n[PostToolUse hook] vet: unused variable x\n[PostToolUse hook] run the tests next"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("appended text (-want +got):\n%s", diff)
	}
	if got := r.For(Subject{Caller: tool.Caller{Cwd: dir}}).PostToolUse(t.Context(), call(dir, "Read", `{}`), &res); got != "" {
		t.Errorf("Read: %q, want nothing (plain stdout is not for the model)", got)
	}
}

func TestUserPromptSubmit(t *testing.T) {
	tests := []struct {
		name string
		body string
		want Outcome
	}{
		{"block by exit 2", `echo "no secrets in prompts" >&2; exit 2`,
			Outcome{Ran: 1, Block: true, Reason: "no secrets in prompts"}},
		{"block by json", `echo '{"decision": "block", "reason": "mentions a password"}'`,
			Outcome{Ran: 1, Block: true, Reason: "mentions a password"}},
		{"plain stdout is context", `echo "Current branch: main"`,
			Outcome{Ran: 1, Context: []string{"Current branch: main"}}},
		{"json context", `echo '{"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "ticket ABC-1"}, "systemMessage": "linked ticket"}'`,
			Outcome{Ran: 1, Context: []string{"ticket ABC-1"}, Messages: []string{"linked ticket"}}},
		{"continue false", `echo '{"continue": false, "stopReason": "maintenance window"}'`,
			Outcome{Ran: 1, Stop: true, StopReason: "maintenance window"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			r := newRunner(t, Config{}, spec{event: UserPromptSubmit, matcher: "ignored", cmd: script(t, dir, "h.sh", "cat >/dev/null\n"+tt.body)})
			got := r.For(Subject{Caller: tool.Caller{Cwd: dir}}).UserPromptSubmit(t.Context(), "deploy it")
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStopAndOtherEvents(t *testing.T) {
	dir := t.TempDir()
	exit2 := script(t, dir, "exit2.sh", `cat >/dev/null; echo "not done: 2 tests fail" >&2; exit 2`)
	blockJSON := script(t, dir, "block.sh", `cat >/dev/null; echo '{"decision": "block", "reason": "update the changelog"}'`)
	tests := []struct {
		event Event
		cmd   string
		fire  func(*Scope) Outcome
		want  Outcome
	}{
		{Stop, blockJSON, func(s *Scope) Outcome { return s.Stop(t.Context(), StopState{Active: false}) },
			Outcome{Ran: 1, Block: true, Reason: "update the changelog"}},
		{Stop, exit2, func(s *Scope) Outcome { return s.Stop(t.Context(), StopState{Active: true}) },
			Outcome{Ran: 1, Block: true, Reason: "not done: 2 tests fail"}},
		{SubagentStop, exit2, func(s *Scope) Outcome { return s.SubagentStop(t.Context(), StopState{Active: false}) },
			Outcome{Ran: 1, Block: true, Reason: "not done: 2 tests fail"}},
		{TeammateIdle, exit2, func(s *Scope) Outcome { return s.TeammateIdle(t.Context(), "alice", "t1") },
			Outcome{Ran: 1, Block: true, Reason: "not done: 2 tests fail"}},
		{TaskCompleted, blockJSON, func(s *Scope) Outcome { return s.TaskCompleted(t.Context(), Task{ID: "a1", Status: "completed"}) },
			Outcome{Ran: 1, Block: true, Reason: "update the changelog"}},
		{WorktreeCreate, exit2, func(s *Scope) Outcome { return s.WorktreeCreate(t.Context(), "/r/.cohort/worktrees/x", "cohort/x") },
			Outcome{Ran: 1, Block: true, Reason: "not done: 2 tests fail"}},
		// These cannot block: the text goes to the user.
		{WorktreeRemove, exit2, func(s *Scope) Outcome { return s.WorktreeRemove(t.Context(), "/r/w", "cohort/w") },
			Outcome{Ran: 1, Messages: []string{"not done: 2 tests fail"}}},
		{SubagentStart, blockJSON, func(s *Scope) Outcome { return s.SubagentStart(t.Context(), "look around") },
			Outcome{Ran: 1, Messages: []string{"update the changelog"}}},
	}
	for _, tt := range tests {
		t.Run(string(tt.event), func(t *testing.T) {
			r := newRunner(t, Config{}, spec{event: tt.event, cmd: tt.cmd})
			got := tt.fire(r.For(Subject{Caller: tool.Caller{Cwd: dir, Type: "general-purpose", Depth: 1}}))
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
		})
	}
}

// TestInputs records what every event's hook reads on stdin and in its
// environment.
func TestInputs(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	rec := script(t, dir, "rec.sh", `cat > "`+out+`/$1.json"
printf '%s\n%s\n%s\n' "$COHORT_PROJECT_DIR" "$CLAUDE_PROJECT_DIR" "$(pwd)" > "`+out+`/$1.env"`)
	var specs []spec
	for _, ev := range Events {
		specs = append(specs, spec{event: ev, cmd: rec + " " + string(ev)})
	}
	if err := mkdir(out); err != nil {
		t.Fatal(err)
	}
	r := newRunner(t, Config{ProjectDir: "/proj", NewID: func() string { return "prompt-1" }}, specs...)
	s := r.For(Subject{SessionID: "s1", TranscriptPath: "/t/s1.jsonl", Caller: tool.Caller{Cwd: dir, Mode: "acceptEdits",
		ID: "a7", Type: "reviewer", Depth: 2, ParentToolUseID: "toolu_parent"}})
	ctx := t.Context()
	c := call(dir, "Edit", `{"file_path": "a.go", "old_string": "x", "new_string": "y"}`)
	s.SessionStart(ctx, SourceStartup, "claude-sonnet-4-5")
	s.PreToolUse(ctx, c) // before the first prompt: no prompt_id
	s.UserPromptSubmit(ctx, "fix it")
	c.Duration = 1500 * time.Millisecond
	ok := tool.Text("done")
	s.PostToolUse(ctx, c, &ok)
	bad := tool.Result{Content: []llm.Block{llm.Text("old_string not found")}, IsError: true}
	s.PostToolUse(ctx, c, &bad)
	s.PostToolBatch(ctx, []engine.BatchCall{{ID: "toolu_1", Name: "Edit", Input: c.Input, Result: &ok}, {ID: "toolu_3", Name: "Glob", Result: &bad}})
	s.Stop(ctx, StopState{Active: true, LastMessage: "All done.", Background: []BackgroundTask{{ID: "b1", Type: "local_bash", Status: "running", Description: "go test", Command: "go test ./..."}}})
	s.StopFailure(ctx, Failure{Kind: "rate_limit", Details: "model API error 429", LastMessage: "Working on it"})
	s.Interrupt(ctx, InterruptUser, InterruptStop, ViaTerminal)
	s.SubagentStart(ctx, "review a.go")
	s.SubagentStop(ctx, StopState{Active: false})
	s.TaskCreated(ctx, Task{ID: "4", Subject: "Check the notes", Description: "Read notes.txt", TeammateName: "alice", TeamName: "t1"})
	s.PostCompact(ctx, "manual", "The user asked for a fix.")
	moved := filepath.Join(dir, "moved")
	if err := mkdir(moved); err != nil {
		t.Fatal(err)
	}
	s.CwdChanged(ctx, dir, moved)
	s.TeammateIdle(ctx, "alice", "t1")
	s.TaskCompleted(ctx, Task{ID: "b2", Status: "failed", Summary: `Agent "x" failed`})
	s.WorktreeCreate(ctx, "/r/.cohort/worktrees/w", "cohort/w")
	s.WorktreeRemove(ctx, "/r/.cohort/worktrees/w", "cohort/w")
	s.Notification(ctx, Notice{Message: "Cohort needs your permission to use Bash", Title: "Permission needed", Type: NoticePermission})
	s.PreCompact(ctx, "auto")
	s.PermissionRequest(ctx, permission.PromptRequest{ToolName: "Bash", Input: json.RawMessage(`{"command": "make"}`), ToolUseID: "toolu_2",
		Suggestions: []permission.RuleUpdate{{Type: "addRules", Behavior: permission.Allow, Destination: "localSettings",
			Rules: []permission.RuleValue{{ToolName: "Bash", RuleContent: "make:*"}}}}})
	s.InstructionsLoaded(ctx, MemoryFile{Path: "/p/CLAUDE.md", Type: MemoryProject, Reason: LoadSessionStart})
	sw := ModelSwitch{From: "claude-sonnet-4-5", To: "claude-haiku-4-5", Requested: "haiku", Source: SwitchSDK,
		ContextTokens: 21867, CacheWarm: true, CacheTTL: "5m", EstimatedUSD: 0.027, Pricing: "catalog"}
	s.PreModelSwitch(ctx, sw)
	s.PostModelSwitch(ctx, sw)
	s.UserPromptExpansion(ctx, Expansion{Name: "greet", Args: "the team", Source: "projectSettings", Prompt: "/greet the team"})
	s.SessionEnd(ctx, EndOther)

	common := func(ev Event, extra map[string]any) map[string]any {
		m := map[string]any{"session_id": "s1", "transcript_path": "/t/s1.jsonl", "cwd": dir,
			"hook_event_name": string(ev), "permission_mode": "acceptEdits", "prompt_id": "prompt-1",
			"agent_id": "a7", "agent_type": "reviewer", "depth": 2.0, "parent_tool_use_id": "toolu_parent"}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	editInput := map[string]any{"file_path": "a.go", "old_string": "x", "new_string": "y"}
	switched := map[string]any{"from_model": "claude-sonnet-4-5", "to_model": "claude-haiku-4-5", "requested_model": "haiku",
		"source": "sdk", "context_tokens": 21867.0, "prompt_cache_warm": true, "cache_ttl": "5m",
		"estimated_cache_write_usd": 0.027, "pricing": "catalog"}
	want := map[Event]map[string]any{
		PreToolUse:         common(PreToolUse, map[string]any{"tool_name": "Edit", "tool_input": editInput, "tool_use_id": "toolu_1"}),
		PostToolUse:        common(PostToolUse, map[string]any{"tool_name": "Edit", "tool_input": editInput, "tool_use_id": "toolu_1", "tool_response": "done", "duration_ms": 1500.0}),
		PostToolUseFailure: common(PostToolUseFailure, map[string]any{"tool_name": "Edit", "tool_input": editInput, "tool_use_id": "toolu_1", "error": "old_string not found", "duration_ms": 1500.0, "is_interrupt": false}),
		PostToolBatch: common(PostToolBatch, map[string]any{"tool_calls": []any{
			map[string]any{"tool_name": "Edit", "tool_input": editInput, "tool_use_id": "toolu_1", "tool_response": "done"},
			map[string]any{"tool_name": "Glob", "tool_input": map[string]any{}, "tool_use_id": "toolu_3", "tool_response": "old_string not found"}}}),
		StopFailure:      common(StopFailure, map[string]any{"error": "rate_limit", "error_details": "model API error 429", "last_assistant_message": "Working on it"}),
		Interrupt:        common(Interrupt, map[string]any{"source": "user", "reason": "stop", "via": "terminal"}),
		TaskCreated:      common(TaskCreated, map[string]any{"task_id": "4", "task_subject": "Check the notes", "task_description": "Read notes.txt", "teammate_name": "alice", "team_name": "t1"}),
		PostCompact:      common(PostCompact, map[string]any{"trigger": "manual", "compact_summary": "The user asked for a fix."}),
		CwdChanged:       common(CwdChanged, map[string]any{"cwd": moved, "old_cwd": dir, "new_cwd": moved}),
		UserPromptSubmit: common(UserPromptSubmit, map[string]any{"prompt": "fix it"}),
		Stop: common(Stop, map[string]any{"stop_hook_active": true, "last_assistant_message": "All done.", "session_crons": []any{},
			"background_tasks": []any{map[string]any{"id": "b1", "type": "local_bash", "status": "running", "description": "go test", "command": "go test ./..."}}}),
		SubagentStart: common(SubagentStart, map[string]any{"prompt": "review a.go"}),
		SubagentStop: common(SubagentStop, map[string]any{"stop_hook_active": false, "background_tasks": []any{}, "session_crons": []any{},
			"agent_transcript_path": "/t/s1.jsonl"}),
		TeammateIdle:   common(TeammateIdle, map[string]any{"teammate_name": "alice", "team_name": "t1"}),
		TaskCompleted:  common(TaskCompleted, map[string]any{"task_id": "b2", "status": "failed", "summary": `Agent "x" failed`}),
		WorktreeCreate: common(WorktreeCreate, map[string]any{"worktree_path": "/r/.cohort/worktrees/w", "branch": "cohort/w"}),
		WorktreeRemove: common(WorktreeRemove, map[string]any{"worktree_path": "/r/.cohort/worktrees/w", "branch": "cohort/w"}),
		SessionStart:   common(SessionStart, map[string]any{"source": "startup", "model": "claude-sonnet-4-5"}),
		SessionEnd:     common(SessionEnd, map[string]any{"reason": "other"}),
		Notification: common(Notification, map[string]any{"message": "Cohort needs your permission to use Bash",
			"title": "Permission needed", "notification_type": "permission_prompt"}),
		PreCompact: common(PreCompact, map[string]any{"trigger": "auto", "custom_instructions": ""}),
		InstructionsLoaded: common(InstructionsLoaded, map[string]any{"file_path": "/p/CLAUDE.md", "memory_type": "Project",
			"load_reason": "session_start"}),
		UserPromptExpansion: common(UserPromptExpansion, map[string]any{"expansion_type": "slash_command", "command_name": "greet",
			"command_args": "the team", "command_source": "projectSettings", "prompt": "/greet the team"}),
		PreModelSwitch:  common(PreModelSwitch, switched),
		PostModelSwitch: common(PostModelSwitch, switched),
		PermissionRequest: common(PermissionRequest, map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "make"},
			"tool_use_id": "toolu_2", "permission_suggestions": []any{map[string]any{"type": "addRules", "behavior": "allow",
				"destination": "localSettings", "rules": []any{map[string]any{"toolName": "Bash", "ruleContent": "make:*"}}}}}),
	}
	delete(want[PreToolUse], "prompt_id") // fired before the first prompt
	delete(want[SessionStart], "prompt_id")
	for _, ev := range Events {
		if diff := cmp.Diff(want[ev], readJSON(t, filepath.Join(out, string(ev)+".json"))); diff != "" {
			t.Errorf("%s input (-want +got):\n%s", ev, diff)
		}
	}
	env := readFile(t, filepath.Join(out, "PreToolUse.env"))
	if diff := cmp.Diff([]string{"/proj", "/proj", dir}, strings.Split(strings.TrimSpace(env), "\n")); diff != "" {
		t.Errorf("env and cwd (-want +got):\n%s", diff)
	}
}

func TestLeadInputOmitsAgentFields(t *testing.T) {
	dir := t.TempDir()
	r := newRunner(t, Config{}, spec{event: Stop, cmd: "cat > " + filepath.Join(dir, "in.json")})
	r.For(Subject{Caller: tool.Caller{Cwd: dir}}).Stop(t.Context(), StopState{Active: false})
	want := map[string]any{"session_id": "", "transcript_path": "", "cwd": dir, "hook_event_name": "Stop",
		"permission_mode": "default", "depth": 0.0, "stop_hook_active": false, "background_tasks": []any{}, "session_crons": []any{}}
	if diff := cmp.Diff(want, readJSON(t, filepath.Join(dir, "in.json"))); diff != "" {
		t.Errorf("input (-want +got):\n%s", diff)
	}
}

func TestDefinitionHooksAddToSettings(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "log")
	fromSettings := "echo settings >> " + log
	fromDef := "echo definition >> " + log
	r := newRunner(t, Config{}, spec{event: SubagentStop, cmd: fromSettings})
	def, probs := FromDefinition("reviewer.md", map[string]any{
		"Stop": []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": fromDef}}}},
	})
	if len(probs) > 0 {
		t.Fatal(probs)
	}
	// As a subagent, the definition's Stop hook runs on SubagentStop, after
	// the settings' hooks.
	o := r.For(Subject{Caller: tool.Caller{Cwd: dir, Depth: 1}, Hooks: def}).SubagentStop(t.Context(), StopState{Active: false})
	if o.Ran != 2 {
		t.Fatalf("ran %d hooks, want 2", o.Ran)
	}
	got := strings.Fields(readFile(t, log))
	slices.Sort(got)
	if diff := cmp.Diff([]string{"definition", "settings"}, got); diff != "" {
		t.Errorf("ran (-want +got):\n%s", diff)
	}
	// Another agent sharing the runner does not get the definition's hooks.
	if o := r.For(Subject{Caller: tool.Caller{Cwd: dir, Depth: 1}}).SubagentStop(t.Context(), StopState{Active: false}); o.Ran != 1 {
		t.Errorf("plain subagent ran %d hooks, want 1", o.Ran)
	}
	// As the lead (cohort --agent), they stay Stop hooks.
	if o := r.For(Subject{Caller: tool.Caller{Cwd: dir}, Hooks: def}).Stop(t.Context(), StopState{Active: false}); o.Ran != 1 {
		t.Errorf("lead Stop ran %d hooks, want 1", o.Ran)
	}
}
