package trace

import (
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/llm"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// view is what a test checks of one track.
type view struct {
	Name     string
	Spans    map[string]int
	Instants map[string]int
}

func views(sum Summary) []view {
	var out []view
	for _, tr := range sum.Tracks {
		out = append(out, view{tr.Name, tr.Spans, tr.Instants})
	}
	return out
}

func spans(kv ...any) map[string]int {
	m := map[string]int{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1].(int)
	}
	return m
}

// agentSpans is what a finished agent with n turns shows on its thread.
func agentSpans(n int) map[string]int { return spans("agent", 1, "turn", n, "model", n) }

var cmpEmpty = cmpopts.EquateEmpty()

var taskInstants = spans("task_started", 1, "task_notification", 1)

func leadWithThreeSubagents() []any {
	evs := []any{
		req("lead", "", 1),
		token("lead", ""),
		answer("lead", "", 1, "c1", "c2", "c3"),
		toolStart("lead", "", "c1", "Agent", `{"description":"find auth","prompt":"..."}`),
		toolStart("lead", "", "c2", "Agent", `{"description":"list tests","prompt":"..."}`),
		toolStart("lead", "", "c3", "Agent", `{"description":"read docs","prompt":"..."}`),
	}
	evs = append(evs, interleave(
		subagent("a01", "agent-1", "c1", "find auth"),
		subagent("a02", "agent-2", "c2", "list tests"),
		subagent("a03", "agent-3", "c3", "read docs"),
	)...)
	return append(evs,
		toolDone("lead", "", "c2", "Agent", false),
		toolDone("lead", "", "c1", "Agent", false),
		toolDone("lead", "", "c3", "Agent", false),
		req("lead", "", 2),
		answer("lead", "", 2),
	)
}

func TestWriterTracks(t *testing.T) {
	t.Parallel()
	tool1 := spans("tool", 1)
	tests := []struct {
		name       string
		events     []any
		want       []view
		unfinished int
	}{{
		name:   "lead and three subagents with parallel tool calls",
		events: leadWithThreeSubagents(),
		want: []view{
			{"lead", agentSpans(2), nil},
			{"lead · tools 1", tool1, nil},
			{"lead · tools 2", tool1, nil},
			{"lead · tools 3", tool1, nil},
			{"Explore: find auth", agentSpans(2), taskInstants},
			{"Explore: find auth · tools 1", tool1, nil},
			{"Explore: find auth · tools 2", tool1, nil},
			{"Explore: list tests", agentSpans(2), taskInstants},
			{"Explore: list tests · tools 1", tool1, nil},
			{"Explore: list tests · tools 2", tool1, nil},
			{"Explore: read docs", agentSpans(2), taskInstants},
			{"Explore: read docs · tools 1", tool1, nil},
			{"Explore: read docs · tools 2", tool1, nil},
		},
	}, {
		name: "sequential tool calls share one lane",
		events: []any{
			req("lead", "", 1), answer("lead", "", 1, "r1"),
			toolStart("lead", "", "r1", "Read", `{}`), toolDone("lead", "", "r1", "Read", false),
			req("lead", "", 2), answer("lead", "", 2, "r2"),
			toolStart("lead", "", "r2", "Read", `{}`), toolDone("lead", "", "r2", "Read", true),
			req("lead", "", 3), answer("lead", "", 3),
		},
		want: []view{{"lead", agentSpans(3), nil}, {"lead · tools 1", spans("tool", 2), nil}},
	}, {
		name: "spans open at Close end there, unfinished",
		events: []any{
			req("lead", "", 1), answer("lead", "", 1, "c1"),
			toolStart("lead", "", "c1", "Agent", `{}`),
			started("a01", "local_agent", "c1", "stuck", "general-purpose"),
			req("agent-1", "c1", 1),
		},
		want: []view{
			{"lead", spans("agent", 1, "turn", 1, "model", 1), nil},
			{"lead · tools 1", tool1, nil},
			{"general-purpose: stuck", spans("agent", 1, "turn", 1, "model", 1), spans("task_started", 1)},
		},
		// lead: agent, turn, Agent call; subagent: agent, turn, request.
		unfinished: 6,
	}, {
		name: "a background shell is a span on its caller's lane",
		events: []any{
			req("lead", "", 1), answer("lead", "", 1, "b1"),
			toolStart("lead", "", "b1", "Bash", `{"command":"make test","run_in_background":true}`),
			started("b01", "local_bash", "b1", "make test", ""),
			toolDone("lead", "", "b1", "Bash", false),
			req("lead", "", 2), answer("lead", "", 2),
			notified("b01", "b1", "completed"),
		},
		want: []view{
			{"lead", agentSpans(2), taskInstants},
			{"lead · tools 1", tool1, nil},
			{"lead · tools 2", spans("task", 1), nil},
		},
	}, {
		name: "engine events before task_started bind to its track",
		events: []any{
			req("agent-1", "c1", 1),
			started("a01", "local_agent", "c1", "late start", "Plan"),
			answer("agent-1", "c1", 1),
			notified("a01", "c1", "failed"),
		},
		want: []view{{"Plan: late start", agentSpans(1), taskInstants}},
	}, {
		name: "an agent resumed under a new task stays on its track",
		events: append(subagent("a01", "agent-1", "c1", "first run"),
			started("a02", "local_agent", "m1", "resumed", "Explore"),
			req("agent-1", "m1", 3), answer("agent-1", "m1", 3),
			notified("a02", "m1", "completed"),
		),
		want: []view{
			{"Explore: resumed", spans("agent", 2, "turn", 3, "model", 3), spans("task_started", 2, "task_notification", 2)},
			{"Explore: resumed · tools 1", tool1, nil},
			{"Explore: resumed · tools 2", tool1, nil},
		},
	}, {
		name: "an agent task without engine events gets its track when it ends",
		events: []any{
			started("r01", "remote_agent", "c1", "far away", ""),
			req("lead", "", 1), answer("lead", "", 1),
			progress("r01", "c1"),
			notified("r01", "c1", "completed"),
		},
		want: []view{
			{"lead", agentSpans(1), nil},
			{"remote_agent: far away", spans("agent", 1), taskInstants},
		},
	}, {
		name: "an agent task still waiting at Close",
		events: []any{
			req("lead", "", 1), answer("lead", "", 1),
			started("a01", "local_agent", "c1", "queued", "Plan"),
		},
		want: []view{
			{"lead", agentSpans(1), nil},
			{"Plan: queued", spans("agent", 1), spans("task_started", 1)},
		},
		unfinished: 1,
	}, {
		name: "retries and compactions are instants",
		events: []any{
			req("lead", "", 1), retry("lead", ""), token("lead", ""), answer("lead", "", 1),
			compacted("lead", ""), req("lead", "", 2), answer("lead", "", 2),
		},
		want: []view{{"lead", agentSpans(2), spans("retry", 1, "compact", 1)}},
	}, {
		name: "a second agent without a parent call is named by its id",
		events: []any{
			req("lead", "", 1), req("mate-1", "", 1), answer("mate-1", "", 1), answer("lead", "", 1),
		},
		want: []view{{"lead", agentSpans(1), nil}, {"agent mate-1", agentSpans(1), nil}},
	}, {
		name: "a new request cuts off an unanswered one",
		events: []any{
			req("lead", "", 1), req("lead", "", 2), answer("lead", "", 2),
		},
		want:       []view{{"lead", agentSpans(2), nil}},
		unfinished: 2, // turn 1 and its request
	}, {
		name: "ends without starts become instants",
		events: []any{
			toolDone("lead", "", "x1", "Read", false), answer("lead", "", 1),
			notified("a09", "c9", "completed"),
		},
		want: []view{{"lead", spans("agent", 1), spans("tool done", 1, "model response", 1, "task_notification", 1)}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w, path := newWriter(t, Config{Session: "s1"})
			feed(w, tt.events...)
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			sum := validateFile(t, path)
			if diff := cmp.Diff(tt.want, views(sum), cmpEmpty); diff != "" {
				t.Errorf("tracks (-want +got):\n%s", diff)
			}
			if sum.Unfinished != tt.unfinished {
				t.Errorf("unfinished spans = %d, want %d", sum.Unfinished, tt.unfinished)
			}
			if sum.Process != "cohort s1" || sum.Truncated {
				t.Errorf("process %q, truncated %v; want \"cohort s1\", false", sum.Process, sum.Truncated)
			}
		})
	}
}

func TestWriterLeadSortsFirst(t *testing.T) {
	t.Parallel()
	// The subagent's task starts before the lead's first event reaches
	// the writer; the lead still comes first.
	w, path := newWriter(t, Config{})
	feed(w, started("a01", "local_agent", "c1", "early", "Explore"), req("lead", "", 1), answer("lead", "", 1))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tr := range validateFile(t, path).Tracks {
		names = append(names, tr.Name)
	}
	if diff := cmp.Diff([]string{"lead", "Explore: early"}, names); diff != "" {
		t.Errorf("track order (-want +got):\n%s", diff)
	}
}

func TestWriterArgs(t *testing.T) {
	t.Parallel()
	w, path := newWriter(t, Config{})
	long := strings.Repeat("x", 5000)
	feed(w,
		req("lead", "", 1), token("lead", ""), answer("lead", "", 1, "r1"),
		toolStart("lead", "", "r1", "Read", `{ "file_path" : "/a/b.go",
			"limit": 10 }`),
		toolDone("lead", "", "r1", "Read", true),
		req("lead", "", 2), answer("lead", "", 2, "w1"),
		toolStart("lead", "", "w1", "Write", `{"file_path":"/x","content":"`+long+`"}`),
	)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	evs := fileEvents(t, path)

	reqs := find(evs, "X", "model request")
	if len(reqs) != 2 {
		t.Fatalf("%d model request spans, want 2", len(reqs))
	}
	args := reqs[0]["args"].(map[string]any)
	usage := args["usage"].(map[string]any)
	if args["model"] != "claude-test" || args["stop_reason"] != "tool_use" || args["turn"] != 1.0 ||
		usage["input_tokens"] != 100.0 || usage["cache_read_input_tokens"] != 1000.0 {
		t.Errorf("model request args = %v", args)
	}
	if ft, ok := args["first_token_ms"].(float64); !ok || ft <= 0 {
		t.Errorf("first_token_ms = %v, want a positive time", args["first_token_ms"])
	}

	read := find(evs, "X", "Read")
	if len(read) != 1 {
		t.Fatalf("%d Read spans, want 1", len(read))
	}
	want := map[string]any{"tool": "Read", "tool_use_id": "r1", "input": `{"file_path":"/a/b.go","limit":10}`,
		"is_error": true, "error": "no such file", "duration_ms": 3.0}
	if diff := cmp.Diff(want, read[0]["args"]); diff != "" {
		t.Errorf("Read args (-want +got):\n%s", diff)
	}

	write := find(evs, "X", "Write")
	if len(write) != 1 {
		t.Fatalf("%d Write spans, want 1", len(write))
	}
	wa := write[0]["args"].(map[string]any)
	in := wa["input"].(string)
	if n := len([]rune(in)); n != argCap || !strings.HasPrefix(in, `{"file_path":"/x","content":"xxx`) || !strings.HasSuffix(in, "…") {
		t.Errorf("Write input summary has %d runes: %q", n, in)
	}
	if wa["unfinished"] != true {
		t.Errorf("the Write call open at Close is not unfinished: %v", wa)
	}
}

func TestWriterCloseIdempotentAndIgnoresLateEvents(t *testing.T) {
	t.Parallel()
	w, path := newWriter(t, Config{})
	feed(w, req("lead", "", 1), answer("lead", "", 1))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	feed(w, req("lead", "", 2), started("a1", "local_agent", "c", "late", "x"))
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := w.Flush(); err != nil {
		t.Errorf("Flush after Close: %v", err)
	}
	if sum := validateFile(t, path); sum.Spans["turn"] != 1 || len(sum.Tracks) != 1 {
		t.Errorf("events after Close were written: %+v", sum)
	}
}

func TestClip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly10!", 10, "exactly10!"},
		{"eleven runes", 10, "eleven ru…"},
		{"héllo wörld", 5, "héll…"},
		{"bad\xffutf8", 20, "bad\uFFFDutf8"},
	}
	for _, tt := range tests {
		if got := fit(tt.in, tt.n); got != tt.want {
			t.Errorf("fit(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}

func TestMicros(t *testing.T) {
	t.Parallel()
	for ns, want := range map[int64]string{0: "0", 999: "0.999", 1000: "1", 1500: "1.5", 1234567: "1234.567", 1000010: "1000.01", -1500: "-1.5"} {
		if got := string(micros(ns)); got != want {
			t.Errorf("micros(%d) = %s, want %s", ns, got, want)
		}
	}
}

// TestWriterPricesEachAgent: with Prices, each model request carries its
// cost and each agent span its agents' total usage and cost.
func TestWriterPricesEachAgent(t *testing.T) {
	t.Parallel()
	prices := llm.PriceTable{"claude-test": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}}
	w, path := newWriter(t, Config{Prices: prices})
	evs := []any{req("lead", "", 1), token("lead", ""), answer("lead", "", 1, "c1"),
		toolStart("lead", "", "c1", "Agent", `{"description":"look","prompt":"..."}`)}
	evs = append(evs, subagent("a01", "agent-1", "c1", "look")...)
	evs = append(evs, toolDone("lead", "", "c1", "Agent", false), req("lead", "", 2), answer("lead", "", 2))
	feed(w, evs...)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	events := fileEvents(t, path)
	one := prices.Cost("claude-test", llm.Usage{InputTokens: 100, OutputTokens: 20, CacheReadInputTokens: 1000})
	for _, r := range find(events, "X", "model request") {
		if c := r["args"].(map[string]any)["cost_usd"]; c != one {
			t.Errorf("a request's cost_usd = %v, want %v", c, one)
		}
	}
	var agents []map[string]any
	for _, e := range events {
		if e["ph"] == "X" && e["cat"] == "agent" {
			agents = append(agents, e)
		}
	}
	if len(agents) != 2 {
		t.Fatalf("%d agent spans, want 2", len(agents))
	}
	for _, a := range agents {
		args := a["args"].(map[string]any)
		n := 0
		for _, r := range find(events, "X", "model request") {
			if r["tid"] == a["tid"] {
				n++
			}
		}
		if c, _ := args["cost_usd"].(float64); n == 0 || c < float64(n)*one*0.999 || c > float64(n)*one*1.001 {
			t.Errorf("agent %v: cost_usd %v for %d requests of %v", args["agent_id"], args["cost_usd"], n, one)
		}
	}
}
