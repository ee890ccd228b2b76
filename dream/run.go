package dream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/crew"
	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/internal/ownread"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/tool"
)

// Task phases and the task's description.
const (
	PhaseStarting = "starting"
	PhaseUpdating = "updating"
	Description   = "consolidate memory"
)

// AgentType is the dream agent's type name.
const AgentType = "dream"

// tools are the dream agent's pool.
var tools = []string{"Read", "Grep", "Glob", "Write", "Edit", "Bash"}

// Detail is a dream task's kind-specific state (task.State.Detail).
type Detail struct {
	// SessionsReviewing is how many sessions it was given to review.
	SessionsReviewing int
	// FilesTouched are the memory files it wrote so far (names inside the
	// memory directory), in order.
	FilesTouched []string
	// Turns is the model calls it made (set when it ends).
	Turns int
}

// Spec is one consolidation to run.
type Spec struct {
	Runtime *crew.Crew
	Ticket  *Ticket
	// MemoryDir is the memory directory (links resolved); ProjectDir holds
	// the transcripts.
	MemoryDir  string
	ProjectDir string
	// Checker is the session's permission state; the agent gets a child of
	// it in default mode, so deny rules still hold. Nil allows every call
	// (the guard still confines it).
	Checker *permission.Checker
	// Model is the model it runs on (the lead's).
	Model string
	Now   func() time.Time
}

// Start runs the consolidation as a background task of type dream that no
// one is notified of (so nobody waits for it: it is not outstanding for
// the lead): a restricted agent (package doc) on spec.Ticket. When the
// task ends, the lock is committed if the agent finished, and rolled back
// if it failed or was stopped. On error the lock is rolled back.
func Start(ctx context.Context, spec Spec) (t *task.Task, err error) {
	lock := spec.Ticket.Lock
	defer func() {
		if err != nil {
			_ = lock.Rollback(context.WithoutCancel(ctx))
		}
	}()
	if spec.Now == nil {
		spec.Now = time.Now
	}
	before, err := snapshot(spec.MemoryDir)
	if err != nil {
		return nil, err
	}
	w := &writes{}
	g := &guard{dir: spec.MemoryDir, onWrite: w.add}
	var checker *permission.Checker
	if spec.Checker != nil {
		checker = spec.Checker.ForChild(permission.ModeDefault)
	}
	rt := spec.Runtime
	lead, _ := rt.Lead()
	parent := ""
	if lead != nil {
		parent = lead.ID()
	}
	a, err := rt.NewAgent(ctx, crew.AgentSpec{
		Kind: tool.KindDream, Role: agentdef.RoleBackground, Depth: 1, ParentID: parent,
		Def:  &agentdef.Definition{Name: AgentType, Description: "Consolidates the project's memory", Tools: tools, BuiltIn: true},
		Mode: permission.ModeDefault, Model: spec.Model, Checker: checker, Prompter: prompter{dir: spec.MemoryDir},
		Guard: g, System: System(spec.MemoryDir), Live: true,
	})
	if err != nil {
		return nil, fmt.Errorf("dream: %w", err)
	}
	text := Prompt(spec.MemoryDir, spec.ProjectDir, spec.Ticket.Since, spec.Ticket.Sessions)
	n := len(spec.Ticket.Sessions)
	run := func(ctx context.Context, t *task.Task) (task.Outcome, error) {
		defer a.Close()
		// Whatever happens (a panic the registry recovers included), a lock
		// not committed goes back; Rollback after Commit does nothing.
		defer func() { _ = lock.Rollback(context.WithoutCancel(ctx)) }()
		t.SetPhase(PhaseStarting)
		t.SetDetail(Detail{SessionsReviewing: n})
		w.onFirst(func() { t.SetPhase(PhaseUpdating) })
		res, err := rt.Activate(ctx, a, []llm.Block{llm.Text(text)}, "", true)
		touched := changed(spec.MemoryDir, before, w.list())
		d := Detail{SessionsReviewing: n, FilesTouched: touched}
		if res != nil {
			d.Turns = res.Turns
		}
		t.SetDetail(d)
		end := context.WithoutCancel(ctx)
		if err == nil && ctx.Err() == nil && res != nil && res.Stop != engine.StopSuccess {
			err = fmt.Errorf("the consolidation stopped early (%s): %s", res.Stop, res.Text)
		}
		if err != nil || ctx.Err() != nil {
			if rerr := lock.Rollback(end); rerr != nil {
				err = errors.Join(err, rerr)
			}
			if err == nil {
				err = ctx.Err()
			}
			return task.Outcome{}, err
		}
		if err := lock.Commit(end, spec.Now()); err != nil {
			return task.Outcome{}, err
		}
		return task.Outcome{Text: Report(touched, res.Text), Summary: Summary(len(touched))}, nil
	}
	t, err = rt.Tasks().Start(ctx, task.Spec{Kind: task.KindDream, Description: Description, Prompt: text,
		SubagentType: AgentType, AgentID: a.ID(), ParentAgentID: parent, Background: true}, run)
	if err != nil {
		a.Close()
		return nil, fmt.Errorf("dream: %w", err)
	}
	a.AttachTask(t)
	return t, nil
}

// Summary is the completion event's summary.
func Summary(n int) string {
	if n == 1 {
		return "Improved 1 memory"
	}
	return fmt.Sprintf("Improved %d memories", n)
}

// Report is a finished dream's result text: the files it touched, then the
// agent's last words.
func Report(touched []string, final string) string {
	var b strings.Builder
	b.WriteString(Summary(len(touched)))
	if len(touched) > 0 {
		b.WriteString(": " + strings.Join(touched, ", "))
	}
	b.WriteString(".")
	if f := strings.TrimSpace(final); f != "" {
		b.WriteString("\n\n" + f)
	}
	return b.String()
}

// maxSnapshot bounds the bytes of one file compared before and after.
const maxSnapshot = 1 << 20

// snapshot reads the memory files (not the lock's) of dir.
func snapshot(dir string) (map[string][]byte, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("dream: read the memory directory: %w", err)
	}
	out := map[string][]byte{}
	for _, e := range entries {
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		// The memory directory is the model's to write: a file may have
		// become a FIFO since it was listed, or be a sparse giant.
		data, err := ownread.Config(filepath.Join(dir, e.Name()), maxSnapshot)
		if err != nil {
			continue
		}
		out[e.Name()] = data
	}
	return out, nil
}

// changed lists the files of dir that differ from before (written, new or
// gone), by name inside dir: first those the guard saw written, in order,
// then the rest by name.
func changed(dir string, before map[string][]byte, written []string) []string {
	after, err := snapshot(dir)
	if err != nil {
		return nil
	}
	diff := map[string]bool{}
	for name, data := range after {
		if old, ok := before[name]; !ok || !bytes.Equal(old, data) {
			diff[name] = true
		}
	}
	for name := range before {
		if _, ok := after[name]; !ok {
			diff[name] = true
		}
	}
	var out []string
	for _, p := range written {
		rel, err := filepath.Rel(dir, p)
		if err == nil && diff[rel] {
			out = append(out, rel)
			delete(diff, rel)
		}
	}
	rest := make([]string, 0, len(diff))
	for name := range diff {
		rest = append(rest, name)
	}
	slices.Sort(rest)
	return append(out, rest...)
}
