// Package toolsearch offers an agent's rarely used tools on demand. Every
// request carries an agent's whole tool array, and an agent pays for each
// definition on each request (a write into the prompt cache, then a read
// per request). A tool offered on demand stays in the array with
// llm.ToolDef.Defer set: the model sees its name and a one-line summary in
// the ToolSearch tool's description, not its definition, and the API bills
// none of it. When the model needs one, it calls ToolSearch, whose result
// holds a tool_reference block per tool it loads; from there on the model
// sees those definitions and calls them like any other tool.
//
// Decisions:
//
//   - The array never changes. Loading is a block of the conversation, so
//     the cached prefix (tools, system prompt, earlier messages) is the
//     same bytes before and after, a resumed or forked conversation
//     carries its loaded tools with its history, and nothing needs saving
//     apart from the transcript. After a compaction the summary replaces
//     the references: the model loads again what it still needs.
//   - Which tools wait is the pool's decision (agentdef.PoolInput.OnDemand):
//     measured, not guessed — the tools the lead and workers of the cost
//     workloads never call, and that typical sessions rarely do, and
//     MCP tools once their definitions pass a tenth of the context window
//     (agentdef.MCPOnDemand). A definition that names a tool gets it
//     loaded.
//   - The search is plain: "select:A,B" loads those by name, other words
//     load up to five tools whose names (weighted) or descriptions hold
//     them. A miss is an error listing what can be loaded, so one more
//     call always gets there.
//   - The listing lives in ToolSearch's description, beside the tool that
//     loads them, so an agent without on-demand tools has neither.
//     ToolSearch and the deferred tools come after every loaded tool, so
//     a subagent's array still starts with the lead's (crew's shared
//     cache prefix).
//   - A call of a deferred tool that was never loaded runs like any other
//     (its input is checked against its schema): refusing it would only
//     cost a round trip.
//   - Providers without deferred loading (llm/openai) send a deferred tool
//     only once a reference loads it, at the array's end.
package toolsearch

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
)

// Name is the search tool's name, Claude Code's.
const Name = "ToolSearch"

// maxResults bounds the tools one keyword search loads.
const maxResults = 5

// Offer arranges a pool whose tools onDemand picks are offered on demand:
// the others in their order, then ToolSearch listing the picked ones, then
// the picked ones marked deferred. It returns tools itself when onDemand
// picks none. A tool that must be seen whole to be prepared or described
// (tool.Preparer, tool.PromptDescriber) is never deferred: the wrapper
// would hide those sides.
func Offer(tools []tool.Tool, onDemand func(name string) bool) []tool.Tool {
	var now, later []tool.Tool
	for _, t := range tools {
		_, prepares := t.(tool.Preparer)
		_, describes := t.(tool.PromptDescriber)
		if onDemand(t.Def().Name) && !prepares && !describes {
			later = append(later, deferred{t})
			continue
		}
		now = append(now, t)
	}
	if len(later) == 0 || len(now) == 0 {
		return tools
	}
	out := make([]tool.Tool, 0, len(tools)+1)
	out = append(out, now...)
	out = append(out, newSearch(later))
	return append(out, later...)
}

// deferred is a tool offered on demand: its definition is marked Defer.
type deferred struct{ tool.Tool }

func (d deferred) Def() llm.ToolDef {
	def := d.Tool.Def()
	def.Defer = true
	return def
}

type input struct {
	Query string `json:"query"`
}

var schema = tool.Object(
	tool.Required("query", tool.String(`"select:NAME" loads that tool ("select:A,B" several); other words load the on-demand tools whose names or descriptions match them best.`).WithMinLength(1)),
)

const intro = `Loads tools that are offered on demand. They are yours to use, but only their names and summaries are here: call this tool with the ones you need, and from then on call them as you call any other tool.

Tools on demand:
`

// search is the ToolSearch tool of one pool.
type search struct {
	tool.Tool
	defs []llm.ToolDef // the deferred tools, in array order
}

func newSearch(later []tool.Tool) *search {
	s := &search{}
	var b strings.Builder
	b.WriteString(intro)
	for _, t := range later {
		d := t.Def()
		s.defs = append(s.defs, d)
		fmt.Fprintf(&b, "- %s: %s\n", d.Name, summary(d.Description))
	}
	s.Tool = tool.New(tool.Spec[input]{Name: Name, Description: strings.TrimSuffix(b.String(), "\n"), Input: schema,
		Traits: tool.Traits{ReadOnly: true, ConcurrencySafe: true}, Run: s.run})
	return s
}

// summary is the main clause of a description's first sentence: up to
// its first colon, dash, parenthesis, comma or "and", cut to about a
// line.
func summary(desc string) string {
	s, _, _ := strings.Cut(desc, "\n")
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSuffix(s, ".")
	end := len(s)
	for _, sep := range []string{": ", " — ", " (", ", ", " and "} {
		if i := strings.Index(s, sep); i >= 20 && i < end {
			end = i
		}
	}
	s = s[:end]
	const max = 100
	if len(s) > max {
		cut := strings.LastIndexByte(s[:max], ' ')
		if cut < max/2 {
			cut = max
		}
		s = s[:cut] + "…"
	}
	return s
}

func (s *search) run(_ context.Context, _ *tool.Env, in input) (tool.Result, error) {
	names, err := s.find(in.Query)
	if err != nil {
		return tool.Result{}, err
	}
	res := tool.Result{Response: map[string]any{"query": in.Query, "matches": names}}
	for _, n := range names {
		res.Content = append(res.Content, llm.ToolReference(n))
	}
	return res, nil
}

// find returns the deferred tools a query loads, or a Failure saying what
// can be loaded.
func (s *search) find(query string) ([]string, error) {
	q := strings.TrimSpace(query)
	if rest, ok := strings.CutPrefix(q, "select:"); ok {
		var names, unknown []string
		for _, n := range strings.Split(rest, ",") {
			n = strings.TrimSpace(n)
			if n == "" {
				continue
			}
			if i := slices.IndexFunc(s.defs, func(d llm.ToolDef) bool { return strings.EqualFold(d.Name, n) }); i >= 0 {
				if !slices.Contains(names, s.defs[i].Name) {
					names = append(names, s.defs[i].Name)
				}
				continue
			}
			unknown = append(unknown, n)
		}
		if len(unknown) > 0 || len(names) == 0 {
			return nil, tool.Failf("No tool on demand is named %s (a tool already in your tools needs no loading; call it directly). Tools you can load: %s.",
				strings.Join(unknown, ", "), s.list())
		}
		return names, nil
	}
	words := strings.Fields(strings.ToLower(q))
	type hit struct {
		name  string
		score int
	}
	var hits []hit
	for _, d := range s.defs {
		name, desc := strings.ToLower(d.Name), strings.ToLower(d.Description)
		score := 0
		for _, w := range words {
			switch {
			case name == w:
				score += 10
			case strings.Contains(name, w):
				score += 4
			case strings.Contains(desc, w):
				score++
			}
		}
		if score > 0 {
			hits = append(hits, hit{d.Name, score})
		}
	}
	if len(hits) == 0 {
		return nil, tool.Failf("No tool on demand matches %q. Tools you can load: %s; load one with select:NAME.", query, s.list())
	}
	slices.SortStableFunc(hits, func(a, b hit) int { return b.score - a.score })
	var names []string
	for _, h := range hits[:min(len(hits), maxResults)] {
		names = append(names, h.name)
	}
	return names, nil
}

func (s *search) list() string {
	names := make([]string, len(s.defs))
	for i, d := range s.defs {
		names[i] = d.Name
	}
	return strings.Join(names, ", ")
}
