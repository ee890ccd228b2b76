package crew

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/tool"
)

// Retirement: eviction (evict.go) drops a finished agent's conversation,
// but its record — id, name, definition, queue, task, usage — would still
// stay for the session, a few KB for each agent a long session has run.
// With Config.Index set, an evicted agent whose task has ended leaves
// memory entirely: one JSON line with what it takes to resume it and to
// account for it is appended to the index file, and the record is dropped
// from the runtime's maps. Deliver looks an address it does not know up in
// the index (the last line for an id or name wins) and brings the agent
// back as an evicted one, which the resume then rebuilds from its
// transcript. What stays in memory is a count and the retired agents'
// summed usage and cost (Retired), so memory does not grow with the number
// of agents a session has finished.

// retiredRecord is one line of the index.
type retiredRecord struct {
	Agent    tool.Caller   `json:"agent"`
	Role     agentdef.Role `json:"role"`
	Usage    llm.Usage     `json:"usage"`
	CostUSD  float64       `json:"cost_usd"`
	Turns    int           `json:"turns,omitempty"`
	ToolUses int           `json:"tool_uses,omitempty"`
	// Task is its last task's record, for the listing of finished agents.
	TaskID      string    `json:"task_id,omitempty"`
	Description string    `json:"description,omitempty"`
	Status      string    `json:"status,omitempty"`
	Started     time.Time `json:"started"`
	Ended       time.Time `json:"ended"`
}

// RetiredTotals is what the agents that left memory add up to.
type RetiredTotals struct {
	Agents  int
	Usage   llm.Usage
	CostUSD float64
}

// Retired returns the totals of the agents whose records have left memory
// (Config.Index); they are not in Agents.
func (rt *Crew) Retired() RetiredTotals {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.retired
}

// retire moves a out of memory if it is still as it was at its end-th
// finish (evicted, not live) and its task has ended. The index line is
// written before the record leaves the maps, so an address that misses the
// maps finds it in the index.
func (rt *Crew) retire(a *Agent, end int) {
	if rt.cfg.Index == "" {
		return
	}
	rec, ok := a.retiredRecord(end)
	if !ok {
		return
	}
	line, err := json.Marshal(rec)
	if err == nil {
		rt.indexMu.Lock()
		err = appendIndex(rt.cfg.Index, line)
		rt.indexMu.Unlock()
	}
	if err != nil {
		return // it stays in memory, resumable as before
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.live || a.ends != end || a.engine != nil || a.busy > 0 || rt.agents[a.info.ID] != a {
		return // resumed meanwhile; the line is superseded by a later one
	}
	a.retired = true
	delete(rt.agents, a.info.ID)
	if name := a.info.Name; name != "" {
		rt.named[name] = slices.DeleteFunc(rt.named[name], func(b *Agent) bool { return b == a })
		if len(rt.named[name]) == 0 {
			delete(rt.named, name)
		}
	}
	rt.retired.Agents++
	rt.retired.Usage = rt.retired.Usage.Add(rec.Usage)
	rt.retired.CostUSD += rec.CostUSD
}

// retiredRecord returns a's index line, if a may retire now.
func (a *Agent) retiredRecord(end int) (retiredRecord, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.live || a.ends != end || a.engine != nil || a.busy > 0 || !a.evicted {
		return retiredRecord{}, false
	}
	rec := retiredRecord{Agent: a.info, Role: a.role, Usage: a.spent, CostUSD: a.spentUS}
	if r := a.result; r != nil {
		rec.Turns, rec.ToolUses = r.Turns, r.ToolUses
	}
	if a.task != nil {
		st := a.task.State()
		if !st.Status.Terminal() {
			return retiredRecord{}, false
		}
		rec.TaskID, rec.Description, rec.Status = st.ID, st.Description, string(st.Status)
		rec.Started, rec.Ended = st.StartTime, st.EndTime
	}
	return rec, true
}

func appendIndex(path string, line []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(append(line, '\n'))
	return errors.Join(err, f.Close())
}

// recall brings the retired agent with id or name to back into memory, as
// an evicted agent (a resume rebuilds its conversation from its
// transcript). ok is false when the index has no such agent.
func (rt *Crew) recall(to string) (*Agent, bool, error) {
	if rt.cfg.Index == "" {
		return nil, false, nil
	}
	rt.indexMu.Lock() // one recall at a time: two messages bring back one agent
	defer rt.indexMu.Unlock()
	if a, ok := rt.lookupAddress(to); ok {
		return a, true, nil
	}
	rec, ok, err := findRetired(rt.cfg.Index, to)
	if err != nil || !ok {
		return nil, false, err
	}
	def, known := rt.cfg.Catalog.Get(rec.Agent.Type)
	if !known {
		return nil, false, fmt.Errorf("agent %s cannot be resumed: its definition %q is no longer loaded", to, rec.Agent.Type)
	}
	a := &Agent{rt: rt, def: def, role: rec.Role, queue: task.NewQueue(), info: rec.Agent, evicted: true,
		spent: rec.Usage, spentUS: rec.CostUSD, ends: 1, prompter: rt.cfg.Prompter,
		result: &engine.Result{Turns: rec.Turns, ToolUses: rec.ToolUses}}
	if rt.cfg.Permissions != nil {
		a.checker = rt.cfg.Permissions.ForChild(rec.Agent.Mode)
	}
	rt.mu.Lock() // registered and no longer summed as retired at once (Snapshot)
	rt.registerLocked(a)
	rt.retired.Agents--
	rt.retired.Usage = subUsage(rt.retired.Usage, rec.Usage)
	rt.retired.CostUSD -= rec.CostUSD
	rt.mu.Unlock()
	return a, true, nil
}

// lookupAddress resolves to as Deliver does: an id, else a name.
func (rt *Crew) lookupAddress(to string) (*Agent, bool) {
	if a, ok := rt.Lookup(to); ok {
		return a, true
	}
	return rt.LookupName(to, true)
}

// findRetired returns the last index line for id or name to. A line that
// cannot be read fails the lookup only when no later line answers it.
func findRetired(path, to string) (retiredRecord, bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return retiredRecord{}, false, nil
	}
	if err != nil {
		return retiredRecord{}, false, fmt.Errorf("the index of finished agents at %s is unreadable: %v", path, err)
	}
	defer f.Close()
	var (
		found   retiredRecord
		ok      bool
		badLine int
		badErr  error
	)
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		var rec retiredRecord
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			badLine, badErr = n, err
			continue
		}
		if rec.Agent.ID == to || rec.Agent.Name == to {
			found, ok, badErr = rec, true, nil
		}
	}
	if err := sc.Err(); err != nil {
		return retiredRecord{}, false, fmt.Errorf("the index of finished agents at %s is unreadable: %v", path, err)
	}
	if !ok && badErr != nil {
		return retiredRecord{}, false, fmt.Errorf("agent %s is not in memory, and line %d of the index of finished agents at %s is unreadable (%v); message it by its id if you know it, or start a new agent", to, badLine, path, badErr)
	}
	return found, ok, nil
}

func subUsage(u, v llm.Usage) llm.Usage {
	return llm.Usage{InputTokens: u.InputTokens - v.InputTokens, OutputTokens: u.OutputTokens - v.OutputTokens,
		CacheCreationInputTokens: u.CacheCreationInputTokens - v.CacheCreationInputTokens,
		CacheReadInputTokens:     u.CacheReadInputTokens - v.CacheReadInputTokens}
}
