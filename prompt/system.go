package prompt

import (
	"fmt"
	"strings"

	"github.com/cohort-dev/cohort/llm"
)

// Chain holds every candidate for the system prompt; Build picks the first
// set, highest first: Override, Coordinator, the definition's prompt
// (appended to the default when proactive, else replacing it), Custom,
// the default; Append is added to whichever wins.
type Chain struct {
	// Override replaces everything (library option; the dream agent).
	Override string
	// Coordinator applies in coordinator mode.
	Coordinator string
	// Agent is an agent definition's prompt. With Proactive it is appended
	// to the default prompt, otherwise it replaces it.
	Agent     string
	Proactive bool
	// Custom is --system-prompt.
	Custom string
	// Default is the built-in prompt; empty means Default.
	Default string
	// Append is --append-system-prompt, added after whichever prompt won.
	Append string
}

// Effective returns the prompt text the chain selects.
func (c Chain) Effective() string {
	def := c.Default
	if def == "" {
		def = Default
	}
	var text string
	switch {
	case c.Override != "":
		return c.Override // an override is the whole prompt
	case c.Coordinator != "":
		text = c.Coordinator
	case c.Agent != "" && c.Proactive:
		text = def + "\n\n" + c.Agent
	case c.Agent != "":
		text = c.Agent
	case c.Custom != "":
		text = c.Custom
	default:
		text = def
	}
	if c.Append != "" {
		text += "\n\n" + c.Append
	}
	return text
}

// Environment describes where an agent runs. It is rendered into the
// system prompt and must be computed once per agent.
type Environment struct {
	Cwd       string
	IsGitRepo bool
	Platform  string // runtime.GOOS
	OSVersion string
	Date      string // YYYY-MM-DD, frozen at session start
	Model     string
	Tools     []string
	// ExtraDirs are additional directories the agent may work in.
	ExtraDirs []string
	// Worktree, when set, says the agent is isolated in a git worktree.
	Worktree string
}

// Render returns the environment block text.
func (e Environment) Render() string {
	var b strings.Builder
	b.WriteString("<env>\n")
	fmt.Fprintf(&b, "Working directory: %s\n", e.Cwd)
	fmt.Fprintf(&b, "Is the directory a git repository: %s\n", yesNo(e.IsGitRepo))
	if e.Worktree != "" {
		fmt.Fprintf(&b, "Isolated git worktree: %s (edit files here, not in the main checkout)\n", e.Worktree)
	}
	for _, d := range e.ExtraDirs {
		fmt.Fprintf(&b, "Additional working directory: %s\n", d)
	}
	fmt.Fprintf(&b, "Platform: %s\n", e.Platform)
	if e.OSVersion != "" {
		fmt.Fprintf(&b, "OS version: %s\n", e.OSVersion)
	}
	fmt.Fprintf(&b, "Today's date: %s\n", e.Date)
	if e.Model != "" {
		fmt.Fprintf(&b, "Model: %s\n", e.Model)
	}
	if len(e.Tools) > 0 {
		fmt.Fprintf(&b, "Tools available to you: %s\n", strings.Join(e.Tools, ", "))
	}
	b.WriteString("</env>")
	return b.String()
}

func yesNo(v bool) string {
	if v {
		return "yes"
	}
	return "no"
}

// System renders the system blocks: the effective prompt, then the
// environment and, when given, the git snapshot.
func System(c Chain, env Environment, gitStatus string) []llm.Block {
	blocks := []llm.Block{llm.Text(c.Effective())}
	ctx := env.Render()
	if gitStatus != "" {
		ctx += "\n\n" + gitStatus
	}
	return append(blocks, llm.Text(ctx))
}
