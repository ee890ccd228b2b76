package agentsdk

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/npmtest"
)

// TestAgentSDKHostedControls drives Cohort with the real Agent SDK
// through the control requests Claude Code 2.1.332 added for a host that
// watches and steers a running session (testdata/hosted.mjs), and reads
// the background_tasks_changed and task_updated events. Cohort only: the
// agent paging (get_task_output with after and follow) is served by
// Claude Code on Remote Control sessions alone, not on stdio.
func TestAgentSDKHostedControls(t *testing.T) {
	modules := npmtest.Install(t, sdkPackage, claudeCodePackage)
	exe := executable{name: "cohort", path: cohortBinary(t), agentTool: "Agent"}
	start := time.Now()
	r := drive(t, modules, exe, "hosted")
	t.Logf("the hosted scenario took %s", time.Since(start))
	if len(r.results) != 2 || r.results[0].IsError || r.results[1].IsError {
		t.Fatalf("want two successful results:\n%s", r.dump())
	}
	t.Run("shell output", func(t *testing.T) { checkShellOutput(t, r) })
	t.Run("agent pages", func(t *testing.T) { checkAgentPages(t, r) })
	t.Run("task events", func(t *testing.T) { checkTaskEvents(t, r) })
	t.Run("context usage", func(t *testing.T) { checkContextUsage(t, r) })
	t.Run("skills", func(t *testing.T) { checkReloadSkills(t, r) })
	t.Run("mcp", func(t *testing.T) { checkDynamicMCP(t, r) })
}

// answer decodes the one answer of kind into v; it fails t when there is
// none or it was an error.
func answer(t *testing.T, r *run, kind string, v any) {
	t.Helper()
	obs := r.kind(kind)
	if len(obs) != 1 || obs[0].Error != "" {
		t.Fatalf("want one answer to %s: %+v\n%s", kind, obs, r.dump())
	}
	if err := json.Unmarshal(obs[0].Value, v); err != nil {
		t.Fatalf("%s: %v: %s", kind, err, obs[0].Value)
	}
}

// checkShellOutput: once the background shell has ended, its output is
// read whole.
func checkShellOutput(t *testing.T, r *run) {
	var out struct {
		Output     string `json:"output"`
		TotalBytes int    `json:"total_bytes"`
		Truncated  bool   `json:"truncated"`
	}
	answer(t, r, "shell_output", &out)
	if out.Output != "out-1\nout-2\nout-3\n" || out.TotalBytes != len(out.Output) || out.Truncated {
		t.Errorf("shell output %+v; want the three lines, whole", out)
	}
}

type agentPage struct {
	TaskID   string `json:"task_id"`
	Done     bool   `json:"done"`
	More     bool   `json:"more"`
	Messages struct {
		Frames []struct {
			Type            string          `json:"type"`
			UUID            string          `json:"uuid"`
			ParentToolUseID string          `json:"parent_tool_use_id"`
			Message         json.RawMessage `json:"message"`
		} `json:"frames"`
		After *string `json:"after"`
		Last  *string `json:"last"`
	} `json:"messages"`
}

// checkAgentPages: following the background agent from its start gives
// its messages in order, each once — its Bash call, the call's result,
// its last words — and a page asked for after the last is empty.
func checkAgentPages(t *testing.T, r *run) {
	var seen []string
	var text strings.Builder
	pages := r.kind("agent_page")
	if len(pages) == 0 {
		t.Fatalf("no agent pages:\n%s", r.dump())
	}
	var prevLast *string
	for _, o := range pages {
		var p agentPage
		if err := json.Unmarshal(o.Value, &p); err != nil {
			t.Fatal(err)
		}
		if !p.Done || p.TaskID == "" || len(p.Messages.Frames) == 0 {
			t.Errorf("a followed page came back empty or unfinished: %s", o.Value)
		}
		if (prevLast == nil) != (p.Messages.After == nil) || prevLast != nil && *prevLast != *p.Messages.After {
			t.Errorf("page after %v follows a page that ended at %v", p.Messages.After, prevLast)
		}
		prevLast = p.Messages.Last
		for _, f := range p.Messages.Frames {
			if slices.Contains(seen, f.UUID) || f.ParentToolUseID == "" {
				t.Errorf("frame %s sent twice or without its Agent call", f.UUID)
			}
			seen = append(seen, f.UUID)
			text.Write(f.Message)
		}
	}
	all := text.String()
	bash, result, done := strings.Index(all, "echo helper-step"), strings.Index(all, `"text":"helper-step"`), strings.Index(all, "helper done")
	if strings.Contains(all, "background helper") {
		t.Errorf("the pages hold the agent's prompt; what it was told is left out")
	}
	if bash < 0 || result < bash || done < result {
		t.Errorf("the agent's messages are not its Bash call, its result and its words, in order:\n%s", clip(all, 3000))
	}
	var end agentPage
	answer(t, r, "agent_page_after_end", &end)
	if len(end.Messages.Frames) != 0 || end.More || end.Messages.Last == nil || *end.Messages.Last != *prevLast {
		t.Errorf("the page after the last message: %+v", end)
	}
}

// checkTaskEvents: both background tasks join the background set and
// leave it; each reports its end in task_updated before its
// task_notification.
func checkTaskEvents(t *testing.T, r *run) {
	var sets [][]string
	ended := map[string]string{}
	for _, o := range r.kind("message") {
		var m struct {
			Type    string `json:"type"`
			Subtype string `json:"subtype"`
			TaskID  string `json:"task_id"`
			Status  string `json:"status"`
			Patch   struct {
				Status string `json:"status"`
			} `json:"patch"`
			Tasks []struct {
				TaskID   string `json:"task_id"`
				TaskType string `json:"task_type"`
			} `json:"tasks"`
		}
		_ = json.Unmarshal(o.Message, &m)
		switch m.Subtype {
		case "background_tasks_changed":
			var ids []string
			for _, tk := range m.Tasks {
				ids = append(ids, tk.TaskType)
			}
			slices.Sort(ids)
			sets = append(sets, ids)
		case "task_updated":
			ended[m.TaskID] = m.Patch.Status
		case "task_notification":
			if ended[m.TaskID] != "completed" {
				t.Errorf("task_notification of %s without a task_updated saying completed before it", m.TaskID)
			}
		}
	}
	if len(ended) != 2 {
		t.Errorf("task_updated for %d tasks, want the shell and the agent: %v", len(ended), ended)
	}
	in := map[string]bool{}
	for _, set := range sets {
		for _, typ := range set {
			in[typ] = true
		}
	}
	if len(sets) < 4 || !in["local_agent"] || !in["local_bash"] || len(sets[len(sets)-1]) != 0 {
		t.Errorf("background sets %v; want the shell and the agent in, then out", sets)
	}
}

// checkContextUsage: before the first prompt only the fixed parts count;
// after the first turn the messages do too.
func checkContextUsage(t *testing.T, r *run) {
	type usage struct {
		Categories []struct {
			ID     string `json:"id"`
			Tokens int    `json:"tokens"`
			Kind   string `json:"kind"`
		} `json:"categories"`
		TotalTokens int    `json:"totalTokens"`
		MaxTokens   int    `json:"maxTokens"`
		Model       string `json:"model"`
	}
	var before, after usage
	answer(t, r, "context_before", &before)
	answer(t, r, "context_after", &after)
	tokens := func(u usage, id string) int {
		for _, c := range u.Categories {
			if c.ID == id {
				return c.Tokens
			}
		}
		return -1
	}
	if after.Model == "" || after.MaxTokens <= 0 || tokens(after, "system_prompt") <= 0 || tokens(after, "system_tools") <= 0 {
		t.Errorf("context usage after a turn: %+v", after)
	}
	if tokens(after, "messages") <= 0 || after.TotalTokens <= before.TotalTokens {
		t.Errorf("the first turn's messages do not count: before %+v, after %+v", before, after)
	}
}

// checkReloadSkills: a skill written while the session runs is found, and
// the lead's next request offers the Skill tool.
func checkReloadSkills(t *testing.T, r *run) {
	var got struct {
		Skills []struct {
			Name        string `json:"name"`
			Description string `json:"description"`
		} `json:"skills"`
	}
	answer(t, r, "skills", &got)
	if len(got.Skills) != 1 || got.Skills[0].Name != "greeter" || got.Skills[0].Description != "Greets whoever asks." {
		t.Errorf("reload_skills answered %+v", got)
	}
	if !r.toolOffered("use the new tools", "Skill") {
		t.Errorf("the lead's request after reload_skills does not offer the Skill tool")
	}
}

// checkDynamicMCP: a server the host adds mid-session is listed and its
// tool reaches the lead's next request and runs; turned off it is
// disabled, on again connected; reconnecting an unknown server names the
// known ones.
func checkDynamicMCP(t *testing.T, r *run) {
	var set struct {
		Added   []string          `json:"added"`
		Removed []string          `json:"removed"`
		Errors  map[string]string `json:"errors"`
	}
	answer(t, r, "set_servers", &set)
	if !slices.Equal(set.Added, []string{"extra"}) || len(set.Removed) != 0 || len(set.Errors) != 0 {
		t.Errorf("mcp_set_servers answered %+v", set)
	}
	status := func(kind string) string {
		var st []struct {
			Name   string `json:"name"`
			Status string `json:"status"`
		}
		answer(t, r, kind, &st)
		for _, s := range st {
			if s.Name == "extra" {
				return s.Status
			}
		}
		return "absent"
	}
	if a, off, on := status("status_added"), status("status_off"), status("status_on"); a != "connected" || off != "disabled" || on != "connected" {
		t.Errorf("extra's status: added %s, off %s, on %s; want connected, disabled, connected", a, off, on)
	}
	for _, k := range []string{"toggle_off", "toggle_on", "reconnect"} {
		if o := r.kind(k); len(o) != 1 || o[0].Error != "" {
			t.Errorf("%s: %+v", k, o)
		}
	}
	if o := r.kind("reconnect_unknown"); len(o) != 1 || !strings.Contains(o[0].Error, "extra") {
		t.Errorf("reconnecting an unknown server: %+v; want an error naming extra", o)
	}
	if calls := r.kind("mcp_call"); len(calls) != 1 || calls[0].Input["text"] != "ping" {
		t.Errorf("the added server's tool was not called once with ping:\n%s", r.dump())
	}
	if !strings.Contains(r.results[1].Result, "echo: ping") {
		t.Errorf("the tool's answer did not reach the model: %q", r.results[1].Result)
	}
}
