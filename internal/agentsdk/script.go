package agentsdk

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

var writerPrompt = regexp.MustCompile(`write file (sub-\d)\.txt`)

// Policy is the scripted model of every scenario, for either executable:
// it tells the conversations apart by their first user message.
func Policy(agentTool, dir string) fakeapi.Policy {
	return func(r *fakeapi.Request) fakeapi.Reply {
		first, turn := r.FirstUserText(), r.Turn()
		tool := func(name string, input map[string]any) fakeapi.Reply {
			return fakeapi.ToolReply("", name, input)
		}
		switch {
		case strings.Contains(first, "say hello"):
			return fakeapi.TextReply("hello from the scripted model")
		case strings.Contains(first, "fan out three writers"):
			if turn == 0 {
				// run_in_background is spelled out: Claude Code 2.1.328 has
				// a mode in which an Agent call that leaves it unset starts
				// in the background (its binary tests
				// `run_in_background !== false` there). A CI run hit it: the
				// three tasks started backgrounded, the lead answered at
				// once, and no writer ran. false keeps them synchronous in
				// either mode, as the scenario means them.
				var blocks []fakeapi.Block
				for i := 1; i <= 3; i++ {
					blocks = append(blocks, fakeapi.ToolUseBlock("", agentTool, map[string]any{
						"description": fmt.Sprintf("writer %d", i), "subagent_type": "general-purpose",
						"prompt": fmt.Sprintf("write file sub-%d.txt", i), "run_in_background": false}))
				}
				return fakeapi.Reply{Content: blocks}
			}
			return fakeapi.TextReply("all three writers reported")
		case writerPrompt.MatchString(first) && !strings.Contains(first, "fan out"):
			name := writerPrompt.FindStringSubmatch(first)[1]
			if turn == 0 {
				return tool("Write", map[string]any{"file_path": filepath.Join(dir, name+".txt"), "content": "written by " + name})
			}
			return fakeapi.TextReply(name + " saw: " + r.LastToolResultText())
		case strings.Contains(first, "run the hooked command"):
			if turn == 0 {
				return tool("Bash", map[string]any{"command": "echo hooked > " + filepath.Join(dir, "hooked.txt"), "description": "write a marker"})
			}
			return fakeapi.TextReply("the tool said: " + r.LastToolResultText())
		case strings.Contains(first, "run something slow"):
			if turn == 0 {
				return tool("Bash", map[string]any{"command": "sleep 20; echo done > " + filepath.Join(dir, "slow.txt"), "description": "wait a while"})
			}
			return fakeapi.TextReply("slow done")
		case strings.Contains(first, "write mode-one.txt"):
			switch turn {
			case 0:
				return tool("Write", map[string]any{"file_path": filepath.Join(dir, "mode-one.txt"), "content": "one"})
			case 2:
				return tool("Write", map[string]any{"file_path": filepath.Join(dir, "mode-two.txt"), "content": "two"})
			}
			return fakeapi.TextReply(fmt.Sprintf("turn %d: %s", turn, r.LastToolResultText()))
		case strings.Contains(first, "look up the host value"):
			if turn == 0 {
				return tool("mcp__host__lookup", map[string]any{"key": "alpha"})
			}
			return fakeapi.TextReply("the host said: " + r.LastToolResultText())
		case strings.Contains(first, "start background work"):
			return hostedLead(r, agentTool, tool)
		case strings.Contains(first, "background helper"):
			if turn == 0 {
				return tool("Bash", map[string]any{"command": "echo helper-step", "description": "take one step"})
			}
			return fakeapi.TextReply("helper done")
		case strings.Contains(first, "remember the number 42"):
			if turn == 1 && strings.Contains(r.LastUserText(), "which number") {
				return fakeapi.TextReply("you gave me 42")
			}
			return fakeapi.TextReply("noted")
		}
		return fakeapi.TextReply("nothing scripted for this request")
	}
}

// hostedLead is the lead of the hosted scenario: its first prompt starts
// a background shell and a background agent; its second calls the tool of
// the MCP server the host added meanwhile.
func hostedLead(r *fakeapi.Request, agentTool string, tool func(string, map[string]any) fakeapi.Reply) fakeapi.Reply {
	last := r.LastUserText()
	switch {
	case r.Turn() == 0:
		return fakeapi.Reply{Content: []fakeapi.Block{
			fakeapi.ToolUseBlock("", "Bash", map[string]any{"command": "printf 'out-%s\\n' 1 2 3", "description": "print three lines",
				"run_in_background": true}),
			fakeapi.ToolUseBlock("", agentTool, map[string]any{"description": "helper", "subagent_type": "general-purpose",
				"prompt": "background helper", "run_in_background": true}),
		}}
	case strings.Contains(last, "use the new tools"):
		return tool("mcp__extra__echo", map[string]any{"text": "ping"})
	case strings.Contains(last, "echo: ping"):
		return fakeapi.TextReply("the new tool said: " + last)
	}
	return fakeapi.TextReply("background work under way")
}
