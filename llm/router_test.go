package llm

import (
	"context"
	"errors"
	"iter"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// echo answers with the model id it was asked for, under its own name.
type echo struct{ name string }

func (e echo) Stream(_ context.Context, req *Request) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		yield(Event{Type: EventDone, Response: &Response{Model: req.Model, Content: []Block{Text(e.name)}}}, nil)
	}
}

func TestRouter(t *testing.T) {
	r := &Router{Default: echo{"claude"}, Routes: map[string]Model{"openai": echo{"openai"}, "off": Failing{errors.New("openai-responses is not configured")}}}
	tests := []struct {
		model, served, reported, err string
	}{
		{"claude-sonnet-5-5", "claude", "claude-sonnet-5-5", ""},
		{"openai/qwen3", "openai", "openai/qwen3", ""},
		{"meta-llama/llama-3-70b", "claude", "meta-llama/llama-3-70b", ""},
		{"off/x", "", "", "not configured"},
	}
	for _, tt := range tests {
		resp, err := Collect(r.Stream(t.Context(), &Request{Model: tt.model}))
		if tt.err != "" {
			if err == nil || err.Error() != "openai-responses is not configured" {
				t.Errorf("%s: error %v", tt.model, err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if got := []string{resp.Content[0].Text, resp.Model}; !cmp.Equal(got, []string{tt.served, tt.reported}) {
			t.Errorf("%s: served by %s as %s, want %s as %s", tt.model, got[0], got[1], tt.served, tt.reported)
		}
	}
	if _, err := Collect((&Router{}).Stream(t.Context(), &Request{Model: "x"})); err == nil {
		t.Error("a router without a default served a request")
	}
}

func TestPriceLookupWithoutRoute(t *testing.T) {
	table := PriceTable{"gpt-4.1": {Input: 2, Output: 8}, "claude-haiku": {Input: 1}}
	for _, tt := range []struct {
		model string
		want  float64
	}{{"openai/gpt-4.1", 2}, {"gpt-4.1-mini", 2}, {"anthropic/claude-haiku-5-5", 1}, {"openai/qwen3", 0}} {
		if p, _ := table.Lookup(tt.model); p.Input != tt.want {
			t.Errorf("%s: input price %v, want %v", tt.model, p.Input, tt.want)
		}
	}
}
