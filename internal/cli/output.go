package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/internal/clip"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/session"
	"github.com/cohort-dev/cohort/task"
)

// printer writes print mode's output. Engine and task events arrive from
// many goroutines; every write holds the lock, so lines never interleave.
type printer struct {
	mu        sync.Mutex
	w         io.Writer
	errw      io.Writer
	format    string
	verbose   bool
	sessionID string
	prices    llm.PriceTable

	usage   llm.Usage // every agent's
	costUSD float64
	apiTime time.Duration
	// byModel is usage and cost per model, for the result's modelUsage.
	byModel map[string]*modelUsage

	// onEngine and onTask, when set before the session starts, also see
	// every event (cohort demo narrates from them). They are called from
	// many goroutines, outside the lock, and must be safe for that.
	onEngine func(engine.Event)
	onTask   func(task.Event)
}

func newPrinter(w, errw io.Writer, format string, verbose bool) *printer {
	return &printer{w: w, errw: errw, format: format, verbose: verbose, prices: llm.DefaultPrices}
}

func (p *printer) line(v any) {
	data, err := json.Marshal(v)
	if err != nil {
		data, _ = json.Marshal(map[string]string{"type": "error", "error": err.Error()})
	}
	p.w.Write(append(data, '\n'))
}

// nullable renders an empty parent id as JSON null, as Claude Code does.
func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

type apiMessage struct {
	ID         string         `json:"id,omitempty"`
	Type       string         `json:"type"`
	Role       llm.Role       `json:"role"`
	Model      string         `json:"model,omitempty"`
	Content    []llm.Block    `json:"content"`
	StopReason llm.StopReason `json:"stop_reason,omitempty"`
	Usage      *llm.Usage     `json:"usage,omitempty"`
}

type messageLine struct {
	Type            string     `json:"type"`
	Message         apiMessage `json:"message"`
	ParentToolUseID *string    `json:"parent_tool_use_id"`
	SessionID       string     `json:"session_id"`
	AgentID         string     `json:"agent_id,omitempty"`
	UUID            string     `json:"uuid"`
}

// engineEvent is the runtime's sink.
func (p *printer) engineEvent(ev engine.Event) {
	if p.onEngine != nil {
		p.onEngine(ev)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if ev.Kind == engine.EventAssistant && ev.Response != nil {
		p.count(ev.Response)
	}
	switch p.format {
	case "stream-json":
		p.streamEvent(ev)
	case "text":
		if ev.Kind == engine.EventRetry { // said at once, verbose or not: a dead API is not silence
			fmt.Fprintf(p.errw, "cohort: %s\n", ev.Retry)
		}
		if p.verbose {
			p.verboseEvent(ev)
		}
	}
}

func (p *printer) streamEvent(ev engine.Event) {
	switch ev.Kind {
	case engine.EventAssistant:
		m := apiMessage{Type: "message", Role: llm.RoleAssistant, Content: ev.Message.Content}
		if r := ev.Response; r != nil {
			u := r.Usage
			m.ID, m.Model, m.StopReason, m.Usage = r.ID, r.Model, r.StopReason, &u
		}
		p.line(messageLine{Type: "assistant", Message: m, ParentToolUseID: nullable(ev.ParentToolUseID),
			SessionID: p.sessionID, AgentID: ev.AgentID, UUID: session.NewID()})
	case engine.EventUser:
		m := apiMessage{Type: "message", Role: llm.RoleUser, Content: ev.Message.Content}
		p.line(messageLine{Type: "user", Message: m, ParentToolUseID: nullable(ev.ParentToolUseID),
			SessionID: p.sessionID, AgentID: ev.AgentID, UUID: session.NewID()})
	}
}

func (p *printer) verboseEvent(ev engine.Event) {
	who := "lead"
	if ev.ParentToolUseID != "" {
		who = ev.AgentID
	}
	switch ev.Kind {
	case engine.EventToolStart:
		fmt.Fprintf(p.errw, "[%s] %s %s\n", who, ev.Tool.Name, clip.String(string(ev.Tool.Input), 120))
	case engine.EventRetry:
		fmt.Fprintf(p.errw, "[%s] retry %d: %v\n", who, ev.Retry.Attempt, ev.Retry.Err)
	case engine.EventCompact:
		fmt.Fprintf(p.errw, "[%s] compacted the conversation (%d tokens before)\n", who, ev.Compact.TokensBefore)
	}
}

// taskEvent is the task registry's observer.
func (p *printer) taskEvent(ev task.Event) {
	if p.onTask != nil {
		p.onTask(ev)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	ev.SessionID = p.sessionID
	switch p.format {
	case "stream-json":
		p.line(ev)
	case "text":
		if p.verbose && ev.Subtype != task.SubtypeTaskProgress {
			fmt.Fprintf(p.errw, "[task %s] %s %s\n", ev.TaskID, ev.Subtype, clip.String(ev.Description+ev.Summary, 100))
		}
	}
}

type initLine struct {
	Type           string   `json:"type"`
	Subtype        string   `json:"subtype"`
	Cwd            string   `json:"cwd"`
	SessionID      string   `json:"session_id"`
	Tools          []string `json:"tools"`
	Model          string   `json:"model"`
	PermissionMode string   `json:"permissionMode"`
	APIKeySource   string   `json:"apiKeySource"`
	UUID           string   `json:"uuid"`
}

func (p *printer) init(l initLine) {
	if p.format != "stream-json" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	l.Type, l.Subtype, l.SessionID, l.UUID = "system", "init", p.sessionID, session.NewID()
	p.line(l)
}

type resultUsage struct {
	InputTokens              int64 `json:"input_tokens"`
	OutputTokens             int64 `json:"output_tokens"`
	CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
}

type resultLine struct {
	Type          string      `json:"type"`
	Subtype       string      `json:"subtype"`
	IsError       bool        `json:"is_error"`
	DurationMs    int64       `json:"duration_ms"`
	DurationAPIMs int64       `json:"duration_api_ms"`
	NumTurns      int         `json:"num_turns"`
	Result        string      `json:"result"`
	SessionID     string      `json:"session_id"`
	TotalCostUSD  float64     `json:"total_cost_usd"`
	Usage         resultUsage `json:"usage"`
	// ModelUsage is usage and cost per model, as Claude Code reports them:
	// in a session whose agents run on several models (a lead on Claude,
	// agents on a local model), each one's share.
	ModelUsage map[string]*modelUsage `json:"modelUsage,omitempty"`
	UUID       string                 `json:"uuid"`
}

// result prints the final outcome in the chosen format.
func (p *printer) result(r resultLine) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r.Type, r.SessionID, r.UUID = "result", p.sessionID, session.NewID()
	r.TotalCostUSD = p.costUSD
	r.Usage = resultUsage(p.usage)
	r.ModelUsage = p.byModel
	switch p.format {
	case "json", "stream-json":
		p.line(r)
	default:
		if r.IsError {
			fmt.Fprintf(p.errw, "cohort: %s\n", r.Result)
			return
		}
		fmt.Fprintln(p.w, r.Result)
	}
}
