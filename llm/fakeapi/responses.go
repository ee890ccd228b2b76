package fakeapi

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
)

// The Responses API stream: named events, each with a sequence_number.
// response.created and response.in_progress carry the response in
// progress; then each output item is announced (response.output_item.added),
// streamed and closed (response.output_item.done): a reasoning item with
// its summary (response.reasoning_summary_part.added,
// response.reasoning_summary_text.delta and .done,
// response.reasoning_summary_part.done), a message with one output_text part
// (response.content_part.added, response.output_text.delta and .done,
// response.content_part.done), a function call with its arguments
// (response.function_call_arguments.delta and .done). response.completed
// (or response.incomplete when the reply stops at max tokens or a refusal)
// ends it with every item and the usage. A mid-stream fault sends an error
// event.

// respReply is one response in the Responses protocol.
type respReply struct {
	id, model string
	created   int64
	usage     Usage
	reply     Reply
	quirks    quirkSet
	seq       int
	items     []json.RawMessage // the output items done so far
}

// status is the response's final status and incomplete reason.
func (r *respReply) status() (string, string) {
	switch r.reply.StopReason {
	case "max_tokens":
		return "incomplete", "max_output_tokens"
	case "refusal":
		return "incomplete", "content_filter"
	}
	return "completed", ""
}

// response renders the response object in the given status.
func (r *respReply) response(status string, final bool) []byte {
	b := []byte(`{"id":`)
	b = appendJSONString(b, r.id)
	b = fmt.Appendf(b, `,"object":"response","created_at":%d,"status":"%s","error":null,"incomplete_details":`, r.created, status)
	if _, reason := r.status(); final && reason != "" {
		b = fmt.Appendf(b, `{"reason":"%s"}`, reason)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"model":`...)
	b = appendJSONString(b, r.model)
	b = append(b, `,"output":[`...)
	if final {
		for i, it := range r.items {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, it...)
		}
	}
	b = append(b, `],"parallel_tool_calls":true,"store":false,"tool_choice":"auto","tools":[],"usage":`...)
	if !final {
		return append(b, "null}"...)
	}
	prompt, read, out := r.usage.total(), r.usage.CacheReadInputTokens, r.reply.OutputTokens
	b = fmt.Appendf(b, `{"input_tokens":%d,"input_tokens_details":{"cached_tokens":%d},"output_tokens":%d,"output_tokens_details":{"reasoning_tokens":%d},"total_tokens":%d}}`,
		prompt, read, out, reasoningTokens(r.reply), prompt+out)
	return b
}

// ev builds an event: fields is the JSON of its members after "type" and
// before "sequence_number", without braces.
func (r *respReply) ev(name string, fields []byte) sseLine {
	b := []byte(`{"type":"` + name + `",`)
	b = append(b, fields...)
	b = append(b, `,"sequence_number":`...)
	b = strconv.AppendInt(b, int64(r.seq), 10)
	r.seq++
	return sseLine{name: name, data: append(b, '}')}
}

func itemFields(index int, id string) []byte {
	b := fmt.Appendf(nil, `"item_id":`)
	b = appendJSONString(b, id)
	return fmt.Appendf(b, `,"output_index":%d`, index)
}

// events returns the stream's events before the end event, and the end.
func (r *respReply) events(rng *rand.Rand) (content []sseLine, end sseLine) {
	content = append(content,
		r.ev("response.created", append([]byte(`"response":`), r.response("in_progress", false)...)),
		r.ev("response.in_progress", append([]byte(`"response":`), r.response("in_progress", false)...)))
	index := 0
	for i, b := range r.reply.Content {
		var evs []sseLine
		switch b.Type {
		case "text":
			evs = r.message(index, derivedID(sha(r.id), i), b.Text, rng)
		case "thinking":
			evs = r.reasoning(index, derivedID(sha(r.id), i), b, rng)
		case "tool_use":
			evs = r.functionCall(index, derivedID(sha(r.id), i), b, rng)
		default:
			continue // redacted_thinking has no place in this protocol
		}
		content = append(content, evs...)
		index++
	}
	status, _ := r.status()
	end = r.ev("response."+status, append([]byte(`"response":`), r.response(status, true)...))
	return content, end
}

func (r *respReply) added(index int, item []byte) sseLine {
	return r.ev("response.output_item.added", fmt.Appendf(nil, `"output_index":%d,"item":%s`, index, item))
}

func (r *respReply) done(index int, item []byte) sseLine {
	r.items = append(r.items, item)
	return r.ev("response.output_item.done", fmt.Appendf(nil, `"output_index":%d,"item":%s`, index, item))
}

func (r *respReply) message(index int, suffix, text string, rng *rand.Rand) []sseLine {
	id := "msg_" + suffix
	item := func(status, content string) []byte {
		b := append([]byte(`{"id":`), appendJSONString(nil, id)...)
		return fmt.Appendf(b, `,"type":"message","status":"%s","role":"assistant","content":[%s]}`, status, content)
	}
	part := func(text string) string {
		return `{"type":"output_text","annotations":[],"logprobs":[],"text":` + string(appendJSONString(nil, text)) + `}`
	}
	at := append(itemFields(index, id), `,"content_index":0`...)
	evs := []sseLine{
		r.added(index, item("in_progress", "")),
		r.ev("response.content_part.added", append(append([]byte(nil), at...), `,"part":`+part("")...)),
	}
	for _, p := range split(text, rng, 16, r.quirks) {
		d := append(append([]byte(nil), at...), `,"delta":`...)
		evs = append(evs, paced(r.ev("response.output_text.delta", append(appendPiece(d, p), `,"logprobs":[]`...)), p))
	}
	done := append(append([]byte(nil), at...), `,"text":`...)
	evs = append(evs,
		r.ev("response.output_text.done", append(appendJSONString(done, text), `,"logprobs":[]`...)),
		r.ev("response.content_part.done", append(append([]byte(nil), at...), `,"part":`+part(text)...)),
		r.done(index, item("completed", part(text))))
	return evs
}

func (r *respReply) reasoning(index int, suffix string, b Block, rng *rand.Rand) []sseLine {
	id := "rs_" + suffix
	item := func(summary string) []byte {
		out := append([]byte(`{"id":`), appendJSONString(nil, id)...)
		out = fmt.Appendf(out, `,"type":"reasoning","summary":[%s]`, summary)
		if summary != "" {
			out = append(out, `,"encrypted_content":`...)
			out = appendJSONString(out, b.Signature)
		}
		return append(out, '}')
	}
	part := func(text string) string {
		return `{"type":"summary_text","text":` + string(appendJSONString(nil, text)) + `}`
	}
	at := append(itemFields(index, id), `,"summary_index":0`...)
	evs := []sseLine{
		r.added(index, item("")),
		r.ev("response.reasoning_summary_part.added", append(append([]byte(nil), at...), `,"part":`+part("")...)),
	}
	for _, p := range split(b.Thinking, rng, 16, r.quirks) {
		d := append(append([]byte(nil), at...), `,"delta":`...)
		evs = append(evs, paced(r.ev("response.reasoning_summary_text.delta", appendPiece(d, p)), p))
	}
	done := append(append([]byte(nil), at...), `,"text":`...)
	evs = append(evs,
		r.ev("response.reasoning_summary_text.done", appendJSONString(done, b.Thinking)),
		r.ev("response.reasoning_summary_part.done", append(append([]byte(nil), at...), `,"part":`+part(b.Thinking)...)),
		r.done(index, item(part(b.Thinking))))
	return evs
}

func (r *respReply) functionCall(index int, suffix string, b Block, rng *rand.Rand) []sseLine {
	id := "fc_" + suffix
	item := func(status, args string) []byte {
		out := append([]byte(`{"id":`), appendJSONString(nil, id)...)
		out = fmt.Appendf(out, `,"type":"function_call","status":"%s","arguments":%s,"call_id":%s,"name":%s}`,
			status, appendJSONString(nil, args), appendJSONString(nil, chatToolID(b.ID)), appendJSONString(nil, b.Name))
		return out
	}
	at := itemFields(index, id)
	evs := []sseLine{r.added(index, item("in_progress", ""))}
	for _, p := range split(argsText(b), rng, 8, r.quirks) {
		d := append(append([]byte(nil), at...), `,"delta":`...)
		evs = append(evs, paced(r.ev("response.function_call_arguments.delta", appendPiece(d, p)), p))
	}
	done := append(append([]byte(nil), at...), `,"arguments":`...)
	evs = append(evs,
		r.ev("response.function_call_arguments.done", appendJSONString(done, argsText(b))),
		r.done(index, item("completed", argsText(b))))
	return evs
}

// responses answers a Responses API request with reply.
func (s *Server) responses(ctx context.Context, w http.ResponseWriter, rec *Recorded, req *Request, reply Reply, pl cachePlan, rng *rand.Rand) {
	r := &respReply{
		id: fmt.Sprintf("resp_fake%020d", s.msgSeq.Add(1)), model: req.Model, created: s.cfg.Now().Unix(),
		usage: pl.usage, reply: reply, quirks: newQuirkSet(s.cfg.Quirks, reply.Quirks),
	}
	s.update(rec, func(rc *Recorded) { rc.MessageID, rc.Usage = r.id, openAIUsage(pl.usage, reply) })
	content, end := r.events(rng)
	f := reply.Fault
	if !req.Stream {
		if f != nil {
			s.failWhole(ctx, w, rec, req.API, f)
			return
		}
		if !s.pacer(ctx, w).release(contentBytes(reply)) {
			s.update(rec, func(rc *Recorded) { rc.Error = "request cancelled while the reply was generated" })
			return
		}
		s.cache.commit(pl)
		status, _ := r.status()
		s.update(rec, func(rc *Recorded) { rc.Status = 200 })
		w.Header().Set("content-type", "application/json")
		w.WriteHeader(200)
		w.Write(append(r.response(status, true), '\n'))
		return
	}
	s.sendLines(ctx, w, rec, pl, content, []sseLine{end}, f, func() sseLine {
		e := f.apiError(APIResponses)
		code := e.code
		if code == "" {
			code = e.typ
		}
		return r.ev("error", fmt.Appendf(nil, `"code":%s,"message":%s,"param":null`, appendJSONString(nil, code), appendJSONString(nil, e.message)))
	}, r.quirks[KeepAliveComments], rng)
}

// paced marks l as carrying p's bytes of content.
func paced(l sseLine, p piece) sseLine {
	l.out = p.size()
	return l
}

// sha hashes an id into a seed for derivedID.
func sha(s string) [32]byte { return sha256.Sum256([]byte(s)) }
