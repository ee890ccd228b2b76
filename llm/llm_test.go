package llm

import (
	"encoding/json"
	"errors"
	"iter"
	"testing"
)

func TestCloneIsDeep(t *testing.T) {
	m := Message{Role: RoleUser, Content: []Block{
		ToolResult("t1", "out", false),
		ToolUse("t2", "Bash", json.RawMessage(`{"command":"ls"}`)),
	}}
	c := m.Clone()
	c.Content[0].Cache = true
	c.Content[0].Content[0].Text = "changed"
	c.Content[1].Input[2] = 'X'
	if m.Content[0].Cache || m.Content[0].Content[0].Text != "out" || string(m.Content[1].Input) != `{"command":"ls"}` {
		t.Fatalf("clone shares memory with the original: %+v", m)
	}
}

func TestCacheMarkerIsNeverPersisted(t *testing.T) {
	b := Text("x")
	b.Cache = true
	data, _ := json.Marshal(b)
	if string(data) != `{"type":"text","text":"x"}` {
		t.Fatalf("marshalled %s", data)
	}
}

func TestBreakpointsCountsEveryMarker(t *testing.T) {
	r := &Request{Tools: []ToolDef{{Name: "a", Cache: true}}, System: []Block{{Type: BlockText, Cache: true}},
		Messages: []Message{{Role: RoleUser, Content: []Block{{Type: BlockText, Cache: true}, {Type: BlockText}}}}}
	if n := r.Breakpoints(); n != 3 {
		t.Fatalf("Breakpoints = %d", n)
	}
}

func TestPriceLookupAndCost(t *testing.T) {
	p, ok := DefaultPrices.Lookup("claude-opus-5-5")
	if !ok || p.Input != 5 {
		t.Fatalf("opus price = %+v, %v", p, ok)
	}
	if _, ok := DefaultPrices.Lookup("unknown-model"); ok {
		t.Fatal("an unknown model should have no price")
	}
	u := Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000, CacheReadInputTokens: 1_000_000}
	if got := DefaultPrices.Cost("claude-sonnet-5-5", u); got != 3+15+0.3 {
		t.Fatalf("cost = %v", got)
	}
}

func TestCollect(t *testing.T) {
	done := func(yield func(Event, error) bool) {
		if !yield(Event{Type: EventDelta, Delta: "x"}, nil) {
			return
		}
		yield(Event{Type: EventDone, Response: &Response{ID: "m1"}}, nil)
	}
	if r, err := Collect(iter.Seq2[Event, error](done)); err != nil || r.ID != "m1" {
		t.Fatalf("Collect = %+v, %v", r, err)
	}
	cut := func(yield func(Event, error) bool) { yield(Event{Type: EventDelta}, nil) }
	if _, err := Collect(iter.Seq2[Event, error](cut)); !errors.Is(err, ErrIncomplete) {
		t.Fatalf("a stream without EventDone: %v", err)
	}
	boom := errors.New("boom")
	failing := func(yield func(Event, error) bool) { yield(Event{}, boom) }
	if _, err := Collect(iter.Seq2[Event, error](failing)); !errors.Is(err, boom) {
		t.Fatalf("errors pass through: %v", err)
	}
}
