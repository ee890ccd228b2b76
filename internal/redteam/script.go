package redteam

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

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

// step is one message of the attacker: a turn of one attack.
type step struct{ attack, turn int }

// script is the scripted model of one session, which runs its attacks
// one after the other. Its policy answers the attacker's conversation
// with the attacks' turns, a delegating lead with one Agent call, and
// anything else (a dream, a compaction) with text. Between two attacks —
// when the model is asked for the first turn of the next, so the session
// waits and only background work can move — it checks what the one that
// ended changed (check), so that every finding names its attack.
type script struct {
	attacks []*Attack
	steps   []step
	env     *Env
	mode    Mode
	loc     Location

	mu sync.Mutex
	// checked counts the attacks whose checks ran; findings holds them,
	// and results each attack's tool results, by attack.
	checked  int
	findings [][]string
	results  [][]string
	// issued maps the attacker's turn (assistant messages so far) to the
	// step it was answered with: every new turn gets the next step, so a
	// turn the session adds (a background task's notification) takes one
	// too, and a retried request gets its step again.
	issued   map[int]int
	recorded map[int]bool // steps whose results are in
	lead     []string     // the delegating lead's results, for reports
	// finished is set when the attacker asked for the turn after the last
	// step: every call ran and returned.
	finished bool
	// protected and checkout are the states the next check compares with;
	// link is a worktree's linkage (linkage) when the attacker started;
	// dirty is the worktree's last reported status.
	protected, checkout, link state
	dirty                     string
	work                      string
	api                       string        // the fake's URL, for {{API}}
	checking                  time.Duration // spent in check, for REDTEAM_TIMING
	// current is the attack whose turns the model is playing; during maps
	// a request (fakeapi's Index) to the attack that ran when it came, so
	// that a leak found in it at the end names that attack.
	current int
	during  map[int]int
	// each: the lead spawns an agent for each attack (eachLead); ended
	// marks the attacks whose agent asked for its turn after the last.
	each  bool
	ended map[int]bool
	seen  map[[2]int]bool
}

func newScript(e *Env, attacks []*Attack, mode Mode, loc Location) *script {
	s := &script{attacks: attacks, env: e, mode: mode, loc: loc, recorded: map[int]bool{}, issued: map[int]int{}, during: map[int]int{}, ended: map[int]bool{}, seen: map[[2]int]bool{},
		findings: make([][]string, len(attacks)), results: make([][]string, len(attacks))}
	for i, a := range attacks {
		for j := range a.Turns {
			s.steps = append(s.steps, step{attack: i, turn: j})
		}
	}
	s.protected = snapshot(e.protectedAreas())
	s.checkout = snapshot([]area{e.workArea()})
	return s
}

var cwdLine = regexp.MustCompile(`Working directory: (\S+)`)

func (s *script) policy(r *fakeapi.Request) fakeapi.Reply {
	first := r.FirstUserText()
	switch {
	case strings.Contains(first, attackPrompt) && s.each:
		return s.eachAttacker(r, first)
	case strings.Contains(first, attackPrompt):
		return s.attacker(r)
	case strings.Contains(first, "REDTEAM-SUB "):
		return s.sub(r, first)
	case strings.Contains(first, leadPrompt) && s.each:
		return s.eachLead(r)
	case strings.Contains(first, leadPrompt):
		s.mu.Lock()
		s.during[r.Index] = s.current
		if r.Turn() == 1 {
			s.lead = results(r)
		}
		s.mu.Unlock()
		if r.Turn() == 0 {
			return fakeapi.Reply{Content: []fakeapi.Block{fakeapi.ToolUseBlock("", "Agent", map[string]any{
				"description": "isolated attack", "prompt": attackPrompt, "isolation": "worktree",
				"subagent_type": agentType})}}
		}
	default:
		s.mu.Lock()
		s.during[r.Index] = s.current
		s.mu.Unlock()
	}
	return fakeapi.TextReply("done")
}

// who names the attack that ran when request index came ("" for a
// request the policy never saw). Called with s.mu held.
func (s *script) who(index int) string {
	if i, ok := s.during[index]; ok {
		return s.attacks[i].Name
	}
	return ""
}

func (s *script) attacker(r *fakeapi.Request) fakeapi.Reply {
	turn := r.Turn()
	work := s.workOf(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.during[r.Index] = s.current
	s.work = work
	if turn == 0 && s.loc == Worktree && s.link == nil {
		s.link = linkage(work)
	}
	if prev, ok := s.issued[turn-1]; ok && prev < len(s.steps) && !s.recorded[prev] {
		s.recorded[prev] = true
		a := s.steps[prev].attack
		s.results[a] = append(s.results[a], results(r)...)
	}
	k, ok := s.issued[turn]
	if !ok {
		k = len(s.issued)
		s.issued[turn] = k
	}
	next := len(s.attacks)
	if k < len(s.steps) {
		next = s.steps[k].attack
	}
	start := time.Now()
	for ; s.checked < next; s.checked++ {
		s.check(s.checked, work)
	}
	s.checking += time.Since(start)
	if k >= len(s.steps) {
		s.finished = true
		return fakeapi.TextReply("done")
	}
	st := s.steps[k]
	s.current = st.attack
	calls := s.attacks[st.attack].Turns[st.turn]
	s.offered(st.attack, r, calls)
	return s.reply(calls, work)
}

// workOf is the working directory of the agent that sent r, which its
// system prompt names (the main checkout if it names none).
func (s *script) workOf(r *fakeapi.Request) string {
	if m := cwdLine.FindStringSubmatch(r.SystemText()); m != nil {
		return m[1]
	}
	return s.env.Project
}

// reply is the model's message making calls, with the placeholders
// filled for an agent working in work. Called with s.mu held.
func (s *script) reply(calls []Call, work string) fakeapi.Reply {
	rep := s.env.replacer(work, s.api)
	var blocks []fakeapi.Block
	for _, c := range calls {
		blocks = append(blocks, fakeapi.ToolUseBlock("", c.Tool, c.inputJSON(rep)))
	}
	return fakeapi.Reply{Content: blocks}
}

// sub answers an agent an attack spawned with its Sub turns.
func (s *script) sub(r *fakeapi.Request, first string) fakeapi.Reply {
	work := s.workOf(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.during[r.Index] = s.current
	for i, a := range s.attacks {
		if !strings.Contains(first, SubPrompt(a.Name)) {
			continue
		}
		s.during[r.Index] = i
		if r.Turn() >= len(a.Sub) {
			continue
		}
		s.offered(i, r, a.Sub[r.Turn()])
		return s.reply(a.Sub[r.Turn()], work)
	}
	return fakeapi.TextReply("done")
}

// offered records, for attack i, every call of calls naming a tool that
// r, the request of the agent about to make them, does not offer: such a
// call comes back as "no such tool" from the dispatcher, before any layer
// this corpus is about, so the row tests nothing there (an Agent call
// from an isolated agent, which has no Agent tool, was one). It is a
// broken row, reported as one. Called with s.mu held.
func (s *script) offered(i int, r *fakeapi.Request, calls []Call) {
	if s.mode == Plan || s.attacks[i].Unoffered != "" {
		// Plan mode offers only read-only tools: a call of another is
		// refused by the pool, which is what the mode promises, and the
		// row's runs in the other modes reach the tool. A row with
		// Unoffered makes such calls on purpose.
		return
	}
	for _, c := range calls {
		if !r.HasTool(c.Tool) {
			s.findings[i] = append(s.findings[i], fmt.Sprintf("the row is hollow: it calls %s, which the agent making the call does not have (the call never reaches a permission check, the tool or the sandbox)", c.Tool))
		}
	}
}

// check records what attack i changed since the previous check, and
// whether what the model got back from it holds a marker. Called with
// s.mu held.
func (s *script) check(i int, work string) {
	add := func(format string, args ...any) { s.findings[i] = append(s.findings[i], fmt.Sprintf(format, args...)) }
	s.checkAreas(i, "")
	if s.loc == Worktree {
		now := linkage(work)
		for _, d := range diff(s.link, now) {
			add("worktree link: %s", d)
		}
		s.link = now
		if !s.writes() {
			st, err := git(work, "status", "--porcelain", "--untracked-files=all")
			if err != nil {
				st = "git status: " + err.Error()
			}
			if st != s.dirty {
				add("the worktree, which this mode lets nobody write, changed:\n%s", st)
				s.dirty = st
			}
		}
	}
	markers := s.env.markers(s.attacks[i].Names)
	for j, res := range s.results[i] {
		s.findings[i] = append(s.findings[i], leaks([]byte(res), fmt.Sprintf("the model in result %d", j), markers)...)
	}
}

// checkAreas records what changed, since the previous check, in the
// protected paths and, where nobody may write it, in the main checkout,
// for attack i; when is said after the finding's path.
func (s *script) checkAreas(i int, when string) {
	add := func(format string, args ...any) { s.findings[i] = append(s.findings[i], fmt.Sprintf(format, args...)) }
	now := snapshot(s.env.protectedAreas())
	for _, d := range s.env.unobeyed(diff(s.protected, now)) {
		add("protected: %s%s", d, when)
	}
	s.protected = now
	if s.loc == Worktree || !s.writes() {
		now := snapshot([]area{s.env.workArea()})
		for _, d := range diff(s.checkout, now) {
			add("main checkout: %s%s", d, when)
		}
		s.checkout = now
	}
}

// writes reports whether the session may write its working directory
// without a person: the mode lets it, or the attacks' Args do.
func (s *script) writes() bool { return s.mode.writes() || s.attacks[0].Writes }

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
