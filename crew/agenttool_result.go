package crew

import (
	"fmt"
	"strings"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/tool"
)

// AgentToolResult is a finished synchronous agent's outcome (Claude Code's
// AgentToolResult). It travels in tool.Result.Meta; the model reads the
// text rendering.
type AgentToolResult struct {
	Content           string    `json:"content"`
	TotalToolUseCount int       `json:"totalToolUseCount"`
	TotalDurationMs   int64     `json:"totalDurationMs"`
	TotalTokens       int64     `json:"totalTokens"`
	Usage             llm.Usage `json:"usage"`
	AgentID           string    `json:"agentId"`
	WorktreePath      string    `json:"worktreePath,omitempty"`
	WorktreeBranch    string    `json:"worktreeBranch,omitempty"`
}

// AgentLaunched is the result of a background spawn.
type AgentLaunched struct {
	Status      string `json:"status"` // "async_launched"
	AgentID     string `json:"agentId"`
	Description string `json:"description"`
	Prompt      string `json:"prompt"`
	OutputFile  string `json:"outputFile"`
}

func syncResult(child *Agent, st task.State) tool.Result {
	if st.Status != task.StatusCompleted {
		reason := st.Err
		if reason == "" {
			reason = string(st.Status)
		}
		return tool.Errorf("The agent (%s) did not finish: %s", child.ID(), reason)
	}
	r := AgentToolResult{AgentID: child.ID()}
	if st.Result != nil {
		r.Content = st.Result.Text
		r.TotalToolUseCount = st.Result.ToolUses
		r.TotalDurationMs = st.Result.Duration.Milliseconds()
		r.TotalTokens = st.Result.TotalTokens
		r.WorktreePath, r.WorktreeBranch = st.Result.WorktreePath, st.Result.WorktreeBranch
	}
	if res := child.Result(); res != nil {
		r.Usage = res.Usage
	}
	text := r.Content
	if strings.TrimSpace(text) == "" {
		text = "(The agent finished without a text reply.)"
	}
	trailer := fmt.Sprintf("\n\n<agent-result agentId=%q tool_uses=\"%d\" total_tokens=\"%d\" duration_ms=\"%d\"",
		r.AgentID, r.TotalToolUseCount, r.TotalTokens, r.TotalDurationMs)
	if r.WorktreePath != "" {
		trailer += fmt.Sprintf(" worktreePath=%q worktreeBranch=%q", r.WorktreePath, r.WorktreeBranch)
	}
	trailer += " />"
	return tool.Result{Content: []llm.Block{llm.Text(text + trailer)}, Meta: r}
}

func asyncLaunched(child *Agent, in AgentInput, outputFile string) tool.Result {
	l := AgentLaunched{Status: "async_launched", AgentID: child.ID(), Description: in.Description,
		Prompt: in.Prompt, OutputFile: outputFile}
	text := fmt.Sprintf("The agent is running in the background (agentId: %s). You will get a <task-notification> when it finishes; do not wait or poll for it, continue with other work. Its transcript is written to %s.", child.ID(), outputFile)
	return tool.Result{Content: []llm.Block{llm.Text(text)}, Meta: l}
}

// movedByUser answers an Agent call whose agent the user moved to the
// background (Ctrl+B) while the caller waited: the caller learns who moved
// it, and that its result comes later.
func movedByUser(child *Agent, in AgentInput, outputFile string) tool.Result {
	r := asyncLaunched(child, in, outputFile)
	text := fmt.Sprintf("The user moved this agent to the background while you were waiting for it, so that you can go on meanwhile (agentId: %s). It is still working; you will get a <task-notification> when it finishes. Do not wait or poll for it: continue with other work, or end your turn if nothing else is left. Its transcript is written to %s.", child.ID(), outputFile)
	r.Content = []llm.Block{llm.Text(text)}
	return r
}
