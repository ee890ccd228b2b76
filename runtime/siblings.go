package runtime

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/cohort-dev/cohort/engine"
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
// calls, which run beside the Agent calls.

// PhaseWaitingForSibling is the phase of a task that waits for the first
// agent of its fan-out to begin its response.
const PhaseWaitingForSibling = "waiting for the first sibling's response"

// Batch records that the tool calls ids (one assistant message's Agent
// calls) start their agents together; done forgets them. A batch of one
// needs no gate.
func (rt *Runtime) Batch(ids []string) (done func()) {
	if len(ids) < 2 {
		return func() {}
	}
	key := strings.Join(ids, ",")
	rt.mu.Lock()
	if rt.batches == nil {
		rt.batches = map[string]string{}
	}
	for _, id := range ids {
		rt.batches[id] = key
	}
	rt.mu.Unlock()
	return func() {
		rt.mu.Lock()
		defer rt.mu.Unlock()
		for _, id := range ids {
			if rt.batches[id] == key {
				delete(rt.batches, id)
			}
		}
	}
}

// batchOf returns the batch the tool call belongs to, "" for none.
func (rt *Runtime) batchOf(toolUseID string) string {
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
func (rt *Runtime) staggerSiblings(toolUseID string, cfg engine.Config, run *taskRun) {
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

// releaseSiblings lets the rest of a's group go, if a went first.
func (a *Agent) releaseSiblings() {
	a.mu.Lock()
	g := a.siblingGate
	a.mu.Unlock()
	if g != nil {
		g.release()
	}
}
