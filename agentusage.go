package cohort

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/teammate"
)

// AgentUsage is one agent's line in the per-agent list of a result event
// (`agents` in the JSON result): what the agent is, what it spent and how
// long it ran. Every agent of the session has one — the lead, subagents,
// background agents, forks, teammates in this process or in their own —
// and their costs add up to the result's total_cost_usd (a workflow run is
// not an agent: its agents are listed, not its node). Agents that have
// left memory (a long session's finished ones, see Agents) are summed in
// one line of kind "retired" whose ID is "retired" and Name says how many.
type AgentUsage struct {
	ID    string    `json:"id"`
	Name  string    `json:"name,omitempty"`
	Kind  string    `json:"kind"`
	Type  string    `json:"type,omitempty"`
	Model string    `json:"model,omitempty"`
	Usage llm.Usage `json:"usage"`
	// CostUSD is its lifetime cost.
	CostUSD float64 `json:"cost_usd"`
	// CacheReadRatio is the share of its input tokens read from the
	// prompt cache (0 when it sent none).
	CacheReadRatio float64 `json:"cache_read_ratio"`
	// DurationMs is how long it has run: from its start to its end, or to
	// now while it runs.
	DurationMs int64 `json:"duration_ms"`
}

// agentUsage is the per-agent list at now, in the order of Agents.
func (s *Session) agentUsage(now time.Time) []AgentUsage {
	infos, r := s.agentsAndRetired()
	out := make([]AgentUsage, 0, len(infos))
	for _, a := range infos {
		if a.Workflow != nil {
			continue // a workflow run's node: its agents have their lines
		}
		u := AgentUsage{ID: a.ID, Name: a.Name, Kind: a.Kind, Type: a.Type, Model: a.Model,
			Usage: a.Usage, CostUSD: a.CostUSD}
		if in := a.Usage.TotalInput(); in > 0 {
			u.CacheReadRatio = float64(a.Usage.CacheReadInputTokens) / float64(in)
		}
		if !a.Started.IsZero() {
			end := a.Ended
			if end.IsZero() {
				end = now
			}
			u.DurationMs = end.Sub(a.Started).Milliseconds()
		}
		out = append(out, u)
	}
	if r.Agents > 0 {
		u := AgentUsage{ID: "retired", Kind: "retired", Name: finishedAgents(r.Agents),
			Usage: r.Usage, CostUSD: r.CostUSD}
		if in := r.Usage.TotalInput(); in > 0 {
			u.CacheReadRatio = float64(r.Usage.CacheReadInputTokens) / float64(in)
		}
		out = append(out, u)
	}
	return out
}

func finishedAgents(n int) string {
	if n == 1 {
		return "1 finished agent"
	}
	return fmt.Sprintf("%d finished agents", n)
}

// addProcessMembers fills in what the teammates in processes of their own
// published (usage, cost, start and end) and adds those no longer in the
// team (shut down, or their team deleted), which the session still paid
// for.
func (s *Session) addProcessMembers(out []AgentInfo, seen map[string]bool) []AgentInfo {
	for _, pm := range s.team.ProcessMembers() {
		usage, cost := pm.Spend.Total()
		pm.Model = cmp.Or(mainModel(pm.Spend), pm.Model)
		if seen[pm.AgentID] {
			for i := range out {
				if out[i].ID == pm.AgentID && !out[i].InProcess {
					out[i].Usage, out[i].CostUSD = usage, cost
					out[i].Started, out[i].Ended = pm.Started, pm.Ended
					out[i].Model = cmp.Or(pm.Model, out[i].Model)
				}
			}
			continue
		}
		seen[pm.AgentID] = true
		out = append(out, AgentInfo{ID: pm.AgentID, Name: pm.Name, Team: pm.Team, Kind: "teammate",
			Type: pm.AgentType, Model: pm.Model, State: memberState(pm.State, AgentCompleted),
			Cwd: pm.Cwd, Worktree: pm.WorktreePath, PermissionMode: pm.Mode, Color: pm.Color, Depth: 1,
			Usage: usage, CostUSD: cost, Started: pm.Started, Ended: pm.Ended})
	}
	return out
}

// mainModel is the model that served most of a spend's tokens (what a
// teammate that inherits its model ran on); "" for none.
func mainModel(sp teammate.Spend) string {
	best, most := "", int64(-1)
	for _, model := range slices.Sorted(maps.Keys(sp)) {
		if n := sp[model].Total(); n > most {
			best, most = model, n
		}
	}
	return best
}
