package engine

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cohort-dev/cohort/budget"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
)

// capModel is priced at Sonnet's list price.
const capModel = "claude-sonnet-4-5"

// neverStops is a model that calls a tool every turn, forever, and counts
// what it answered: requests and their cost at list price, from its own
// records rather than the engine's.
type neverStops struct {
	usage    llm.Usage
	requests atomic.Int64
	mu       sync.Mutex
	cost     float64
}

func (m *neverStops) reply(*llm.Request) *llm.Response {
	n := m.requests.Add(1)
	m.mu.Lock()
	m.cost += llm.DefaultPrices.Cost(capModel, m.usage)
	m.mu.Unlock()
	return &llm.Response{Content: []llm.Block{use(fmt.Sprintf("t%d", n), "RO", `{"v":"again"}`)}, StopReason: llm.StopToolUse, Usage: m.usage}
}

func (m *neverStops) spent() float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cost
}

func newLedger(t *testing.T, session float64) *budget.Ledger {
	t.Helper()
	l, err := budget.Open(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.SetCaps(t.Context(), budget.Caps{USD: session, Label: "the session's budget"}, budget.Caps{}); err != nil {
		t.Fatal(err)
	}
	return l
}

// TestBudgetStopsBeforeTheCap: an agent on a model that never stops runs
// until its next request would cross its cap, and stops before sending
// it: what the model was paid stays under the cap, and one more request
// would have crossed it. The result says which cap.
func TestBudgetStopsBeforeTheCap(t *testing.T) {
	for _, tt := range []struct {
		name    string
		session float64
		own     budget.Caps
		label   string
	}{
		{"the agent's own cap", 0, budget.Caps{USD: 0.02, Label: `agent "w"'s maxBudgetUsd`}, `agent "w"'s maxBudgetUsd`},
		{"the session's cap", 0.02, budget.Caps{}, "the session's budget"},
		{"a token cap", 0, budget.Caps{Tokens: 5000, Label: `agent "w"'s maxTokens`}, `agent "w"'s maxTokens`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := &neverStops{usage: llm.Usage{InputTokens: 1000, OutputTokens: 100}}
			acc := newLedger(t, tt.session).Session().Child(tt.own, budget.Spend{})
			a := New(Config{Model: replyFunc(m.reply), ModelName: capModel, Tools: []tool.Tool{&probe{name: "RO", readOnly: true}}, Budget: acc})
			res, err := a.Send(t.Context(), []llm.Block{llm.Text("work forever")}, "")
			if err != nil {
				t.Fatal(err)
			}
			if res.Stop != StopBudget || res.Capped == nil || res.Capped.Label != tt.label {
				t.Fatalf("stop %q capped %+v", res.Stop, res.Capped)
			}
			per := llm.DefaultPrices.Cost(capModel, m.usage)
			n, spent := m.requests.Load(), m.spent()
			if tt.own.Tokens > 0 {
				// 1,100 tokens a request: four fit under 5,000, a fifth would not.
				if n != 4 || !strings.Contains(res.Capped.Error(), "5000 tokens") {
					t.Errorf("%d requests under a cap of 5000 tokens: %v", n, res.Capped)
				}
				return
			}
			if spent > 0.02 || spent+per <= 0.02 || n != int64(res.Turns) {
				t.Errorf("%d requests cost %v against a cap of 0.02 (one costs %v; %d turns)", n, spent, per, res.Turns)
			}
			if math.Abs(res.CostUSD-spent) > 1e-12 {
				t.Errorf("the result says %v, the model was paid %v", res.CostUSD, spent)
			}
		})
	}
}

// TestBudgetNothingSentOverTheCap: a cap below the first request's
// estimate sends nothing at all.
func TestBudgetNothingSentOverTheCap(t *testing.T) {
	m := &neverStops{usage: llm.Usage{InputTokens: 1000, OutputTokens: 100}}
	acc := newLedger(t, 0.0001).Session()
	a := New(Config{Model: replyFunc(m.reply), ModelName: capModel, Budget: acc})
	res, err := a.Send(t.Context(), []llm.Block{llm.Text("hello")}, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop != StopBudget || m.requests.Load() != 0 || res.Turns != 0 {
		t.Errorf("stop %q after %d requests", res.Stop, m.requests.Load())
	}
}

// TestBudgetAgentsAtOnceShareTheSessionCap: agents running at once on one
// session cap stop together under it, since each request holds its
// estimate while it is under way.
func TestBudgetAgentsAtOnceShareTheSessionCap(t *testing.T) {
	m := &neverStops{usage: llm.Usage{InputTokens: 1000, OutputTokens: 100}}
	l := newLedger(t, 0.05)
	var wg sync.WaitGroup
	for range 4 {
		a := New(Config{Model: replyFunc(m.reply), ModelName: capModel, Tools: []tool.Tool{&probe{name: "RO", readOnly: true}},
			Budget: l.Session().Child(budget.Caps{}, budget.Spend{})})
		wg.Go(func() {
			res, err := a.Send(context.Background(), []llm.Block{llm.Text("work forever")}, "")
			if err != nil || res.Stop != StopBudget {
				t.Errorf("%v %+v", err, res)
			}
		})
	}
	wg.Wait()
	per := llm.DefaultPrices.Cost(capModel, m.usage)
	if spent := m.spent(); spent > 0.05 || spent+per <= 0.05-per {
		t.Errorf("four agents made %d requests costing %v against 0.05 (one costs %v)", m.requests.Load(), spent, per)
	}
}

// TestEstimateSpend: the estimate prices the input as the last response
// was split (cache reads stay reads, what was added is a cache write) and
// the output as the mean so far; with no response yet, everything is a
// cache write and the output a guess.
func TestEstimateSpend(t *testing.T) {
	a := New(Config{ModelName: capModel})
	price := llm.DefaultPrices["claude-sonnet"]
	first := a.estimateSpend(capModel, 2000)
	want := (2500*price.CacheWrite + firstOutputGuess*price.Output) / 1e6
	if math.Abs(first.USD-want) > 1e-12 || first.Tokens != 2500+firstOutputGuess {
		t.Errorf("first estimate %+v, want $%v", first, want)
	}
	a.lastUsage = llm.Usage{InputTokens: 100, CacheReadInputTokens: 800, CacheCreationInputTokens: 100, OutputTokens: 60}
	a.usage = llm.Usage{OutputTokens: 300}
	a.responses = 3
	got := a.estimateSpend(capModel, 1500)
	// 1,000 covered: 800 read, 100 written, 100 input; 500 added, 625
	// with the margin, as writes.
	want = (800*price.CacheRead + 725*price.CacheWrite + 100*price.Input + 100*price.Output) / 1e6
	if math.Abs(got.USD-want) > 1e-12 || got.Tokens != 1725 {
		t.Errorf("estimate %+v, want $%v and 1725 tokens", got, want)
	}
}
