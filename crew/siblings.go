package crew

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/flags"
)

// Siblings: agents one assistant message starts together share a prompt
// prefix when their requests begin alike — the same model and tool array
// (the cache's order is tools, then system, then messages, with a
// breakpoint after the last tool and after the system prompt). Started at
// once, each would miss the cache and write that prefix, since an entry is
// readable only once the response that wrote it has begun. So the first of
// each group starts at once and the rest wait for its first streamed event
// (or its end, if it fails first), then read what it wrote. Groups with
// different prefixes start at once; the wait is taken before a concurrency
// slot, so it holds nothing, and it never delays the caller's other tool
// calls, which run beside the Agent calls. The engine starts a subagent as
// soon as its Agent call is complete in the lead's streamed message, so
// at a model's pace the first sibling's response has usually begun before
// the next call is written, and the gate is open when it gets there; once
// open, a gate is forgotten, and a later sibling of the group goes first
// through a new one.

// PhaseWaitingForSibling is the phase of a task that waits for the first
// agent of its fan-out to begin its response.
const PhaseWaitingForSibling = "waiting for the first sibling's response"

// Batch records that the tool calls ids (Agent calls of the assistant
// message batch names) start their agents together; done forgets them. A
// message's calls may arrive in several Batch calls with the same batch
// (the engine starts each as soon as its block is complete, and the rest
// when the message ends), so a batch is open-ended: the first of its calls
// to start an agent of a group goes first, whoever comes later waits.
// With the sibling_gate flag off nothing is batched and every agent starts
// at once.
func (rt *Crew) Batch(batch string, ids []string) (done func()) {
	if batch == "" || len(ids) == 0 || !rt.flags().Bool(flags.SiblingGate) {
		return func() {}
	}
	rt.mu.Lock()
	if rt.batches == nil {
		rt.batches = map[string]string{}
	}
	for _, id := range ids {
		rt.batches[id] = batch
	}
	rt.mu.Unlock()
	return func() {
		rt.mu.Lock()
		defer rt.mu.Unlock()
		for _, id := range ids {
			if rt.batches[id] == batch {
				delete(rt.batches, id)
			}
		}
	}
}

// BatchName names the batch the Agent call toolUseID belongs to, "" for
// none: a short hex name that a process of its own can put in a file name
// (a teammate in a tmux pane, teammate.NewFileGate).
func (rt *Crew) BatchName(toolUseID string) string {
	batch := rt.batchOf(toolUseID)
	if batch == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(batch))
	return hex.EncodeToString(sum[:8])
}

// batchOf returns the batch the tool call belongs to, "" for none.
func (rt *Crew) batchOf(toolUseID string) string {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return rt.batches[toolUseID]
}

// prefixKey identifies the cacheable prefix siblings can share: the model
// and the tool array. Within a session a tool's definition is fixed by its
// name (the pools are cut from one set of tools), so the names stand for
// the array's bytes without encoding it on every spawn.
func prefixKey(cfg engine.Config) string {
	var b strings.Builder
	b.WriteString(cfg.ModelName)
	for _, t := range cfg.Tools {
		b.WriteByte(0)
		b.WriteString(t.Def().Name)
	}
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:12])
}

// staggerSiblings orders run behind the first sibling of its group: the
// first releases the others at its first streamed event (or when its body
// returns), the others wait for that.
func (rt *Crew) staggerSiblings(toolUseID string, cfg engine.Config, run *taskRun) {
	batch := rt.batchOf(toolUseID)
	if batch == "" {
		return
	}
	gate, first := rt.forkGateFor("siblings/" + batch + "/" + prefixKey(cfg))
	if first {
		run.firstToken, run.done = gate.release, gate.release
	} else {
		run.wait = gate.wait
	}
}

// A SiblingGate orders the first activations of agents spawned together
// whose group spans processes (teammates in tmux panes, each a process of
// its own): Enter decides whether this agent goes first among those whose
// cacheable prefix is prefix. The first gets first set and must call open
// at its first streamed event (and, to be safe, when its activation ends);
// the others return from Enter once the first has opened, or once the
// gate decides the first will never open it (it died), or with ctx's
// error.
type SiblingGate interface {
	Enter(ctx context.Context, prefix string) (first bool, open func(), err error)
}

// batchGate is the SiblingGate of a batch in this process (Batch).
type batchGate struct {
	rt    *Crew
	batch string
}

func (g batchGate) Enter(ctx context.Context, prefix string) (bool, func(), error) {
	gate, first := g.rt.forkGateFor("siblings/" + g.batch + "/" + prefix)
	if !first {
		return false, nil, gate.wait(ctx)
	}
	return true, gate.release, nil
}

// enterSiblings holds a's first activation behind the first of its group.
// The returned release lets the rest of the group go if a went first.
func (rt *Crew) enterSiblings(ctx context.Context, a *Agent) (release func(), err error) {
	release = func() {}
	if a.siblings == nil {
		return release, nil
	}
	first, open, err := a.siblings.Enter(ctx, a.siblingPrefix)
	if err != nil || !first {
		return release, err
	}
	a.mu.Lock()
	a.siblingOpen = open
	a.mu.Unlock()
	return open, nil
}

// releaseSiblings lets the rest of a's group go, if a went first.
func (a *Agent) releaseSiblings() {
	a.mu.Lock()
	open := a.siblingOpen
	a.mu.Unlock()
	if open != nil {
		open()
	}
}
