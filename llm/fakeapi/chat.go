package fakeapi

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The chat completions stream: "data: CHUNK" lines, each a
// chat.completion.chunk object with one choice, ended by "data: [DONE]".
// The first chunk carries the role, then reasoning_content, content and
// tool_calls deltas follow the reply's blocks in order (a tool call opens
// with its index, id, type and name, then its arguments arrive in pieces
// naming the index only), then a chunk with an empty delta and the
// finish_reason, and, when the request asked for stream_options.
// include_usage, a last chunk with "choices": [] and the usage. Other
// chunks then carry "usage": null. Quirks change this grammar the way
// compatible servers do (quirk.go).

// chatReply is one response in the chat protocol.
type chatReply struct {
	id, model string
	created   int64
	usage     Usage // in the Messages API's terms, see chatUsage
	reply     Reply
	quirks    quirkSet
	include   bool // stream_options.include_usage
}

// chatFinish maps a stop reason to a finish_reason.
func chatFinish(stop string) string {
	switch stop {
	case "tool_use":
		return "tool_calls"
	case "max_tokens":
		return "length"
	case "refusal":
		return "content_filter"
	}
	return "stop"
}

// chatToolID turns the fake's generated tool ids into OpenAI's shape.
func chatToolID(id string) string {
	if rest, ok := strings.CutPrefix(id, "toolu_"); ok {
		return "call_" + rest
	}
	return id
}

// chunk returns a chunk holding delta (a JSON object) and finish, "" for
// null.
func (c *chatReply) chunk(delta []byte, finish string) []byte {
	b := c.head()
	b = append(b, `"choices":[{"index":0,"delta":`...)
	b = append(b, delta...)
	b = append(b, `,"logprobs":null,"finish_reason":`...)
	if finish == "" {
		b = append(b, "null"...)
	} else {
		b = appendJSONString(b, finish)
	}
	b = append(b, "}]"...)
	switch {
	case finish != "" && c.quirks[UsageOnFinish] && !c.quirks[NoUsage]:
		b = append(b, `,"usage":`...)
		b = c.appendUsage(b)
	case c.include && !c.quirks[UsageOnFinish] && !c.quirks[NoUsage]:
		b = append(b, `,"usage":null`...)
	}
	return append(b, '}')
}

func (c *chatReply) head() []byte {
	b := []byte(`{"id":`)
	b = appendJSONString(b, c.id)
	b = append(b, `,"object":"chat.completion.chunk","created":`...)
	b = strconv.AppendInt(b, c.created, 10)
	b = append(b, `,"model":`...)
	b = appendJSONString(b, c.model)
	return append(b, `,"system_fingerprint":"fp_fakeapi",`...)
}

// usageChunk is the final chunk of an include_usage stream.
func (c *chatReply) usageChunk() []byte {
	b := c.head()
	if c.quirks[UsageNullChoices] {
		b = append(b, `"choices":null,"usage":`...)
	} else {
		b = append(b, `"choices":[],"usage":`...)
	}
	return append(c.appendUsage(b), '}')
}

// appendUsage writes the usage object: prompt_tokens counts every input
// token, cached_tokens the part read from the prompt cache.
func (c *chatReply) appendUsage(b []byte) []byte {
	prompt := c.usage.total()
	out := c.reply.OutputTokens
	b = fmt.Appendf(b, `{"prompt_tokens":%d,"completion_tokens":%d,"total_tokens":%d,`, prompt, out, prompt+out)
	b = fmt.Appendf(b, `"prompt_tokens_details":{"cached_tokens":%d,"audio_tokens":0},`, c.usage.CacheReadInputTokens)
	return fmt.Appendf(b, `"completion_tokens_details":{"reasoning_tokens":%d,"audio_tokens":0,"accepted_prediction_tokens":0,"rejected_prediction_tokens":0}}`, reasoningTokens(c.reply))
}

func reasoningTokens(r Reply) int {
	n := 0
	for _, b := range r.Content {
		if b.Type == "thinking" {
			n += len(b.Thinking) / 4
		}
	}
	return n
}

// content returns the chunks between the role chunk and the finish chunk.
func (c *chatReply) content(rng *rand.Rand) []sseLine {
	var out []sseLine
	delta := func(key string, p piece) {
		d := append([]byte(`{"`+key+`":`), appendPiece(nil, p)...)
		out = append(out, sseLine{data: c.chunk(append(d, '}'), ""), out: p.size()})
	}
	thinking := "reasoning_content"
	if c.quirks[ReasoningField] {
		thinking = "reasoning"
	}
	var calls []Block
	flushCalls := func() {
		out = append(out, c.toolCallChunks(calls, rng)...)
		calls = nil
	}
	for _, b := range c.reply.Content {
		switch b.Type {
		case "tool_use":
			calls = append(calls, b)
			continue
		case "text":
			flushCalls()
			for _, p := range split(b.Text, rng, 16, c.quirks) {
				delta("content", p)
			}
		case "thinking":
			flushCalls()
			for _, p := range split(b.Thinking, rng, 16, c.quirks) {
				delta(thinking, p)
			}
		}
		// redacted_thinking has no place in the chat protocol.
	}
	flushCalls()
	return out
}

// toolCallChunks streams one run of tool calls; index counts every call of
// the response.
func (c *chatReply) toolCallChunks(calls []Block, rng *rand.Rand) []sseLine {
	if len(calls) == 0 {
		return nil
	}
	first := 0
	for _, b := range c.reply.Content {
		if b.Type == "tool_use" && b.ID == calls[0].ID {
			break
		}
		if b.Type == "tool_use" {
			first++
		}
	}
	call := func(i int, b Block, args piece, head bool) sseLine {
		d := fmt.Appendf(nil, `{"tool_calls":[{"index":%d,`, first+i)
		if head {
			d = append(d, `"id":`...)
			d = appendJSONString(d, chatToolID(b.ID))
			d = append(d, `,"type":"function","function":{"name":`...)
			d = appendJSONString(d, b.Name)
			d = append(d, `,"arguments":`...)
		} else {
			d = append(d, `"function":{"arguments":`...)
		}
		d = appendPiece(d, args)
		return sseLine{data: c.chunk(append(d, "}}]}"...), ""), out: args.size()}
	}
	var out []sseLine
	if c.quirks[WholeToolCalls] {
		for i, b := range calls {
			out = append(out, call(i, b, piece{bytes: []byte(argsText(b))}, true))
		}
		return out
	}
	pieces := make([][]piece, len(calls))
	for i, b := range calls {
		pieces[i] = split(argsText(b), rng, 8, c.quirks)
		if !c.quirks[InterleavedToolCalls] {
			out = append(out, call(i, b, piece{bytes: []byte{}}, true))
			for _, p := range pieces[i] {
				out = append(out, call(i, b, p, false))
			}
		}
	}
	if !c.quirks[InterleavedToolCalls] {
		return out
	}
	for i, b := range calls {
		out = append(out, call(i, b, piece{bytes: []byte{}}, true))
	}
	for k := 0; ; k++ {
		more := false
		for i, b := range calls {
			if k < len(pieces[i]) {
				out = append(out, call(i, b, pieces[i][k], false))
				more = true
			}
		}
		if !more {
			return out
		}
	}
}

// events returns the stream's lines: the content, and the tail that ends it
// ([DONE] included).
func (c *chatReply) events(rng *rand.Rand) (content []sseLine, tail []sseLine) {
	content = append(content, dataLine(c.chunk([]byte(`{"role":"assistant","content":""}`), "")))
	content = append(content, c.content(rng)...)
	if !c.quirks[NoFinishReason] {
		finish := chatFinish(c.reply.StopReason)
		if finish == "tool_calls" && c.quirks[StopForToolCalls] {
			finish = "stop"
		}
		tail = append(tail, dataLine(c.chunk([]byte(`{}`), finish)))
	}
	if c.include && !c.quirks[NoUsage] && !c.quirks[UsageOnFinish] {
		tail = append(tail, dataLine(c.usageChunk()))
	}
	if !c.quirks[NoDone] {
		tail = append(tail, dataLine([]byte("[DONE]")))
	}
	return content, tail
}

// sendLines streams the lines of an OpenAI-protocol response: content, then
// tail, or, when f is a mid-stream fault, the first half of content and
// the fault (errLine is the protocol's error event). With keepAlive, SSE
// comments fall between lines at seeded places.
func (s *Server) sendLines(ctx context.Context, w http.ResponseWriter, rec *Recorded, pl cachePlan, content, tail []sseLine,
	f *Fault, errLine func() sseLine, keepAlive bool, rng *rand.Rand) {
	startStream(w)
	s.update(rec, func(rc *Recorded) { rc.Status = 200 })
	lines := content
	if f == nil {
		lines = append(lines, tail...)
	} else {
		lines = lines[:(len(lines)+1)/2]
	}
	sw := &lineWriter{w: w}
	pace := s.pacer(ctx, w)
	for i, l := range lines {
		if !pace.release(l.out) {
			s.update(rec, func(rc *Recorded) { rc.Error = "request cancelled while streaming" })
			return
		}
		if keepAlive && rng.IntN(4) == 0 {
			sw.comment("keep-alive")
		}
		if err := sw.line(l); err != nil {
			s.update(rec, func(rc *Recorded) { rc.Error = "writing the stream: " + err.Error() })
			return
		}
		if i == 0 {
			s.cache.commit(pl) // the response has begun
		}
	}
	if f != nil {
		s.endFaulty(ctx, w, rec, f, func() { sw.line(errLine()) })
	}
}

// endFaulty fails a stream that has begun with a mid-stream fault; streamErr
// writes the protocol's error event.
func (s *Server) endFaulty(ctx context.Context, w http.ResponseWriter, rec *Recorded, f *Fault, streamErr func()) {
	s.update(rec, func(rc *Recorded) { rc.Fault = f.Kind })
	switch f.Kind {
	case CutConnection:
		cut(w)
	case Stall:
		http.NewResponseController(w).Flush()
		<-ctx.Done()
		s.update(rec, func(rc *Recorded) { rc.Error = "stalled until the client went away" })
	case KeepAlive:
		keepAlive(ctx, w)
		s.update(rec, func(rc *Recorded) { rc.Error = "kept alive with comments until the client went away" })
	default:
		s.update(rec, func(rc *Recorded) { rc.Error = f.message() })
		streamErr()
	}
}

// keepAlive sends a comment every KeepAliveEvery until ctx ends.
func keepAlive(ctx context.Context, w http.ResponseWriter) {
	rc := http.NewResponseController(w)
	t := time.NewTicker(KeepAliveEvery)
	defer t.Stop()
	for {
		if _, err := io.WriteString(w, ": keep-alive\n\n"); err != nil || rc.Flush() != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func startStream(w http.ResponseWriter) {
	h := w.Header()
	h.Set("content-type", "text/event-stream; charset=utf-8")
	h.Set("cache-control", "no-cache")
	w.WriteHeader(200)
}

// sseLine is one server-sent event: a name (none in the chat protocol) and
// its data; out is the content bytes it carries (for the pacing).
type sseLine struct {
	name string
	data []byte
	out  int
}

func dataLine(b []byte) sseLine { return sseLine{data: b} }

// lineWriter writes server-sent events and comments.
type lineWriter struct {
	w   http.ResponseWriter
	buf []byte
}

func (l *lineWriter) line(ev sseLine) error {
	l.buf = l.buf[:0]
	if ev.name != "" {
		l.buf = append(append(append(l.buf, "event: "...), ev.name...), '\n')
	}
	l.buf = append(append(append(l.buf, "data: "...), ev.data...), "\n\n"...)
	_, err := l.w.Write(l.buf)
	return err
}

func (l *lineWriter) comment(text string) error {
	_, err := l.w.Write([]byte(": " + text + "\n\n"))
	return err
}

// openAIErrorJSON is the OpenAI protocols' error object.
func openAIErrorJSON(e *apiError) []byte {
	b := []byte(`{"error":{"message":`)
	b = appendJSONString(b, e.message)
	b = append(b, `,"type":`...)
	b = appendJSONString(b, e.typ)
	b = append(b, `,"param":null,"code":`...)
	if e.code == "" {
		b = append(b, "null"...)
	} else {
		b = appendJSONString(b, e.code)
	}
	return append(b, "}}"...)
}

// respondChatJSON sends a complete chat.completion for a request without
// "stream": true.
func (s *Server) respondChatJSON(ctx context.Context, w http.ResponseWriter, rec *Recorded, c *chatReply, pl cachePlan) {
	if !s.pacer(ctx, w).release(contentBytes(c.reply)) {
		s.update(rec, func(rc *Recorded) { rc.Error = "request cancelled while the reply was generated" })
		return
	}
	s.cache.commit(pl)
	var text, thought strings.Builder
	var calls []byte
	for _, b := range c.reply.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "thinking":
			thought.WriteString(b.Thinking)
		case "tool_use":
			if calls != nil {
				calls = append(calls, ',')
			}
			calls = append(calls, `{"id":`...)
			calls = appendJSONString(calls, chatToolID(b.ID))
			calls = append(calls, `,"type":"function","function":{"name":`...)
			calls = appendJSONString(calls, b.Name)
			calls = append(calls, `,"arguments":`...)
			calls = append(appendJSONString(calls, argsText(b)), "}}"...)
		}
	}
	m := []byte(`{"role":"assistant","content":`)
	if text.Len() == 0 && calls != nil {
		m = append(m, "null"...)
	} else {
		m = appendJSONString(m, text.String())
	}
	if thought.Len() > 0 {
		m = append(m, `,"reasoning_content":`...)
		m = appendJSONString(m, thought.String())
	}
	if calls != nil {
		m = append(append(append(m, `,"tool_calls":[`...), calls...), ']')
	}
	b := []byte(`{"id":`)
	b = appendJSONString(b, c.id)
	b = fmt.Appendf(b, `,"object":"chat.completion","created":%d,"model":`, c.created)
	b = appendJSONString(b, c.model)
	b = append(b, `,"choices":[{"index":0,"message":`...)
	b = append(b, m...)
	b = append(b, `},"logprobs":null,"finish_reason":`...)
	b = appendJSONString(b, chatFinish(c.reply.StopReason))
	b = append(b, `}],"usage":`...)
	b = append(c.appendUsage(b), '}')
	s.update(rec, func(rc *Recorded) { rc.Status = 200 })
	w.Header().Set("content-type", "application/json")
	w.WriteHeader(200)
	w.Write(append(b, '\n'))
}

// chat answers a chat completions request with reply.
func (s *Server) chat(ctx context.Context, w http.ResponseWriter, rec *Recorded, req *Request, reply Reply, pl cachePlan, rng *rand.Rand) {
	c := &chatReply{
		id: fmt.Sprintf("chatcmpl-fake%020d", s.msgSeq.Add(1)), model: req.Model, created: s.cfg.Now().Unix(),
		usage: pl.usage, reply: reply, quirks: newQuirkSet(s.cfg.Quirks, reply.Quirks), include: req.includeUsage,
	}
	s.update(rec, func(rc *Recorded) { rc.MessageID, rc.Usage = c.id, openAIUsage(pl.usage, reply) })
	if !req.Stream {
		if f := reply.Fault; f != nil {
			s.failWhole(ctx, w, rec, req.API, f)
			return
		}
		s.respondChatJSON(ctx, w, rec, c, pl)
		return
	}
	content, tail := c.events(rng)
	s.sendLines(ctx, w, rec, pl, content, tail, reply.Fault,
		func() sseLine { return dataLine(openAIErrorJSON(reply.Fault.apiError(APIChat))) }, c.quirks[KeepAliveComments], rng)
}

// openAIUsage is what an OpenAI client makes of the usage the fake reports:
// the cached part read, the rest plain input (the protocols report no cache
// writes).
func openAIUsage(u Usage, reply Reply) Usage {
	return Usage{InputTokens: u.total() - u.CacheReadInputTokens, CacheReadInputTokens: u.CacheReadInputTokens, OutputTokens: reply.OutputTokens}
}
