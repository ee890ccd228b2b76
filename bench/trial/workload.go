package trial

import (
	"fmt"
	"strconv"
	"time"

	"github.com/cohort-dev/cohort/bench/scenario"
)

// Workload is a named end-to-end benchmark with its targets.
type Workload struct {
	Name string
	// Issue is the issue whose target this is.
	Issue string
	Spec  scenario.Spec
	// MaxConcurrent is --max-concurrent-agents (0: the default, 32).
	MaxConcurrent int
	// Runs is how many runs the median is taken over by default.
	Runs int
	// TargetWall and TargetRSS are the issue's targets (wall time and peak
	// RSS of the cohort process).
	TargetWall time.Duration
	TargetRSS  int64
	// Reference describes the comparison figure the issue gives, if any.
	Reference string
	// Floor also runs bench/cmd/minclient on the workload, alternating
	// with cohort, so the table shows what a program doing only the same
	// requests and Bash calls takes here.
	Floor bool
	// FakeArgs are fakeserve's arguments for the workload (the pace).
	FakeArgs []string `json:",omitempty"`
}

// scale is issue 5's workload: 1,000 background agents of three tool turns
// each, launched by the lead in ten messages of 100 Agent calls. (Not one
// message of 1,000: a real model cannot write ~80 K tokens of tool calls in
// one reply, and the request carrying them back would be over the 200 K
// window that fakeserve, like the API, enforces.)
var scale = scenario.Spec{Agents: 1000, Turns: 3, PerMessage: 100, Tools: scenario.ToolsMixed, Background: true}

// Workloads are the end-to-end benchmarks of issues 4 and 5.
var Workloads = []Workload{
	{
		Name: "parallel-10x5", Issue: "issue 4",
		Spec: scenario.Spec{Agents: 10, Turns: 5, Tools: scenario.ToolsBash},
		Runs: 7, TargetWall: 240 * time.Millisecond, TargetRSS: 62 << 20,
		Reference: "a Node-based CLI: about 2.4 s and 310 MB", Floor: true,
	},
	{
		Name: "scale-1000x3-limit1000", Issue: "issue 5",
		Spec: scale, MaxConcurrent: 1000, Runs: 3, TargetWall: 10 * time.Second, TargetRSS: 500 << 20,
	},
	{
		Name: "scale-1000x3-limit32", Issue: "issue 5",
		Spec: scale,
		Runs: 3, TargetWall: 10 * time.Second, TargetRSS: 500 << 20,
	},
}

// Pace is how fast the fake model answers in the paced workloads.
type Pace struct {
	FirstToken      time.Duration
	TokensPerSecond float64
	// Brief is the size of the lead's Agent prompts, in bytes.
	Brief int
}

// ModelPace is a real model's pace as issue 40 measures at: 500 ms to the
// first token, 100 output tokens a second, 400-byte briefs.
var ModelPace = Pace{FirstToken: 500 * time.Millisecond, TokensPerSecond: 100, Brief: 400}

// Paced are the fan-out workloads at a model's pace (benchall -pace): ten
// subagents of five Bash turns, and five of two, with the lead writing
// briefs of p.Brief bytes and the fake streaming at p's rate. Each runs
// beside the minimal client.
func Paced(p Pace) []Workload {
	args := []string{"-first-token", p.FirstToken.String(), "-tps", strconv.FormatFloat(p.TokensPerSecond, 'g', -1, 64)}
	w := func(agents, turns int) Workload {
		return Workload{Name: fmt.Sprintf("pace-%dx%d-brief%d", agents, turns, p.Brief), Issue: "issue 40",
			Spec: scenario.Spec{Agents: agents, Turns: turns, Tools: scenario.ToolsBash, Brief: p.Brief},
			Runs: 5, Floor: true, FakeArgs: args}
	}
	return []Workload{w(10, 5), w(5, 2)}
}
