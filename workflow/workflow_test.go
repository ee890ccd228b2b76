package workflow

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func mustLoad(t *testing.T, src string) *Script {
	t.Helper()
	s, err := Load("flow.js", src)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func runJSON(t *testing.T, src string, cfg Config) (any, Result) {
	t.Helper()
	res, err := Run(t.Context(), mustLoad(t, src), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(res.Value, &v); err != nil {
		t.Fatal(err)
	}
	return v, res
}

const head = "export const meta = {name: 'w', description: 'a test workflow'}\n"

// Claude Code's documented patterns, run unchanged against scripted agents.
func TestPatterns(t *testing.T) {
	tests := []struct {
		name   string
		script string
		args   string
		answer func(AgentRequest) (string, error)
		want   any
		calls  int64
	}{{
		name: "pipeline review then verify",
		script: head + `
const files = args.files
const out = await pipeline(files,
  (f) => agent("review " + f, {label: "review " + f, phase: "review"}),
  (review, f) => agent("verify: " + review, {label: "verify " + f, phase: "verify"}))
return out`,
		args:   `{"files": ["a.go", "b.go", "c.go"]}`,
		answer: echo,
		want:   []any{"done: verify: done: review a.go", "done: verify: done: review b.go", "done: verify: done: review c.go"},
		calls:  6,
	}, {
		name: "barrier with dedup",
		script: head + `
const found = await parallel(["x", "y", "z"].map(area => () => agent("find bugs in " + area)))
const unique = [...new Set(found.flatMap(r => r.split(",")))].sort()
return await parallel(unique.map(b => () => agent("fix " + b)))`,
		answer: func(r AgentRequest) (string, error) {
			switch r.Prompt {
			case "find bugs in x":
				return "b1,b2", nil
			case "find bugs in y":
				return "b2", nil
			case "find bugs in z":
				return "b1,b3", nil
			}
			return "fixed " + strings.TrimPrefix(r.Prompt, "fix "), nil
		},
		want:  []any{"fixed b1", "fixed b2", "fixed b3"},
		calls: 6,
	}, {
		name: "loop until count",
		script: head + `
const ideas = []
let round = 0
while (ideas.length < 5) {
  const batch = await agent("more ideas, round " + round++)
  ideas.push(...batch.split(","))
}
return ideas.slice(0, 5)`,
		answer: func(r AgentRequest) (string, error) { return "i,j", nil },
		want:   []any{"i", "j", "i", "j", "i"},
		calls:  3,
	}, {
		name: "loop until dry",
		script: head + `
let found = 0, round = 0
for (;;) {
  const r = await agent("look again " + round++)
  if (r === "nothing") break
  found++
}
return found`,
		answer: func(r AgentRequest) (string, error) {
			if strings.HasSuffix(r.Prompt, " 3") {
				return "nothing", nil
			}
			return "something", nil
		},
		want:  float64(3),
		calls: 4,
	}, {
		name: "judge panel",
		script: head + `
const drafts = await parallel([1, 2, 3].map(i => () => agent("draft " + i)))
const votes = await parallel(["a", "b", "c"].map(j => () => agent("judge " + j + " picks among " + drafts.join("|"))))
const tally = {}
for (const v of votes) tally[v] = (tally[v] || 0) + 1
return Object.entries(tally).sort((x, y) => y[1] - x[1])[0][0]`,
		answer: func(r AgentRequest) (string, error) {
			if strings.HasPrefix(r.Prompt, "judge c") {
				return "draft 1", nil
			}
			if strings.HasPrefix(r.Prompt, "judge") {
				return "draft 2", nil
			}
			return r.Prompt, nil
		},
		want:  "draft 2",
		calls: 6,
	}, {
		name: "a throwing stage drops its item to null",
		script: head + `
return await pipeline([1, 2, 3], async (x) => { if (x === 2) throw new Error("no"); return agent("item " + x) })`,
		answer: echo,
		want:   []any{"done: item 1", nil, "done: item 3"},
		calls:  2,
	}, {
		name:   "a failed agent is null",
		script: head + `return [await agent("fails"), await agent("works")]`,
		answer: func(r AgentRequest) (string, error) {
			if r.Prompt == "fails" {
				return "", errors.New("agent died")
			}
			return "ok", nil
		},
		want:  []any{nil, "ok"},
		calls: 2,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp := &scripted{answer: tt.answer}
			got, _ := runJSON(t, tt.script, Config{Spawner: sp, Args: json.RawMessage(tt.args)})
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if n := sp.calls.Load(); n != tt.calls {
				t.Errorf("agents spawned = %d, want %d", n, tt.calls)
			}
		})
	}
}

func TestNestedWorkflow(t *testing.T) {
	child := mustLoad(t, `export const meta = {name: 'child', description: 'inner'}
const r = await agent("inner " + args.topic)
return {inner: r}`)
	grandchild := mustLoad(t, `export const meta = {name: 'deep', description: 'too deep'}
return await workflow("child", {})`)
	resolve := func(name string) (*Script, error) {
		switch name {
		case "child":
			return child, nil
		case "deep":
			return grandchild, nil
		}
		return nil, fmt.Errorf("no saved workflow %q", name)
	}
	sp := &scripted{answer: echo}
	got, _ := runJSON(t, head+`
const a = await workflow("child", {topic: "cats"})
let deep
try { await workflow("deep", {}) } catch (e) { deep = e.message }
return {a, outerArgs: args, deep}`, Config{Spawner: sp, Args: json.RawMessage(`{"x":1}`), Resolve: resolve})
	want := map[string]any{
		"a":         map[string]any{"inner": "done: inner cats"},
		"outerArgs": map[string]any{"x": float64(1)},
		"deep":      "workflow(): a nested workflow cannot start another (one level of nesting)",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestSchema(t *testing.T) {
	schema := `{type: "object", properties: {ok: {type: "boolean"}}, required: ["ok"]}`
	tries := map[string]int{}
	sp := &scripted{answer: func(r AgentRequest) (string, error) {
		first, _, _ := strings.Cut(r.Prompt, "\n")
		tries[first]++ // the spawner runs one call of each prompt at a time here
		switch {
		case first == "good":
			return "```json\n{\"ok\": true}\n```", nil
		case first == "second try" && tries[first] == 2:
			return `{"ok": false}`, nil
		default:
			return "sorry, no JSON", nil
		}
	}}
	got, _ := runJSON(t, head+`
const s = `+schema+`
return [await agent("good", {schema: s}), await agent("second try", {schema: s}), await agent("never", {schema: s})]`,
		Config{Spawner: sp, Concurrency: 1})
	want := []any{map[string]any{"ok": true}, map[string]any{"ok": false}, nil}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]int{"good": 1, "second try": 2, "never": 2}, tries); diff != "" {
		t.Errorf("attempts per call (-want +got):\n%s", diff)
	}
	if !strings.Contains(sp.prompts[0], `"required":["ok"]`) {
		t.Errorf("the agent was not told the schema: %q", sp.prompts[0])
	}
}

func TestDeterminismGuards(t *testing.T) {
	for _, expr := range []string{"Date.now()", "Math.random()", "new Date()", "Date()"} {
		t.Run(expr, func(t *testing.T) {
			sp := &scripted{answer: echo}
			_, err := Run(t.Context(), mustLoad(t, head+"const x = 1\nconst t = "+expr+"\nreturn t"), Config{Spawner: sp})
			if err == nil || !strings.Contains(err.Error(), "deterministic") || !strings.Contains(err.Error(), "flow.js:3") {
				t.Fatalf("err = %v, want a determinism error naming flow.js:3", err)
			}
		})
	}
	v, _ := runJSON(t, head+`return [new Date(0).toISOString(), Date.UTC(2020, 0, 1), typeof require, typeof process]`, Config{Spawner: &scripted{answer: echo}})
	want := []any{"1970-01-01T00:00:00.000Z", float64(1577836800000), "undefined", "undefined"}
	if diff := cmp.Diff(want, v); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestMetaMustBeLiteral(t *testing.T) {
	for _, meta := range []string{
		"{name: n, description: 'd'}",
		"{name: 'n', description: describe()}",
		"{...base, name: 'n', description: 'd'}",
		"{name: `n${x}`, description: 'd'}",
		"{[k]: 'n', description: 'd'}",
		"{name: 'n', description: 'd', phases: [p]}",
		"{name: 'n'}",
	} {
		t.Run(meta, func(t *testing.T) {
			_, err := Load("flow.js", "export const meta = "+meta+"\nawait agent('x')")
			if err == nil || !strings.Contains(err.Error(), "flow.js") {
				t.Fatalf("Load accepted meta %s (err %v)", meta, err)
			}
		})
	}
	s, err := Load("flow.js", "export const meta = {name: 'n', description: `plain`, whenToUse: \"x\", phases: [{title: 'one', detail: 'first'}]}\n")
	if err != nil {
		t.Fatal(err)
	}
	want := Meta{Name: "n", Description: "plain", WhenToUse: "x", Phases: []Phase{{Title: "one", Detail: "first"}}}
	if diff := cmp.Diff(want, s.Meta); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestBadScripts(t *testing.T) {
	tests := []struct{ name, body, want string }{
		{"throws", "const a = 1\nthrow new Error('boom')", "flow.js:3"},
		{"never settles", "await new Promise(() => {})", "never settles"},
		{"runaway loop", "let i = 0\nwhile (true) { i++ }", "without awaiting an agent"},
		{"reference error", "\nundefinedThing()", "flow.js:3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp := &scripted{answer: echo}
			_, err := Run(t.Context(), mustLoad(t, head+tt.body), Config{Spawner: sp, CPUSlice: 200 * time.Millisecond})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
	if _, err := Load("flow.js", head+"const = 3"); err == nil || !strings.Contains(err.Error(), "flow.js:2") {
		t.Fatalf("syntax error: %v, want flow.js:2", err)
	}
}

func TestLimits(t *testing.T) {
	t.Run("100 items with cap 4", func(t *testing.T) {
		// The first agents hold until four run at once, so the test sees the
		// cap reached, never passed, without depending on timing.
		release := make(chan struct{})
		var once sync.Once
		sp := &scripted{gate: release}
		sp.onStart = func(running int64) {
			if running == 4 {
				once.Do(func() { close(release) })
			}
		}
		sp.answer = echo
		got, _ := runJSON(t, head+`
const items = Array.from({length: 100}, (_, i) => i)
const r = await pipeline(items, i => agent("a " + i), p => agent("b " + p))
return r.filter(x => x !== null).length`, Config{Spawner: sp, Concurrency: 4, Timeout: time.Minute})
		if got != float64(100) {
			t.Fatalf("got %v results", got)
		}
		if p := sp.peak.Load(); p != 4 {
			t.Fatalf("peak concurrent agents = %d, want 4", p)
		}
		if n := sp.calls.Load(); n != 200 {
			t.Fatalf("%d agents spawned, want 200", n)
		}
	})
	t.Run("the 1001st agent throws", func(t *testing.T) {
		sp := &scripted{answer: echo}
		got, res := runJSON(t, head+`
for (let i = 0; i < 1000; i++) await agent("step " + i)
try { await agent("one too many") } catch (e) { return e.message }
return "no error"`, Config{Spawner: sp})
		if s, _ := got.(string); !strings.Contains(s, "limit per run") {
			t.Fatalf("got %v", got)
		}
		if res.Agents != 1000 || sp.calls.Load() != 1000 {
			t.Fatalf("agents = %d, spawned = %d", res.Agents, sp.calls.Load())
		}
	})
	t.Run("items beyond the bound", func(t *testing.T) {
		sp := &scripted{answer: echo}
		_, err := Run(t.Context(), mustLoad(t, head+"await parallel(Array.from({length: 11}, () => () => agent('x')))"), Config{Spawner: sp, MaxItems: 10})
		if err == nil || !strings.Contains(err.Error(), "11 items, more than the limit of 10") {
			t.Fatalf("err = %v", err)
		}
		if sp.calls.Load() != 0 {
			t.Fatal("agents ran past the item bound")
		}
	})
	t.Run("budget", func(t *testing.T) {
		sp := &scripted{answer: echo, cost: 0.25}
		got, res := runJSON(t, head+`
const done = []
try { for (;;) { await agent("work " + done.length); done.push(budget.remaining()) } }
catch (e) { return {done, total: budget.total, spent: budget.spent(), err: e.message} }`, Config{Spawner: sp, Budget: 1})
		m := got.(map[string]any)
		if diff := cmp.Diff([]any{0.75, 0.5, 0.25, 0.0}, m["done"]); diff != "" {
			t.Errorf("remaining after each agent (-want +got):\n%s", diff)
		}
		if !strings.Contains(m["err"].(string), "budget") || res.Live != 4 || m["total"] != 1.0 {
			t.Errorf("got %v, %d live agents", m, res.Live)
		}
	})
}
