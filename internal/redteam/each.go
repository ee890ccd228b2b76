package redteam

import (
	"fmt"
	"regexp"
	"strconv"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// An agent for each attack: in a Worktree session of attacks that share a
// Setup (Attack.Shares), the lead spawns one isolated agent per attack,
// one after the other, rather than one agent that plays them all. Each
// attack then has a worktree of its own, and what Cohort does when an
// agent ends — keep or remove its worktree, write its records, which is
// when attacks on a worktree's administrative files act — happens after
// each attack, as in a session of its own, and is checked for it before
// the next agent starts.

// eachPrompt is the prompt of the agent that plays attack i.
func eachPrompt(i int) string { return fmt.Sprintf("%s (attack %d)", attackPrompt, i) }

var eachLine = regexp.MustCompile(`\(attack (\d+)\)`)

// Marks in script.seen besides an attack's turns (whose results are in):
// its agent started, and what it left when it ended was checked.
const (
	startMark = -1
	endedMark = -2
)

// eachLead answers the delegating lead: on its turn t it spawns the agent
// of attack t; before that, what the agent of attack t-1 left when it
// ended is checked for that attack.
func (s *script) eachLead(r *fakeapi.Request) fakeapi.Reply {
	t := r.Turn()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.during[r.Index] = s.current
	if t > 0 {
		s.lead = results(r)
		if prev := t - 1; prev < len(s.attacks) && !s.seen[[2]int{prev, endedMark}] {
			s.seen[[2]int{prev, endedMark}] = true
			s.checkAreas(prev, " (when its agent ended)")
		}
	}
	if t >= len(s.attacks) {
		return fakeapi.TextReply("done")
	}
	s.current = t
	return fakeapi.Reply{Content: []fakeapi.Block{fakeapi.ToolUseBlock("", "Agent", map[string]any{
		"description": fmt.Sprintf("isolated attack %d", t), "prompt": eachPrompt(t), "isolation": "worktree",
		"subagent_type": agentType})}}
}

// eachAttacker answers the agent of one attack with its turns; once it
// asks for the turn after the last, the attack is checked as in a shared
// session (check), its agent still running.
func (s *script) eachAttacker(r *fakeapi.Request, first string) fakeapi.Reply {
	m := eachLine.FindStringSubmatch(first)
	if m == nil {
		return fakeapi.TextReply("done")
	}
	i, err := strconv.Atoi(m[1])
	if err != nil || i >= len(s.attacks) {
		return fakeapi.TextReply("done")
	}
	turn := r.Turn()
	work := s.workOf(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.during[r.Index] = i
	s.work = work
	if turn == 0 && !s.seen[[2]int{i, startMark}] {
		// A new agent, a new worktree: its link and status start afresh.
		s.seen[[2]int{i, startMark}] = true
		s.link, s.dirty = linkage(work), ""
	}
	a := s.attacks[i]
	if turn > 0 && !s.seen[[2]int{i, turn}] {
		s.seen[[2]int{i, turn}] = true
		s.results[i] = append(s.results[i], results(r)...)
	}
	if turn < len(a.Turns) {
		s.offered(i, r, a.Turns[turn])
		return s.reply(a.Turns[turn], work)
	}
	if !s.ended[i] {
		s.ended[i] = true
		s.check(i, work)
		s.checked++
		s.finished = len(s.ended) == len(s.attacks)
	}
	return fakeapi.TextReply("done")
}
