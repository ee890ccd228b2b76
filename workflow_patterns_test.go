package cohort

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/internal/testbin"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

const patternHead = "export const meta = {name: 'p', description: 'a pattern'}\n"

// Claude Code's documented workflow patterns run unchanged through
// Session.RunWorkflow, every agent() a real subagent whose answer comes
// from the fake API.
func TestWorkflowPatternsOnTheFakeAPI(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		script string
		saved  map[string]string // saved workflows, by name
		answer func(prompt string) string
		want   string
		calls  int64
	}{{
		name: "barrier with dedup",
		script: patternHead + `
const found = await parallel(["x", "y", "z"].map(a => () => agent("wfp find bugs in " + a)))
const unique = [...new Set(found.flatMap(r => r.split(",")))].sort()
return await parallel(unique.map(b => () => agent("wfp fix " + b)))`,
		answer: func(p string) string {
			switch p {
			case "find bugs in x":
				return "b1,b2"
			case "find bugs in y":
				return "b2"
			case "find bugs in z":
				return "b1,b3"
			}
			return "fixed " + strings.TrimPrefix(p, "fix ")
		},
		want: `["fixed b1","fixed b2","fixed b3"]`, calls: 6,
	}, {
		name: "loop until count",
		script: patternHead + `
const ideas = []
let round = 0
while (ideas.length < 5) ideas.push(...(await agent("wfp ideas round " + round++)).split(","))
return ideas.slice(0, 5)`,
		answer: func(string) string { return "i,j" },
		want:   `["i","j","i","j","i"]`, calls: 3,
	}, {
		name: "loop until dry",
		script: patternHead + `
let found = 0, round = 0
for (;;) {
  if (await agent("wfp look again " + round++) === "nothing") break
  found++
}
return found`,
		answer: func(p string) string {
			if strings.HasSuffix(p, " 3") {
				return "nothing"
			}
			return "something"
		},
		want: `3`, calls: 4,
	}, {
		name: "judge panel",
		script: patternHead + `
const drafts = await parallel([1, 2, 3].map(i => () => agent("wfp draft " + i)))
const votes = await parallel(["a", "b", "c"].map(j => () => agent("wfp judge " + j + " picks among " + drafts.join("|"))))
const tally = {}
for (const v of votes) tally[v] = (tally[v] || 0) + 1
return Object.entries(tally).sort((x, y) => y[1] - x[1])[0][0]`,
		answer: func(p string) string {
			switch {
			case strings.HasPrefix(p, "judge c"):
				return "draft 1"
			case strings.HasPrefix(p, "judge"):
				return "draft 2"
			}
			return p
		},
		want: `"draft 2"`, calls: 6,
	}, {
		name:   "nested workflow",
		script: patternHead + `return [await workflow("inner", {n: 2}), await agent("wfp outer")]`,
		saved: map[string]string{"inner": patternHead + `
return await parallel([...Array(args.n).keys()].map(i => () => agent("wfp inner " + i)))`},
		answer: func(p string) string { return "did " + p },
		want:   `[["did inner 0","did inner 1"],"did outer"]`, calls: 3,
	}, {
		name: "schema: an off-schema answer is asked again, then null",
		script: patternHead + `
const schema = {type: "object", properties: {score: {type: "integer"}}, required: ["score"]}
return [await agent("wfp rate fixable", {schema}), await agent("wfp rate hopeless", {schema})]`,
		answer: func(p string) string {
			if strings.Contains(p, "hopeless") || !strings.Contains(p, "could not be used") {
				return "I think it is pretty good."
			}
			return "```json\n{\"score\": 7}\n```"
		},
		want: `[{"score":7},null]`, calls: 4,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			var calls atomic.Int64
			e.rt.on("wfp ", func(r *fakeapi.Request) fakeapi.Reply {
				calls.Add(1)
				first := r.FirstUserText()
				p := first[strings.Index(first, "wfp ")+4:]
				return fakeapi.TextReply(tc.answer(p))
			})
			for name, src := range tc.saved {
				path := filepath.Join(e.dir, ".claude", "workflows", name+".js")
				os.MkdirAll(filepath.Dir(path), 0o755)
				if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			script := filepath.Join(e.dir, "flow.js")
			if err := os.WriteFile(script, []byte(tc.script), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg := e.config()
			cfg.WorkflowHost = testbin.Workflow(t, raceEnabled)
			res := runWorkflow(t, e.open(cfg), WorkflowRequest{Script: script})
			if res.IsError {
				t.Fatalf("the run failed: %s", res.Result)
			}
			value, _, _ := strings.Cut(res.Result, "\n\n")
			var got, want any
			if err := json.Unmarshal([]byte(value), &got); err != nil {
				t.Fatalf("result %q: %v", res.Result, err)
			}
			json.Unmarshal([]byte(tc.want), &want)
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("value (-want +got):\n%s", d)
			}
			if calls.Load() != tc.calls {
				t.Errorf("the fake answered %d agents, want %d", calls.Load(), tc.calls)
			}
		})
	}
}

// runWorkflow runs req to its result, within a minute.
func runWorkflow(t *testing.T, s *Session, req WorkflowRequest) Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	var res Event
	for ev, err := range s.RunWorkflow(ctx, req) {
		if err != nil {
			t.Fatalf("RunWorkflow: %v", err)
		}
		res = ev
	}
	if res.Type != EventResult {
		t.Fatalf("RunWorkflow did not end with a result: %+v", res)
	}
	return res
}
