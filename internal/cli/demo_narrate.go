package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/internal/clip"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tasklist"
	"github.com/cohort-dev/cohort/team"
)

// narratorConfig configures a narrator.
type narratorConfig struct {
	W     io.Writer
	Color bool // ANSI colors
	// Start is time zero of the timestamps; Now reads the clock.
	Start time.Time
	Now   func() time.Time
	// Project is the demo's project directory; paths under it are shown
	// relative to it.
	Project string
}

// narrator turns a session's engine, task and team events into one
// readable line each, as they happen: who did what to whom. Events arrive
// from every agent's goroutine; every method is safe for concurrent use and
// a line is written whole under the lock.
type narrator struct {
	cfg narratorConfig

	mu     sync.Mutex
	leadID string
	teams  *team.Store
	labels map[string]string // Agent tool-use id → the label of the agent it started
	colors map[string]string // teammate name → palette color
	mates  map[string]bool   // task ids of in-process teammates
	tools  map[string]string // tool-use id → tool name, until its result
	agents map[string]bool   // labels of agents that called the model
	calls  int               // model calls, all agents
	usage  llm.Usage
	cost   float64
	// notified counts <task-notification> blocks the lead was given.
	notified int
}

func newNarrator(cfg narratorConfig) *narrator {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &narrator{cfg: cfg, labels: map[string]string{}, colors: map[string]string{},
		mates: map[string]bool{}, agents: map[string]bool{}, tools: map[string]string{}}
}

// bind names the lead and gives the team store (for colors and the final
// task list). Call it before the session runs.
func (n *narrator) bind(leadID string, teams *team.Store) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.leadID, n.teams = leadID, teams
}

// notifications returns how many background notifications the lead got.
func (n *narrator) notifications() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.notified
}

// ANSI styles.
const (
	ansiReset = "\x1b[0m"
	ansiBold  = "\x1b[1m"
	ansiDim   = "\x1b[2m"
	ansiRed   = "\x1b[31m"
)

// paletteANSI maps team.Palette colors to terminal colors.
var paletteANSI = map[string]string{
	"red": "\x1b[31m", "blue": "\x1b[34m", "green": "\x1b[32m", "yellow": "\x1b[33m",
	"purple": "\x1b[35m", "orange": "\x1b[38;5;208m", "pink": "\x1b[38;5;205m", "cyan": "\x1b[36m",
}

func (n *narrator) paint(style, s string) string {
	if !n.cfg.Color || style == "" {
		return s
	}
	return style + s + ansiReset
}

// style is the color of an agent's label: the lead bold, a teammate in its
// team color, anyone else dim.
func (n *narrator) style(who string) string {
	switch {
	case who == "lead":
		return ansiBold
	case n.colors[who] != "":
		return paletteANSI[n.colors[who]]
	}
	return ansiDim
}

// linef writes one event line; the caller holds n.mu.
func (n *narrator) linef(who, format string, args ...any) {
	t := n.cfg.Now().Sub(n.cfg.Start).Seconds()
	fmt.Fprintf(n.cfg.W, "%5.1fs  %s  %s\n", t, n.paint(n.style(who), fmt.Sprintf("%-6s", who)), fmt.Sprintf(format, args...))
}

// note writes a line without a speaker.
func (n *narrator) note(s string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	fmt.Fprintln(n.cfg.W, n.paint(ansiDim, s))
}

func (n *narrator) header(ws *demoWorkspace, keep bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	w := n.cfg.W
	fmt.Fprintln(w, n.paint(ansiBold, "cohort demo: a lead and two teammates on the built-in scripted model (no API key, no network)"))
	fmt.Fprintf(w, "  project      %s  (go.mod, greet.go, main.go)\n", ws.project)
	fmt.Fprintf(w, "  COHORT_HOME  %s  (team file, mailboxes, task list, transcripts)\n", ws.cohortHome)
	fmt.Fprintf(w, "  script       %s\n", ws.script)
	switch {
	case keep:
		fmt.Fprintf(w, "  %s is kept after the run\n", ws.root)
	case ws.ownHome:
		fmt.Fprintf(w, "  %s is removed at the end; --keep keeps it\n", ws.root)
	default:
		fmt.Fprintf(w, "  %s is removed at the end (--keep keeps it); COHORT_HOME stays\n", ws.root)
	}
	fmt.Fprintln(w)
}

func (n *narrator) prompt(text string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.linef("user", "%q", text)
}

// who names the agent behind an event: "lead", a teammate's name (its id
// is name@team), or the label its Agent call gave it.
func (n *narrator) who(ev cohort.Event) string {
	if ev.AgentID == n.leadID {
		return "lead"
	}
	if name, _, ok := strings.Cut(ev.AgentID, "@"); ok {
		return name
	}
	if l, ok := n.labels[ev.ParentToolUseID]; ok {
		return l
	}
	return clip.String(ev.AgentID, 8)
}

// event narrates one event of the session.
func (n *narrator) event(ev cohort.Event) {
	switch ev.Type {
	case cohort.EventSystem:
		switch {
		case ev.Subtype == cohort.SubtypeTeam && ev.Team != nil:
			n.teamEvent(*ev.Team)
		case strings.HasPrefix(ev.Subtype, "task_"):
			n.taskEvent(ev)
		}
		return
	case cohort.EventAssistant, cohort.EventUser:
	default:
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if ev.Message == nil {
		return
	}
	who := n.who(ev)
	if ev.Type == cohort.EventAssistant {
		n.calls++
		n.agents[who] = true
		if u := ev.Message.Usage; u != nil {
			n.usage = n.usage.Add(*u)
			n.cost += llm.DefaultPrices.Cost(ev.Message.Model, *u)
		}
		// In the message's order: what it says (its first line), the tools
		// it calls.
		said := false
		for _, b := range ev.Message.Content {
			switch {
			case b.Type == llm.BlockText && !said:
				if text := firstLine(b.Text); text != "" {
					n.linef(who, "%s", n.paint(ansiDim, "“"+clip.String(text, 110)+"”"))
					said = true
				}
			case b.Type == llm.BlockToolUse:
				n.tools[b.ID] = b.Name
				n.toolStart(who, b)
			}
		}
		return
	}
	for _, b := range ev.Message.Content {
		if b.Type == llm.BlockToolResult {
			n.toolDone(who, n.tools[b.ToolUseID], b, ev.ToolUseResult)
			delete(n.tools, b.ToolUseID)
		}
	}
	n.delivered(who, ev.Message.Content)
}

// toolStart shows file work and messages as they start, and remembers the
// label of an agent an Agent call starts.
func (n *narrator) toolStart(who string, t llm.Block) {
	var in struct {
		FilePath    string `json:"file_path"`
		Pattern     string `json:"pattern"`
		Command     string `json:"command"`
		Name        string `json:"name"`
		Description string `json:"description"`
	}
	_ = json.Unmarshal(t.Input, &in)
	switch t.Name {
	case "Agent":
		label := in.Name
		if label == "" {
			label, _, _ = strings.Cut(strings.ToLower(in.Description), " ")
		}
		n.labels[t.ID] = clip.String(label, 8)
	case "SendMessage":
		// Shown as it starts: its delivery can be seen before the call
		// returns. A failure follows as its own line.
		var s struct{ To, Message, Summary string }
		_ = json.Unmarshal(t.Input, &s)
		text := s.Summary
		if text == "" {
			text = clip.String(firstLine(s.Message), 80)
		}
		n.linef(who, "→ %s: %s", n.paint(n.style(s.To), s.To), text)
	case "Read", "Edit", "Write":
		verb := map[string]string{"Read": "reads", "Edit": "edits", "Write": "writes"}[t.Name]
		n.linef(who, "%s %s", verb, n.rel(in.FilePath))
	case "Glob", "Grep":
		n.linef(who, "searches the project (%s %s)", t.Name, in.Pattern)
	case "Bash":
		n.linef(who, "runs %s", clip.String(firstLine(in.Command), 80))
	}
}

// toolDone shows failures and what changed the shared task list (the
// tool's structured result is the task, or the list).
func (n *narrator) toolDone(who, name string, r llm.Block, structured json.RawMessage) {
	if r.IsError {
		n.linef(who, "%s", n.paint(ansiRed, name+" failed: "+clip.String(firstLine(llm.JoinText(r.Content)), 100)))
		return
	}
	switch name {
	case "TaskCreate":
		var tk tasklist.Task
		if json.Unmarshal(structured, &tk) == nil && tk.ID != "" {
			n.linef(who, "adds task #%s to the shared list: %s", tk.ID, tk.Subject)
		}
	case "TaskUpdate":
		var tk tasklist.Task
		if json.Unmarshal(structured, &tk) == nil && tk.ID != "" {
			switch tk.Status {
			case tasklist.StatusInProgress:
				n.linef(who, "claims task #%s: %s", tk.ID, tk.Subject)
			case tasklist.StatusCompleted:
				n.linef(who, "completes task #%s", tk.ID)
			default:
				n.linef(who, "updates task #%s (%s)", tk.ID, tk.Status)
			}
		}
	case "TaskList":
		var tasks []tasklist.Task
		if json.Unmarshal(structured, &tasks) == nil {
			var parts []string
			for _, tk := range tasks {
				parts = append(parts, fmt.Sprintf("#%s %s", tk.ID, tk.Status))
			}
			n.linef(who, "checks the shared list: %s", strings.Join(parts, ", "))
		}
	}
}

var (
	teammateTagRE = regexp.MustCompile(`<teammate-message from="([^"]*)"(?: color="[^"]*")?(?: summary="([^"]*)")?>`)
	notifSummary  = regexp.MustCompile(`(?s)<task-notification>.*?<summary>(.*?)</summary>`)
)

// delivered shows mailbox messages and notifications as they reach an
// agent's conversation (the moment its model can see them).
func (n *narrator) delivered(who string, content []llm.Block) {
	for _, b := range content {
		if b.Type != llm.BlockText {
			continue
		}
		for _, sm := range teammateTagRE.FindAllStringSubmatch(b.Text, -1) {
			if sm[2] == "idle" {
				continue // shown when the teammate went idle
			}
			n.linef(who, "← %s: %s", n.paint(n.style(sm[1]), sm[1]), sm[2])
		}
		for _, sm := range notifSummary.FindAllStringSubmatch(b.Text, -1) {
			if who == "lead" {
				n.notified++
			}
			n.linef(who, "← <task-notification>: %s", sm[1])
		}
	}
}

func (n *narrator) taskEvent(ev cohort.Event) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if ev.TaskType == "in_process_teammate" {
		n.mates[ev.TaskID] = true
	}
	if n.mates[ev.TaskID] {
		return // teammates are shown by team events
	}
	who, ok := n.labels[ev.ToolUseID]
	if !ok {
		who = clip.String(ev.TaskID, 8)
	}
	switch ev.Subtype {
	case cohort.SubtypeTaskStarted:
		if ev.IsBackgrounded != nil && *ev.IsBackgrounded {
			n.linef(who, "starts in the background: %s (task %s)", ev.Description, ev.TaskID)
		}
	case cohort.SubtypeTaskNotification:
		detail := ""
		if u := ev.TaskUsage; u != nil {
			detail = fmt.Sprintf(" after %d tool call(s) and %s tokens", u.ToolUses, thousands(u.TotalTokens))
		}
		n.linef(who, "%s%s, and reports back", ev.Status, detail)
	}
}

func (n *narrator) teamEvent(ev cohort.TeamEvent) {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch ev.Kind {
	case cohort.TeamShutdownRequested:
		n.linef("lead", "the team is quiet: sends shutdown requests to %s", strings.ReplaceAll(ev.To, ",", " and "))
	case cohort.TeamCreated:
		n.linef("lead", "forms team %s: %s", ev.Team, ev.Text)
	case cohort.TeamJoined:
		backend, color := "", ""
		if n.teams != nil {
			if m, err := n.teams.Member(ev.Team, ev.From); err == nil {
				backend, color = string(m.BackendType), m.Color
				n.colors[ev.From] = color
			}
		}
		n.linef(ev.From, "joins the team (%s, color %s)", backend, n.paint(paletteANSI[color], color))
	case cohort.TeamIdle:
		n.linef(ev.From, "is idle, waiting for messages (the lead is told)")
	case cohort.TeamShutdown:
		n.linef(ev.From, "approves the shutdown request and stops")
	case cohort.TeamDead:
		n.linef(ev.From, "%s", n.paint(ansiRed, "stopped without shutting down: "+ev.Text))
	case cohort.TeamDeleted:
		n.linef("lead", "deletes team %s", ev.Team)
	case cohort.TeamPermission, cohort.TeamPlan:
		n.linef(ev.From, "%s → %s: %s", ev.Kind, ev.To, clip.String(ev.Text, 100))
	}
}

// finish prints the final task list and the totals.
func (n *narrator) finish(r cohort.Event, teams *team.Store) {
	var list []string
	if teams != nil {
		if l, err := teams.Tasks(demoTeam); err == nil {
			if tasks, err := l.List(context.Background()); err == nil {
				for _, tk := range tasks {
					list = append(list, fmt.Sprintf("#%s %s (%s): %s", tk.ID, tk.Status, tk.Owner, tk.Subject))
				}
			}
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	w := n.cfg.W
	fmt.Fprintln(w)
	for _, l := range list {
		fmt.Fprintf(w, "  task %s\n", l)
	}
	in := n.usage.InputTokens + n.usage.CacheCreationInputTokens + n.usage.CacheReadInputTokens
	elapsed := n.cfg.Now().Sub(n.cfg.Start).Round(100 * time.Millisecond)
	verdict := n.paint(ansiBold, "done")
	if r.IsError {
		verdict = n.paint(ansiRed, "failed")
	}
	fmt.Fprintf(w, "%s in %s: %d model calls by %d agents (%d by the lead), %s tokens in (%s read from cache), %s out, cost $%.2f\n",
		verdict, elapsed, n.calls, len(n.agents), r.NumTurns, thousands(in), thousands(n.usage.CacheReadInputTokens),
		thousands(n.usage.OutputTokens), n.cost)
	if r.IsError {
		fmt.Fprintf(w, "%s\n", n.paint(ansiRed, r.Result))
	}
}

// rel shows a path relative to the project when it is inside it.
func (n *narrator) rel(p string) string {
	if r, err := filepath.Rel(n.cfg.Project, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// thousands writes n with comma separators: 174,363.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
