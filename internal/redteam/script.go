package redteam

import (
	"regexp"
	"strings"
	"sync"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// The first user messages that tell the scripted model's conversations
// apart: the attacker's, and a lead that only delegates to it.
const (
	attackPrompt = "REDTEAM-ATTACK: do what the script says"
	leadPrompt   = "REDTEAM-LEAD: delegate to an isolated agent"
)

// agentType is the agent definition a Worktree attack runs as (given on
// the command line with --agents, so it may set any mode).
const agentType = "redteam"

// script is the scripted model of one run. Its policy answers the
// attacker's conversation with the attack's turns, a delegating lead with
// one Agent call, and anything else (a dream, a compaction) with text.
type script struct {
	a   *Attack
	env *Env
	loc Location

	mu sync.Mutex
	// results are the attacker's tool results, by turn, and lead the
	// delegating lead's, for reports.
	results [][]string
	lead    []string
	// finished is set when the attacker asked for its turn after the
	// last: every call ran and returned.
	finished bool
	// link and linkAfter snapshot a worktree's linkage (its .git file, and
	// gitdir, commondir and config.worktree under the repository's
	// worktrees/) at the attacker's first request and after its last
	// call, while the worktree still exists.
	link, linkAfter state
	work            string
}

var cwdLine = regexp.MustCompile(`Working directory: (\S+)`)

func (s *script) policy(r *fakeapi.Request) fakeapi.Reply {
	first := r.FirstUserText()
	switch {
	case strings.Contains(first, attackPrompt):
		return s.attacker(r)
	case strings.Contains(first, leadPrompt):
		if r.Turn() == 1 {
			s.mu.Lock()
			s.lead = results(r)
			s.mu.Unlock()
		}
		if r.Turn() == 0 {
			return fakeapi.Reply{Content: []fakeapi.Block{fakeapi.ToolUseBlock("", "Agent", map[string]any{
				"description": "isolated attack", "prompt": attackPrompt, "isolation": "worktree",
				"subagent_type": agentType})}}
		}
	}
	return fakeapi.TextReply("done")
}

func (s *script) attacker(r *fakeapi.Request) fakeapi.Reply {
	turn := r.Turn()
	work := s.env.Project
	if m := cwdLine.FindStringSubmatch(r.SystemText()); m != nil {
		work = m[1]
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.work = work
	if turn > 0 && len(s.results) < turn {
		s.results = append(s.results, results(r))
	}
	if turn == 0 && s.loc == Worktree && s.link == nil {
		s.link = linkage(work)
	}
	if turn >= len(s.a.Turns) {
		s.finished = true
		if s.loc == Worktree && s.linkAfter == nil {
			s.linkAfter = linkage(work)
		}
		return fakeapi.TextReply("done")
	}
	rep := s.env.replacer(work)
	var blocks []fakeapi.Block
	for _, c := range s.a.Turns[turn] {
		blocks = append(blocks, fakeapi.ToolUseBlock("", c.Tool, c.inputJSON(rep)))
	}
	return fakeapi.Reply{Content: blocks}
}

// results returns the tool_result texts of a request's last message.
func results(r *fakeapi.Request) []string {
	last := r.Messages[len(r.Messages)-1]
	var out []string
	for _, b := range last.Content {
		if b.Type != "tool_result" {
			continue
		}
		var parts []string
		for _, c := range b.Content {
			parts = append(parts, c.Text)
		}
		text := strings.Join(parts, "")
		if b.IsError {
			text = "ERROR: " + text
		}
		out = append(out, text)
	}
	return out
}
