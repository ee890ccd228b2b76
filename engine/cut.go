package engine

import (
	"github.com/cohort-dev/cohort/llm"
)

// A response cut short after a call started. Calls start while the message
// streams (calls.go), so a response that fails part-way may already have
// started some: retrying the whole request would get a new message whose
// calls the model may repeat, and a second copy of a started agent. So
// once a call has started, a failed response is not retried: its complete
// blocks become the assistant message (the partial block, and anything
// after it, are dropped), the calls that started run to their results,
// the other complete calls are answered as not run, a note tells the model
// its response was cut off, and the next request continues from there —
// when the provider was about to retry; a failure it would not retry (and
// cancellation) ends the Send with its error once the conversation has
// been recorded that way, so it stays valid to send.

// partial gathers the complete blocks of one response attempt as they are
// handed over, and the usage its start reported.
type partial struct {
	blocks []llm.Block
	usage  llm.Usage
	// blind is set once a block stopped without being handed over: later
	// blocks are not kept, so the kept ones stay a prefix of the message.
	blind bool
}

// add takes one stream event.
func (p *partial) add(ev *llm.Event) {
	switch {
	case ev.Type == llm.EventStart:
		p.usage = ev.Usage
	case ev.Type != llm.EventBlockStop || p.blind:
	case ev.Block == nil:
		p.blind = true
	default:
		p.blocks = append(p.blocks, *ev.Block)
	}
}

// response is the assistant message the kept blocks make: no stop reason
// (none came), the usage of the response's start, the requested model.
func (p *partial) response(model string) *llm.Response {
	return &llm.Response{Model: model, Content: p.blocks, Usage: p.usage}
}

// finishCut runs a cut message's started calls to their results and
// answers the others as not run.
func (cs *calls) finishCut() []llm.Block {
	results := make([]llm.Block, len(cs.list))
	for k, c := range cs.list {
		if !c.started {
			results[k] = llm.ToolResult(c.p.use.ID, notRun, true)
			continue
		}
		<-c.done
		results[k] = c.result
	}
	return results
}

// notRun answers a complete call of a cut response that had not started.
const notRun = "Not run: your response was cut off before this call could start. Call it again if it is still needed."

// cutOffNote follows the results of a cut response.
const cutOffNote = "Your previous response was cut off by an API failure after its last complete block. The calls that had started ran to the results above; nothing after them was received. Continue from here."
