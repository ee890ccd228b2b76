package agentdef_test

import (
	"fmt"

	"github.com/cohort-dev/cohort/agentdef"
)

func ExampleParse() {
	file := `---
name: reviewer
description: Reviews a change for bugs before it is merged
tools: Read, Grep, Glob, Agent(fixer)
model: sonnet
---
You review code. Report bugs with file and line.
`
	d, warns, err := agentdef.Parse(".cohort/agents/reviewer.md", []byte(file), []string{"Read", "Grep", "Glob", "Agent"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Name, d.Tools, d.AgentTypes, d.Model, len(warns))
	fmt.Println(d.Prompt)
	// Output:
	// reviewer [Read Grep Glob Agent] [fixer] sonnet 0
	// You review code. Report bugs with file and line.
}

func ExamplePool() {
	all := []string{"Agent", "Bash", "Read", "Edit", "SendMessage", "TaskStop", "TeamCreate", "mcp__github__get_pr"}
	worker := &agentdef.Definition{Name: "worker", DisallowedTools: []string{"Edit"}}
	for _, role := range []agentdef.Role{agentdef.RoleSubagent, agentdef.RoleBackground, agentdef.RoleTeammate} {
		pool, _ := agentdef.Pool(all, agentdef.PoolInput{Role: role, Def: worker, Depth: 1, MaxDepth: 3})
		fmt.Printf("%s: %v\n", role, pool)
	}
	// Output:
	// subagent: [Bash Read mcp__github__get_pr]
	// background agent: [Bash Read mcp__github__get_pr]
	// teammate: [Bash Read SendMessage mcp__github__get_pr]
}

func ExampleResolveModel() {
	env := func(string) string { return "" } // COHORT_SUBAGENT_MODEL unset
	fmt.Println(agentdef.ResolveModel(env, "", "haiku", "claude-opus-5-5", nil))
	fmt.Println(agentdef.ResolveModel(env, "inherit", "haiku", "claude-opus-5-5", nil))
	fmt.Println(agentdef.ResolveModel(env, "scripted:demo.yaml", "", "claude-opus-5-5", nil))
	// Output:
	// claude-haiku-5-5
	// claude-opus-5-5
	// scripted:demo.yaml
}
