package relay

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cohort-dev/cohort/internal/lazyre"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// conv is one conversation the relay has seen: one agent, as far as the
// requests show.
type conv struct {
	label string
	key   [32]byte // its system prompt and first user message
	first int      // the request it first appeared in
	// system and tools are what its last request sent.
	system []fakeapi.Block
	tools  []toolDef
	// marks are the points it was answered at, the start first.
	marks    []mark
	lastText string // the text of the last answer (a compaction summary, perhaps)
	waiting  *entry // its request waiting for an answer, nil when none
	// agentID is the client's id of the agent, once a result shows it.
	agentID string
}

// name is the label, with the client's agent id when known.
func (c *conv) name() string {
	if c.agentID == "" {
		return c.label
	}
	return c.label + " (" + c.agentID + ")"
}

// mark is a point a conversation was answered at: basis messages (their
// hash hist) and then the answer, given to request req.
type mark struct {
	basis  int
	hist   [32]byte
	answer []fakeapi.Block
	req    int
}

// answered is the request of the last answer, 0 when none.
func (c *conv) answered() int { return c.marks[len(c.marks)-1].req }

// markFor returns the latest mark msgs continue from: the messages before
// it are the same, and an assistant message follows them. The start (0)
// fits any request with the conversation's key.
func (c *conv) markFor(msgs []fakeapi.Message) int {
	for i := len(c.marks) - 1; i > 0; i-- {
		m := c.marks[i]
		if len(msgs) > m.basis && msgs[m.basis].Role == "assistant" && hashMessages(msgs[:m.basis]) == m.hist {
			return i
		}
	}
	return 0
}

// spawn is a tool call of an answer that starts an agent with a prompt
// (Agent, or any call with a "prompt" string): a later conversation whose
// first message holds the prompt is that agent.
type spawn struct {
	prompt, description, kind, name string
	by                              *conv
	req                             int
	used                            bool
	started                         *conv // the conversation it started
}

// placement is where a request belongs.
type placement struct {
	conv *conv
	from int // the first message the view shows
	// isNew: the request starts a conversation; notes explain its origin.
	isNew bool
	notes []string
}

// convKey is what identifies a conversation: its system prompt and first
// user message. (Its tools may change between requests; the view shows
// the change.)
func convKey(r *fakeapi.Request) [32]byte {
	h := sha256.New()
	h.Write([]byte(r.SystemText()))
	h.Write([]byte{0})
	h.Write([]byte(r.FirstUserText()))
	var k [32]byte
	h.Sum(k[:0])
	return k
}

// place finds the conversation a request continues, or starts one. The
// caller holds the relay's lock.
func (r *Relay) place(req *fakeapi.Request, n int) placement {
	key := convKey(req)
	msgs := req.Messages
	var best *conv
	bestMark, bestSame := 0, false
	for _, c := range r.convs {
		if c.key != key || c.waiting != nil {
			continue
		}
		i := c.markFor(msgs)
		if i == 0 && len(c.marks) > 1 && r.spawnFor(req.FirstUserText()) != nil {
			continue // an agent started with the same prompt, not this one over again
		}
		m := c.marks[i]
		same := m.basis > 0 && len(msgs) > m.basis && sameAnswer(msgs[m.basis], m.answer)
		if best == nil || same && !bestSame || same == bestSame && m.basis > best.marks[bestMark].basis {
			best, bestMark, bestSame = c, i, same
		}
	}
	if best == nil {
		return r.startConv(req, key, n)
	}
	m := best.marks[bestMark]
	from := 0
	if m.basis > 0 && len(msgs) > m.basis {
		from = m.basis + 1
	}
	if s := r.spawnIn(best, msgs[from:]); s != nil && bestMark > 0 {
		c := r.newConv(key, n, "")
		s.used, s.started = true, c
		c.marks[0] = mark{basis: m.basis, hist: m.hist, answer: m.answer} // its history starts as its parent's
		note := fmt.Sprintf("A fork of %s: it carries %s's history up to request %d; only what follows is shown.", best.label, best.label, m.req)
		return placement{conv: c, from: from, isNew: true, notes: []string{note, s.describe()}}
	}
	var notes []string
	if bestMark < len(best.marks)-1 {
		where := "to its start"
		if m.req > 0 {
			where = fmt.Sprintf("to where it was after request %d", m.req)
		}
		notes = append(notes, fmt.Sprintf("%s went back %s: your answers from request %d on did not reach it, or it dropped them.",
			best.label, where, best.marks[bestMark+1].req))
		best.marks = best.marks[:bestMark+1]
	}
	return placement{conv: best, from: from, notes: notes}
}

// startConv makes the conversation of a request no known one continues,
// noting where it came from when the requests show it.
func (r *Relay) startConv(req *fakeapi.Request, key [32]byte, n int) placement {
	first := req.FirstUserText()
	var notes []string
	label := ""
	for _, c := range r.convs {
		if len(c.lastText) >= 80 && strings.Contains(first, c.lastText) {
			label = c.label
			notes = append(notes, fmt.Sprintf("%s again: its history was compacted, and its first message holds your summary from request %d.", c.label, c.answered()))
			break
		}
	}
	s := r.spawnFor(first)
	if s != nil {
		notes = append(notes, s.describe())
	}
	for _, c := range r.convs {
		if c.key == key && c.label != label {
			notes = append(notes, fmt.Sprintf("The same system prompt and first message as %s, which is busy: another agent.", c.label))
			break
		}
	}
	c := r.newConv(key, n, label)
	if s != nil {
		s.used, s.started = true, c
	}
	return placement{conv: c, isNew: true, notes: notes}
}

// newConv adds a conversation: "lead" for the first, then agent-2,
// agent-3, … in order of appearance, unless label is given.
func (r *Relay) newConv(key [32]byte, n int, label string) *conv {
	if label == "" {
		r.agents++
		label = "lead"
		if r.agents > 1 {
			label = fmt.Sprintf("agent-%d", r.agents)
		}
	}
	c := &conv{label: label, key: key, first: n, marks: []mark{{}}}
	r.convs = append(r.convs, c)
	return c
}

// spawnFor returns the unused spawn whose prompt the first user message
// holds (the longest, when several do).
func (r *Relay) spawnFor(first string) *spawn {
	var best *spawn
	for _, s := range r.spawns {
		if !s.used && s.prompt != "" && strings.Contains(first, s.prompt) && (best == nil || len(s.prompt) > len(best.prompt)) {
			best = s
		}
	}
	return best
}

// spawnIn returns an unused spawn of c whose prompt the new messages hold:
// the request is then a fork child carrying c's history, not c itself.
func (r *Relay) spawnIn(c *conv, msgs []fakeapi.Message) *spawn {
	var text []string
	for _, m := range msgs {
		if m.Role == "user" {
			for _, b := range m.Content {
				if b.Type == "text" {
					text = append(text, b.Text)
				}
			}
		}
	}
	joined := strings.Join(text, "\n")
	for _, s := range r.spawns {
		if s.by == c && !s.used && s.prompt != "" && strings.Contains(joined, s.prompt) {
			return s
		}
	}
	return nil
}

func (s *spawn) describe() string {
	var parts []string
	if s.description != "" {
		parts = append(parts, fmt.Sprintf("description %q", s.description))
	}
	if s.kind != "" {
		parts = append(parts, "subagent_type "+s.kind)
	}
	if s.name != "" {
		parts = append(parts, "name "+s.name)
	}
	what := ""
	if len(parts) > 0 {
		what = ": " + strings.Join(parts, ", ")
	}
	return fmt.Sprintf("Started by %s's tool call in request %d%s.", s.by.label, s.req, what)
}

// answered records an answer to request e: the conversation's new basis,
// and the agents its tool calls start.
func (r *Relay) answered(e *entry, blocks []fakeapi.Block) {
	c := e.conv
	c.marks = append(c.marks, mark{basis: len(e.req.Messages), hist: hashMessages(e.req.Messages), answer: blocks, req: e.n})
	var text []string
	for _, b := range blocks {
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "tool_use":
			var in struct {
				Prompt       string `json:"prompt"`
				Description  string `json:"description"`
				SubagentType string `json:"subagent_type"`
				Name         string `json:"name"`
			}
			if json.Unmarshal(b.Input, &in) == nil && strings.TrimSpace(in.Prompt) != "" {
				r.spawns = append(r.spawns, &spawn{prompt: strings.TrimSpace(in.Prompt), description: in.Description,
					kind: in.SubagentType, name: in.Name, by: c, req: e.n})
			}
		}
	}
	c.lastText = strings.TrimSpace(strings.Join(text, "\n"))
}

// hashMessages hashes messages as the client sent them, cache markers
// aside (they move from request to request).
func hashMessages(msgs []fakeapi.Message) [32]byte {
	h := sha256.New()
	enc := json.NewEncoder(h)
	for _, m := range msgs {
		enc.Encode(m.Role)
		for _, b := range m.Content {
			enc.Encode(unmarked(b))
		}
	}
	var sum [32]byte
	h.Sum(sum[:0])
	return sum
}

// unmarked is b without its cache_control, inner blocks included.
func unmarked(b fakeapi.Block) fakeapi.Block {
	b.CacheControl = nil
	if b.Content != nil {
		inner := make([]fakeapi.Block, len(b.Content))
		for i, c := range b.Content {
			inner[i] = unmarked(c)
		}
		b.Content = inner
	}
	return b
}

// agentIDs matches the agent ids the Agent tool's results carry.
var agentIDs = lazyre.New(`agentId(?:="|: )([A-Za-z0-9_-]+)`)

// learnAgentIDs finds, in the tool results of msgs, the ids of agents
// that spawns started, and names their conversations with them.
func (r *Relay) learnAgentIDs(msgs []fakeapi.Message) {
	calls := map[string]string{} // tool_use id → its prompt
	for _, m := range msgs {
		for _, b := range m.Content {
			switch {
			case b.Type == "tool_use":
				var in struct {
					Prompt string `json:"prompt"`
				}
				if json.Unmarshal(b.Input, &in) == nil && in.Prompt != "" {
					calls[b.ID] = strings.TrimSpace(in.Prompt)
				}
			case b.Type == "tool_result" && calls[b.ToolUseID] != "":
				id := agentIDs.FindStringSubmatch(resultText(b.Content))
				if id == nil {
					continue
				}
				for _, s := range r.spawns {
					if s.started != nil && s.started.agentID == "" && s.prompt == calls[b.ToolUseID] {
						s.started.agentID = id[1]
						break
					}
				}
			}
		}
	}
}
