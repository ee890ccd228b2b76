package skill

import (
	"context"
	"fmt"
	"strings"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
)

// ToolName is the Skill tool's name, as Claude Code's.
const ToolName = "Skill"

type input struct {
	Skill string `json:"skill"`
}

// Tool returns the Skill tool over c: its description lists every skill
// with its description (in name order, so the bytes are stable), and a
// call returns the skill's instructions. Nil when c has no skills.
func (c *Catalog) Tool() tool.Tool {
	if len(c.All()) == 0 {
		return nil
	}
	var b strings.Builder
	b.WriteString("Loads a skill: a set of instructions (and files beside them) for one kind of task. " +
		"When a task matches a skill below, call this tool with the skill's name before starting the task, " +
		"then follow the instructions it returns.\n\nAvailable skills:\n")
	for _, s := range c.skills {
		fmt.Fprintf(&b, "- %s: %s\n", s.Name, oneLine(s.Description))
	}
	return tool.New(tool.Spec[input]{
		Name:        ToolName,
		Description: strings.TrimRight(b.String(), "\n"),
		Input:       tool.Object(tool.Required("skill", tool.String("The name of the skill to load, from the list in this tool's description."))),
		Traits:      tool.Traits{ReadOnly: true, ConcurrencySafe: true},
		Run: func(_ context.Context, _ *tool.Env, in input) (tool.Result, error) {
			s, ok := c.Get(strings.TrimPrefix(strings.TrimSpace(in.Skill), "/"))
			if !ok {
				return tool.Result{}, tool.Failf("there is no skill %q; the skills are: %s", in.Skill, strings.Join(c.names(), ", "))
			}
			return tool.Text(s.Instructions()), nil
		},
	})
}

// Preload returns a block per named skill for an agent's first message,
// in order, and the names the catalog lacks.
func (c *Catalog) Preload(names []string) (blocks []llm.Block, missing []string) {
	for _, n := range names {
		s, ok := c.Get(n)
		if !ok {
			missing = append(missing, n)
			continue
		}
		blocks = append(blocks, llm.Text(fmt.Sprintf("<skill name=%q>\n%s\n</skill>", s.Name, s.Instructions())))
	}
	return blocks, missing
}

func (c *Catalog) names() []string {
	var out []string
	for _, s := range c.All() {
		out = append(out, s.Name)
	}
	return out
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
