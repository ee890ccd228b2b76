package cost

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// The fork and team workloads have no bench/scenario spec: their policies
// are here. Each worker runs Turns Bash calls, one a turn, then reports.

// Custom is a workload with its own policy.
type Custom struct {
	Name string
	// Prompt is the lead's; Flags and TeammateMode configure the session.
	Prompt       string
	Flags        []string
	TeammateMode string
	// Agents is how many it starts below the lead.
	Agents int
	// TeammateBin is the cohort binary that runs teammates in tmux panes
	// (TeammateMode "tmux"); such a run needs tmux.
	TeammateBin string
	// Policy makes a fresh policy for one run, and Check says whether
	// the run did the whole work.
	Policy func() (fakeapi.Policy, func() error)
}

// Customs are the fork and team workloads of the cost table.
var Customs = []Custom{
	{Name: "fork-5x2", Prompt: "cost-fork: fan out five forks", Flags: []string{"fork_subagent=on"}, Agents: 5,
		Policy: func() (fakeapi.Policy, func() error) { return workers("cost-fork", 5, 2, false) }},
	{Name: "team-3x2", Prompt: "cost-team: run a team of three", TeammateMode: "in-process", Agents: 3,
		Policy: func() (fakeapi.Policy, func() error) { return workers("cost-team", 3, 2, true) }},
}

// TmuxTeam is team-3x2 with each teammate a process of its own in a tmux
// pane, run by bin.
func TmuxTeam(bin string) Workload {
	c := Customs[1]
	c.Name, c.TeammateMode, c.TeammateBin = "team-tmux-3x2", "tmux", bin
	return Workload{Name: c.Name, Custom: &c}
}

var workerTag = regexp.MustCompile(`worker-task-(\d+)`)

// workers is the policy of a lead that starts n workers in one message
// (forks, or teammates of a team it creates first) that each make turns
// Bash calls and then report.
func workers(lead string, n, turns int, team bool) (fakeapi.Policy, func() error) {
	done := make(chan int, n*4)
	pol := func(r *fakeapi.Request) fakeapi.Reply {
		first := r.FirstUserText()
		if m := workerTag.FindStringSubmatch(lastDirective(r)); m != nil && (team || strings.Contains(first, lead)) {
			k := workerTurn(r, m[0])
			if k < turns {
				return fakeapi.ToolReply("", "Bash", map[string]any{"command": "echo " + m[1] + "-" + strconv.Itoa(k), "description": "work"})
			}
			if k == turns {
				done <- 1
			}
			if team {
				if k == turns {
					return fakeapi.ToolReply("", "SendMessage", map[string]any{"to": "team-lead", "message": "worker " + m[1] + " done", "summary": "done"})
				}
				return fakeapi.TextReply("worker " + m[1] + " idle")
			}
			return fakeapi.TextReply("worker " + m[1] + " done")
		}
		if !strings.Contains(first, lead) {
			return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "cost: no rule for " + first}}
		}
		switch r.Turn() {
		case 0:
			if team {
				return fakeapi.ToolReply("", "TeamCreate", map[string]any{"team_name": "costs", "description": "cost run"})
			}
			return spawn(n, false)
		case 1:
			if team {
				return spawn(n, true)
			}
		}
		return fakeapi.TextReply("noted")
	}
	check := func() error {
		if got := len(done); got != n {
			return fmt.Errorf("%d of %d workers finished their work", got, n)
		}
		return nil
	}
	return pol, check
}

func spawn(n int, team bool) fakeapi.Reply {
	var blocks []fakeapi.Block
	for i := 1; i <= n; i++ {
		in := map[string]any{"description": fmt.Sprint("worker ", i), "prompt": fmt.Sprintf("worker-task-%d: run the commands", i)}
		if team {
			in["team_name"], in["name"] = "costs", fmt.Sprint("worker", i)
		}
		blocks = append(blocks, fakeapi.ToolUseBlock("", "Agent", in))
	}
	return fakeapi.Reply{Content: blocks}
}

// lastDirective is the text of the user message that gave a worker its
// task: a fork's directive (late in the lead's conversation it copies) or
// a teammate's first prompt.
func lastDirective(r *fakeapi.Request) string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		m := r.Messages[i]
		if m.Role != "user" {
			continue
		}
		for _, b := range m.Content {
			if b.Type == "text" && workerTag.MatchString(b.Text) && !strings.Contains(b.Text, "<task-notification>") {
				return b.Text
			}
		}
	}
	return ""
}

// workerTurn counts the worker's own assistant messages: those after the
// message that carries its task.
func workerTurn(r *fakeapi.Request, tag string) int {
	at := -1
	for i, m := range r.Messages {
		if m.Role != "user" {
			continue
		}
		for _, b := range m.Content {
			if b.Type == "text" && strings.Contains(b.Text, tag) && !strings.Contains(b.Text, "<task-notification>") {
				at = i
			}
		}
	}
	k := 0
	for _, m := range r.Messages[at+1:] {
		if m.Role == "assistant" {
			k++
		}
	}
	return k
}
