package crew

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/hook"
	"github.com/cohort-dev/cohort/internal/clip"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/transcript"
)

// maxStopContinues bounds how often SubagentStop hooks may send an agent
// back to work, so a hook that always blocks cannot loop forever.
const maxStopContinues = 3

// activation is one piece of an agent's work: from being given content
// until it is done with it.
type activation struct {
	// content starts it; nil when the history already ends with the user
	// message to answer (a fork's directive).
	content []llm.Block
	origin  string
	// prompt is what SubagentStart reports; start fires it (a spawned
	// agent's first activation, a resume).
	prompt string
	start  bool
}

// activate runs one activation of a — the one path every spawned agent
// runs through, whatever its kind (synchronous, background, fork, resumed,
// teammate):
//
//   - the per-agent deadline (Config.Deadline) bounds it;
//   - SubagentStart fires first when act.start; its context joins the
//     content;
//   - the agent answers; while background tasks it started will still
//     report, each batch of their notifications (and messages sent to it)
//     is another turn, so it never orphans its own agents' results;
//   - SubagentStop fires when it is done and may send it back (at most
//     maxStopContinues times);
//   - every turn's result is added into one Result (turns, tool uses,
//     usage, cost, duration), which is also added to the agent's.
//
// A message delivered while it runs (Deliver) is taken before it ends:
// the end is decided under the agent's lock, so a message is either seen
// by this activation or starts the next.
func (rt *Crew) activate(ctx context.Context, a *Agent, act activation) (*engine.Result, error) {
	a.mu.Lock()
	a.busy++
	eng, hooks := a.engine, a.hooks
	a.mu.Unlock()
	finished := false
	defer func() {
		a.mu.Lock()
		a.busy--
		if !finished {
			a.live = false // it failed or hit a limit: the next message resumes it
		}
		a.mu.Unlock()
	}()
	if d := rt.cfg.Deadline; d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	sh, _ := hooks.(hook.SubagentHooks)
	content, origin := act.content, act.origin
	if act.start && sh != nil {
		if extra := hookContext(sh.SubagentStart(ctx, act.prompt).Context); extra != nil {
			if content == nil {
				origin = transcript.OriginSystem
			}
			content = append(content, *extra)
		}
	}
	res, err := eng.Send(ctx, content, origin)
	for stops := 0; ; {
		res, err = rt.settle(ctx, a, eng, res, err)
		if err != nil || res == nil || res.Stop != engine.StopSuccess {
			break
		}
		if sh != nil && stops <= maxStopContinues {
			out := sh.SubagentStop(ctx, hook.StopState{Active: stops > 0, LastMessage: res.Text})
			if out.Block && !out.Stop && stops < maxStopContinues {
				stops++
				reminder := llm.Text("<system-reminder>\nA SubagentStop hook asks you to continue: " + out.Reason + "\n</system-reminder>")
				next, nerr := eng.Send(ctx, []llm.Block{reminder}, transcript.OriginSystem)
				res, err = add(res, next), nerr
				continue
			}
			stops = maxStopContinues + 1 // the hooks have had their say
		}
		if finished = a.finish(); finished {
			break
		}
	}
	a.addResult(res)
	if err != nil && errors.Is(err, context.DeadlineExceeded) && rt.cfg.Deadline > 0 {
		return res, fmt.Errorf("the agent ran past its deadline of %s", rt.cfg.Deadline)
	}
	return res, err
}

// settle keeps an agent going after a turn ended while something will
// still arrive in its queue: each batch is another turn. It returns when
// the queue is empty and no task it started is outstanding.
func (rt *Crew) settle(ctx context.Context, a *Agent, eng *engine.Conversation, res *engine.Result, err error) (*engine.Result, error) {
	q := a.queue
	for err == nil && res != nil && res.Stop == engine.StopSuccess {
		// Outstanding first: a task stops counting only after its
		// notification is enqueued.
		outstanding := rt.cfg.Tasks.Outstanding(q)
		if q.Len() == 0 {
			if outstanding == 0 {
				return res, nil
			}
			select {
			case <-q.Ready():
			case <-ctx.Done():
				return res, ctx.Err()
			}
			continue
		}
		next, nerr := eng.Send(ctx, drainBlocks(q), transcript.OriginNotification)
		res, err = add(res, next), nerr
	}
	return res, err
}

// finish ends the agent's activation unless something arrived in its queue
// meanwhile (then the caller goes on). Deliver decides under the same lock.
func (a *Agent) finish() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.queue.Len() > 0 {
		return false
	}
	a.live = false
	a.ends++
	a.rt.scheduleEvict(a, a.ends)
	return true
}

// add returns res with a later Send's result added.
func add(res, later *engine.Result) *engine.Result {
	if res == nil {
		return later
	}
	res.Add(later)
	return res
}

func drainBlocks(q *task.Queue) []llm.Block {
	var blocks []llm.Block
	for _, it := range q.Drain() {
		blocks = append(blocks, llm.Text(it.ModelText()))
	}
	return blocks
}

// hookContext wraps hook output for the model; nil when there is none.
func hookContext(parts []string) *llm.Block {
	if len(parts) == 0 {
		return nil
	}
	b := llm.Text("<system-reminder>\n" + strings.Join(parts, "\n") + "\n</system-reminder>")
	return &b
}

// taskRun is what an agent task's body does besides the common path.
type taskRun struct {
	act activation
	// plan, when set, is the engine to start; nil means the agent's engine
	// exists (a resume) and its transcript is opened again.
	plan *setup
	// history is recorded into the transcript before the first request (a
	// fork's inherited conversation).
	history []llm.Message
	// wait runs before a concurrency slot is taken (the later forks of a
	// fan-out wait for the first's first token); firstToken is called on
	// the agent's first streamed event; done when the body returns.
	wait       func(ctx context.Context) error
	firstToken func()
	done       func()
}

// taskBody is the body of every agent task (synchronous, background, fork,
// resume): wait if it must, take a concurrency slot, point the agent's
// events at its task, run one activation (activate), and turn its result
// into the task's outcome.
func (rt *Crew) taskBody(a *Agent, r taskRun) task.RunFunc {
	return func(ctx context.Context, t *task.Task) (_ task.Outcome, err error) {
		p := r.plan
		defer func() { p.close() }()
		if r.done != nil {
			defer r.done()
		}
		activated := false
		defer func() {
			if !activated {
				a.setLive(false) // it never ran: the next message resumes it
			}
		}()
		if r.wait != nil {
			t.SetPhase(PhaseWaitingForSibling)
			if err := r.wait(ctx); err != nil {
				return task.Outcome{}, err
			}
			t.SetPhase("running")
		}
		if err := rt.acquire(ctx, t); err != nil {
			return task.Outcome{}, err
		}
		defer rt.release()
		sink := taskSink(t, rt.cfg.Sink)
		if r.firstToken != nil {
			sink = onFirstToken(r.firstToken, sink)
		}
		if p != nil {
			if err := recordHistory(p.cfg.Recorder, r.history); err != nil {
				return task.Outcome{}, err
			}
			cfg := p.cfg
			cfg.Sink = sink
			a.start(cfg)
		} else if p, err = rt.reopen(a, sink); err != nil {
			return task.Outcome{}, err
		}
		activated = true
		res, err := rt.activate(ctx, a, r.act)
		if err != nil {
			return task.Outcome{}, err
		}
		return task.Outcome{Text: outcomeText(res), TotalTokens: res.Usage.Total(), ToolUses: res.ToolUses}, nil
	}
}

// reopen points a resumed agent's engine at its new task and transcript;
// the plan it returns holds what to close when the task ends.
func (rt *Crew) reopen(a *Agent, sink engine.Sink) (*setup, error) {
	eng := a.Engine()
	p := &setup{}
	if rt.cfg.Transcripts != nil {
		if err := rt.openTranscript(p, a); err != nil {
			return p, err
		}
		eng.SetRecorder(p.cfg.Recorder)
	}
	eng.SetSink(sink)
	return p, nil
}

// recordHistory appends a fork's inherited conversation to its transcript.
func recordHistory(rec engine.Recorder, history []llm.Message) error {
	if rec == nil {
		return nil
	}
	for i := range history {
		m := history[i]
		typ := transcript.TypeUser
		if m.Role == llm.RoleAssistant {
			typ = transcript.TypeAssistant
		}
		if err := rec.Append(transcript.Entry{Type: typ, Message: &m, Origin: "fork_context"}); err != nil {
			return err
		}
	}
	return nil
}

// outcomeText is the agent's final text, with a note when it stopped at a
// limit rather than finishing.
func outcomeText(res *engine.Result) string {
	switch res.Stop {
	case engine.StopMaxTurns:
		return res.Text + "\n\n[The agent stopped at its turn limit before finishing.]"
	case engine.StopBudget:
		return res.Text + "\n\n" + CapNote(res)
	}
	return res.Text
}

// onFirstToken calls f on the first streamed event: the response has
// begun, so the prefix it wrote to the prompt cache is readable.
func onFirstToken(f func(), next engine.Sink) engine.Sink {
	return func(ev engine.Event) {
		if ev.Kind == engine.EventStream || ev.Kind == engine.EventAssistant {
			f()
		}
		if next != nil {
			next(ev)
		}
	}
}

// taskSink forwards events and feeds the task's progress and output file.
func taskSink(t *task.Task, next engine.Sink) engine.Sink {
	out := t.Output()
	if out != nil && out.Linked() {
		out = nil // the output file is the transcript the engine records
	}
	return func(ev engine.Event) {
		if next != nil {
			next(ev)
		}
		switch ev.Kind {
		case engine.EventAssistant:
			if ev.Response != nil {
				t.RecordUsage(ev.Response.Usage)
			}
			if out != nil {
				_ = out.WriteJSON(outputLine{Type: "assistant", Message: ev.Message, Time: ev.Time})
			}
		case engine.EventUser:
			if out != nil {
				_ = out.WriteJSON(outputLine{Type: "user", Message: ev.Message, Time: ev.Time})
			}
		case engine.EventToolStart:
			t.RecordToolUse(ev.Tool.Name, activity(ev.Tool.Input))
		}
	}
}

// outputLine is one line of a task's output file (its transcript).
type outputLine struct {
	Type    string       `json:"type"`
	Message *llm.Message `json:"message"`
	Time    time.Time    `json:"timestamp"`
}

// activity summarises a tool input for the progress ring: the first string
// field that says what the call does.
func activity(input json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(input, &m) != nil {
		return ""
	}
	for _, k := range []string{"description", "command", "file_path", "pattern", "url", "prompt"} {
		if s, ok := m[k].(string); ok && s != "" {
			return clip.String(s, 80)
		}
	}
	return ""
}
