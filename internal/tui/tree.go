package tui

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cohort-dev/cohort"
)

// tree is the agent tree: the session's agents, parents before children,
// with totals. It is rebuilt from Session.Agents snapshots (never more
// often than refreshEvery while events pour in) and drawn virtualised:
// only the rows on screen are formatted, so a thousand agents cost what
// the visible thirty do.
type tree struct {
	rows     []cohort.AgentInfo // in tree order
	depth    []int
	total    totals
	selected int
	top      int // first row on screen
	selID    string
	// entries is the last snapshot as the session gave it, its "retired"
	// entry included: /cost lists it, and every total is its sum.
	entries []cohort.AgentInfo
	// gone holds the agents that left the session's list (their records
	// left memory), as last seen: the tree and /tasks keep listing them
	// until /clear; their spend is in the retired entry.
	gone map[string]cohort.AgentInfo
	// tasks says how a remembered agent's task ended.
	tasks *taskLog
}

// kindRetired is the kind of the session's entry that sums the agents
// that left memory (Session.Agents).
const kindRetired = "retired"

// forget drops the agents remembered after they left the session's list.
func (t *tree) forget() { t.gone = nil }

// remember keeps the agents of the last snapshot that are missing from
// agents, and returns agents without the retired entry and with the
// remembered ones.
func (t *tree) remember(agents []cohort.AgentInfo) []cohort.AgentInfo {
	now := map[string]bool{}
	for _, a := range agents {
		now[a.ID] = true
	}
	for _, a := range t.entries {
		if !now[a.ID] && a.Kind != "lead" && a.Kind != kindRetired && a.Workflow == nil {
			if t.gone == nil {
				t.gone = map[string]cohort.AgentInfo{}
			}
			// It has finished (only finished agents leave memory); its
			// task's notification says how.
			if a.State == cohort.AgentRunning || a.State == cohort.AgentStarting {
				a.State = cohort.AgentCompleted
				if t.tasks != nil && t.tasks.final(a.TaskID) != "" {
					a.State = t.tasks.final(a.TaskID)
				}
			}
			t.gone[a.ID] = a
		}
	}
	t.entries = agents
	out := make([]cohort.AgentInfo, 0, len(agents)+len(t.gone))
	tasks := map[string]bool{}
	for _, a := range agents {
		if a.Kind != kindRetired {
			out = append(out, a)
		}
		tasks[a.TaskID] = true
	}
	for _, a := range t.gone {
		tasks[a.TaskID] = true
	}
	if t.tasks != nil {
		for _, id := range t.tasks.order {
			r := t.tasks.byID[id]
			if final := t.tasks.final(id); !tasks[id] && r.kind == "local_agent" && final != "" {
				if t.gone == nil {
					t.gone = map[string]cohort.AgentInfo{}
				}
				t.gone[id] = r.agentRow(final)
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(t.gone)) {
		if !now[id] {
			out = append(out, t.gone[id])
		}
	}
	return out
}

type totals struct {
	agents, running, done, failed int
	in, out, cacheRead            int64
	cost, cap                     float64 // cap: the session's (the lead's CapUSD)
	leadBusy                      bool
}

// set replaces the rows with a snapshot, keeping the selection on the
// same agent.
func (t *tree) set(snapshot []cohort.AgentInfo) {
	agents := t.remember(snapshot)
	children := map[string][]int{}
	ids := map[string]bool{}
	for _, a := range agents {
		ids[a.ID] = true
	}
	var roots []int
	for i, a := range agents {
		if a.ParentID != "" && ids[a.ParentID] && a.ParentID != a.ID {
			children[a.ParentID] = append(children[a.ParentID], i)
		} else {
			roots = append(roots, i)
		}
	}
	t.rows, t.depth = t.rows[:0], t.depth[:0]
	var walk func(i, d int)
	seen := make([]bool, len(agents))
	walk = func(i, d int) {
		if seen[i] {
			return
		}
		seen[i] = true
		t.rows = append(t.rows, agents[i])
		t.depth = append(t.depth, d)
		for _, c := range children[agents[i].ID] {
			walk(c, d+1)
		}
	}
	// Siblings in the order of their labels: rows stay where they are as
	// agents start and finish.
	for _, c := range children {
		slices.SortStableFunc(c, func(i, j int) int { return strings.Compare(agentLabel(agents[i]), agentLabel(agents[j])) })
	}
	for _, r := range roots {
		walk(r, 0)
	}
	t.total = totals{}
	for _, a := range snapshot {
		if a.Workflow != nil {
			continue // a workflow run's node: its agents are counted themselves
		}
		t.total.in += a.Usage.TotalInput()
		t.total.out += a.Usage.OutputTokens
		t.total.cacheRead += a.Usage.CacheReadInputTokens
		t.total.cost += a.CostUSD
	}
	for _, a := range t.rows {
		if a.Workflow != nil {
			continue
		}
		if a.Kind == "lead" {
			t.total.leadBusy, t.total.cap = a.State == cohort.AgentRunning, a.CapUSD
			continue
		}
		t.total.agents++
		switch a.State {
		case cohort.AgentRunning, cohort.AgentStarting:
			t.total.running++
		case cohort.AgentCompleted, cohort.AgentIdle:
			t.total.done++
		case cohort.AgentFailed, cohort.AgentKilled, cohort.AgentDead:
			t.total.failed++
		}
	}
	t.selected = 0
	for i, a := range t.rows {
		if a.ID == t.selID {
			t.selected = i
		}
	}
	t.clampSel()
}

func (t *tree) clampSel() {
	t.selected = min(max(t.selected, 0), max(len(t.rows)-1, 0))
	if len(t.rows) > 0 {
		t.selID = t.rows[t.selected].ID
	}
}

func (t *tree) move(step int) {
	t.selected += step
	t.clampSel()
}

func (t *tree) current() (cohort.AgentInfo, bool) {
	if len(t.rows) == 0 {
		return cohort.AgentInfo{}, false
	}
	return t.rows[t.selected], true
}

// anyRunning reports whether some agent other than the lead works (its
// elapsed time then wants a clock).
func (t *tree) anyRunning() bool {
	for _, a := range t.rows {
		if a.Kind != "lead" && (a.State == cohort.AgentRunning || a.State == cohort.AgentStarting) {
			return true
		}
	}
	return false
}

// header is the totals line.
func (t *tree) header(width int, st styles) string {
	lead := "lead idle"
	if t.total.leadBusy {
		lead = "lead working"
	}
	s := fmt.Sprintf("%s · %d agents · %d running · %d done", lead, t.total.agents, t.total.running, t.total.done)
	if t.total.failed > 0 {
		s += fmt.Sprintf(" · %d stopped/failed", t.total.failed)
	}
	s += fmt.Sprintf(" · ↑%s ↓%s · %s", tokens(t.total.in), tokens(t.total.out), cost(t.total.cost))
	if t.total.cap > 0 {
		s += " of " + cost(t.total.cap) + " cap"
	}
	return st.bold.Render(cut(s, width))
}

// Column widths of a row after its name.
const treeCols = "%-10s %-9s %6s %7s %6s %5s %5s %9s"

// view draws height lines: the header, the column titles, and the rows
// around the selection.
func (t *tree) view(width, height int, now time.Time, st styles) []string {
	if height <= 0 {
		return nil
	}
	out := []string{t.header(width, st)}
	if height == 1 {
		return out
	}
	nameW := max(width-len(fmt.Sprintf(treeCols, "", "", "", "", "", "", "", ""))-1, 8)
	out = append(out, st.dim.Render(cut(fit("  agent", nameW)+" "+fmt.Sprintf(treeCols, "kind", "state", "time", "in", "out", "cache", "tools", "cost"), width)))
	rows := height - len(out)
	if t.selected < t.top {
		t.top = t.selected
	}
	if t.selected >= t.top+rows {
		t.top = t.selected - rows + 1
	}
	t.top = min(max(t.top, 0), max(len(t.rows)-rows, 0))
	for i := t.top; i < len(t.rows) && i < t.top+rows; i++ {
		out = append(out, t.row(i, width, nameW, now, st))
	}
	return out
}

func (t *tree) row(i, width, nameW int, now time.Time, st styles) string {
	a := t.rows[i]
	mark := "  "
	if i == t.selected {
		mark = "▸ "
	}
	name := Clean(agentLabel(a), false)
	name = strings.Repeat("  ", min(t.depth[i], 6)) + agentColor(a.Color).Render("●") + " " + name
	cacheRatio := "-"
	if in := a.Usage.TotalInput(); in > 0 {
		cacheRatio = fmt.Sprintf("%d%%", a.Usage.CacheReadInputTokens*100/in)
	}
	cols := fmt.Sprintf(treeCols, Clean(a.Kind, false), stateText(a.State), elapsed(a, now),
		tokens(a.Usage.TotalInput()), tokens(a.Usage.OutputTokens), cacheRatio, fmt.Sprint(a.ToolUses), spend(a))
	line := fit(mark+name, nameW) + " " + cols
	if i == t.selected {
		return st.bold.Render(cut(line, width))
	}
	return cut(line, width)
}

// spend is an agent's cost cell: its cost, and against its own cap when
// it has one ("$.031/.05"; the lead's cap, the session's, is in the
// header), short enough for the column.
func spend(a cohort.AgentInfo) string {
	if a.CapUSD <= 0 || a.Kind == "lead" {
		return cost(a.CostUSD)
	}
	short := func(v float64, prec int) string {
		return strings.TrimPrefix(strconv.FormatFloat(v, 'f', prec, 64), "0")
	}
	return "$" + short(a.CostUSD, 3) + "/" + short(a.CapUSD, 2)
}

func agentLabel(a cohort.AgentInfo) string {
	switch {
	case a.Kind == "lead":
		return "lead"
	case a.Workflow != nil:
		return workflowLabel(a)
	case a.Name != "" && a.Description != "":
		return a.Name + ": " + a.Description
	case a.Name != "":
		return a.Name
	case a.Description != "":
		return a.Description
	}
	return a.ID
}

func stateText(s string) string {
	switch s {
	case cohort.AgentRunning:
		return "◐ running"
	case cohort.AgentCompleted:
		return "✓ done"
	case cohort.AgentFailed:
		return "✗ failed"
	case cohort.AgentKilled:
		return "■ killed"
	case cohort.AgentIdle:
		return "○ idle"
	}
	return Clean(s, false)
}

// elapsed is how long the agent has run, in one short word.
func elapsed(a cohort.AgentInfo, now time.Time) string {
	if a.Started.IsZero() {
		return "-"
	}
	end := a.Ended
	if end.IsZero() {
		end = now
	}
	d := max(end.Sub(a.Started), 0).Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}

// detail draws the selected agent: what it is, its last activities, and
// the end of its transcript.
func (t *tree) detail(tr *transcript, width, height int, now time.Time, expanded bool, st styles) []string {
	a, ok := t.current()
	if !ok || height <= 0 {
		return nil
	}
	out := []string{st.border.Render(strings.Repeat("─", max(width, 1)))}
	parts := []string{agentLabel(a)}
	for _, p := range []string{a.Type, a.Model, a.PermissionMode} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if a.Worktree != "" {
		parts = append(parts, "worktree "+a.Worktree)
	}
	head := Clean(strings.Join(parts, " · "), false)
	out = append(out, agentColor(a.Color).Render(cut(head, width)))
	for _, act := range slices.Backward(a.Activities) {
		if len(out) >= 5 {
			break
		}
		out = append(out, st.dim.Render(cut("  "+Clean(act.Tool, false)+" "+Clean(act.Description, false), width)))
	}
	if tr != nil {
		out = append(out, tr.tail(width, height-len(out), expanded, st)...)
	}
	if len(out) > height {
		out = out[:height]
	}
	return out
}

// workflowLabel names a workflow run's node: its script's name, the phase
// it is in and how many of its agents have answered.
func workflowLabel(a cohort.AgentInfo) string {
	w := a.Workflow
	label := "workflow " + a.Type
	if w.Phase != "" {
		label += " · " + w.Phase
	}
	return fmt.Sprintf("%s · %d/%d agents", label, w.Finished, w.Started)
}
