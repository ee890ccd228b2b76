package fakeapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"
)

// Policy decides the reply to a request. The server calls it from many
// goroutines at once, one call per request, so it must be safe for
// concurrent use. It may block (for example on a test's barrier) but must
// then also watch req.Context().
type Policy func(*Request) Reply

// Reply is what the fake answers.
type Reply struct {
	// Content is streamed in order: text, tool_use (ID may be empty: the
	// server generates a deterministic "toolu_" id), thinking (with
	// Signature; generated when empty) and redacted_thinking blocks.
	Content []Block
	// StopReason defaults to "tool_use" if Content holds a tool_use block,
	// else "end_turn".
	StopReason string
	// Fault, when set, happens instead of the reply (HTTP errors) or during
	// it (StreamError, CutConnection).
	Fault *Fault
	// FirstTokenDelay delays the response headers and message_start, like a
	// slow model. The wait ends early when the request is cancelled.
	FirstTokenDelay time.Duration
	// OutputTokens defaults to the content's size in bytes / 4 (at least 1).
	OutputTokens int
	// Label names the reply in Recorded.Label and in logs; a script sets it
	// to the rule's name.
	Label string
	// Quirks are OpenAI-compatible servers' deviations to reproduce in this
	// reply's stream, on top of Config.Quirks (quirk.go).
	Quirks []Quirk
	// Await, when set, decides the reply later: a policy returns at once
	// and the answer comes from whoever Await waits for (a person, in
	// llm/fakeapi/relay). A Messages API stream begins first — headers and
	// message_start, whose usage does not depend on the content — and pings
	// (Config.AwaitPing) keep the client's idle watchdog quiet until Await
	// returns the reply to stream; every other response waits for it
	// before it begins. Await must return soon after ctx ends (its reply
	// is then dropped). The other fields of a Reply with Await are
	// ignored, except Label.
	Await func(ctx context.Context) Reply
}

// FaultKind names an injected failure.
type FaultKind string

// The faults the server can inject. HTTP faults answer with the API's error
// body; StreamError and CutConnection fail a response that already started.
const (
	RateLimited      FaultKind = "rate_limited"      // 429 rate_limit_error (+ retry-after headers)
	Overloaded       FaultKind = "overloaded"        // 529 overloaded_error
	ServerError      FaultKind = "server_error"      // 500 api_error
	BadRequest       FaultKind = "bad_request"       // 400 invalid_request_error
	Unauthorized     FaultKind = "unauthorized"      // 401 authentication_error
	PermissionDenied FaultKind = "permission_denied" // 403 permission_error
	Billing          FaultKind = "billing"           // 402 billing_error
	NotFound         FaultKind = "not_found"         // 404 not_found_error (an unknown model)
	// SpendLimit is a 429 rate_limit_error that says not to retry: no
	// retry-after, and x-should-retry: false.
	SpendLimit FaultKind = "spend_limit"
	// StreamError sends part of the reply, then an SSE error event
	// (overloaded_error unless Fault.Type says otherwise) and ends the
	// response without message_stop.
	StreamError FaultKind = "stream_error"
	// CutConnection sends part of the reply, then closes the TCP connection
	// before message_stop: the client reads an unexpected EOF.
	CutConnection FaultKind = "cut_connection"
	// Stall sends part of the reply, then nothing more, holding the
	// connection open until the client goes away: a server that hangs.
	Stall FaultKind = "stall"
	// KeepAlive sends part of the reply, then SSE comment lines
	// (": keep-alive") every KeepAliveEvery forever: a server that is busy
	// saying nothing.
	KeepAlive FaultKind = "keepalive"
	// HTMLError answers with an HTML page instead of the API's JSON, as a
	// proxy in front of the server does (502 unless Fault.Status says
	// otherwise).
	HTMLError FaultKind = "html_error"
	// ErrorBody answers 200 with a JSON error body instead of a response
	// (api_error, or server_error in the OpenAI protocols, unless Fault.Type
	// says otherwise).
	ErrorBody FaultKind = "error_body"
)

// KeepAliveEvery is how often a KeepAlive fault sends a comment.
const KeepAliveEvery = 20 * time.Millisecond

// midStream reports a fault that happens after the response began.
func (k FaultKind) midStream() bool {
	return k == StreamError || k == CutConnection || k == Stall || k == KeepAlive
}

// faultKinds maps each kind to its HTTP status and error type.
var faultKinds = map[FaultKind]struct {
	status int
	typ    string
}{
	RateLimited:      {429, "rate_limit_error"},
	Overloaded:       {529, "overloaded_error"},
	ServerError:      {500, "api_error"},
	BadRequest:       {400, "invalid_request_error"},
	Unauthorized:     {401, "authentication_error"},
	PermissionDenied: {403, "permission_error"},
	Billing:          {402, "billing_error"},
	NotFound:         {404, "not_found_error"},
	SpendLimit:       {429, "rate_limit_error"},
	StreamError:      {529, "overloaded_error"},
	CutConnection:    {0, ""},
	Stall:            {0, ""},
	KeepAlive:        {0, ""},
	HTMLError:        {502, ""},
	ErrorBody:        {200, "api_error"},
}

// openAIFaults maps each kind to the HTTP status, error type and code the
// OpenAI API (and the servers that copy it) use. OpenAI has no 529: an
// overloaded server answers 503.
var openAIFaults = map[FaultKind]struct {
	status    int
	typ, code string
}{
	RateLimited:      {429, "requests", "rate_limit_exceeded"},
	Overloaded:       {503, "server_error", ""},
	ServerError:      {500, "server_error", ""},
	BadRequest:       {400, "invalid_request_error", ""},
	Unauthorized:     {401, "invalid_request_error", "invalid_api_key"},
	PermissionDenied: {403, "invalid_request_error", "unsupported_country_region_territory"},
	Billing:          {429, "insufficient_quota", "insufficient_quota"},
	NotFound:         {404, "invalid_request_error", "model_not_found"},
	SpendLimit:       {429, "insufficient_quota", "insufficient_quota"},
	StreamError:      {500, "server_error", ""},
	HTMLError:        {502, "", ""},
	ErrorBody:        {200, "server_error", ""},
}

// Fault is an injected failure.
type Fault struct {
	Kind FaultKind
	// RetryAfter and RetryAfterMs become the retry-after and retry-after-ms
	// headers when set.
	RetryAfter   string
	RetryAfterMs string
	// Message is the error message; each kind has a default.
	Message string
	// Type overrides the error type (e.g. "api_error" for a StreamError).
	Type string
	// Status overrides the HTTP status of an HTTP fault.
	Status int
}

// statusAndType resolves the fault's HTTP status and error type.
func (f *Fault) statusAndType() (int, string) {
	e := f.apiError(APIMessages)
	return e.status, e.typ
}

// apiError is the error response the fault sends in protocol api.
func (f *Fault) apiError(api API) *apiError {
	k := faultKinds[f.Kind]
	e := &apiError{status: k.status, typ: k.typ, message: f.message()}
	if api != APIMessages {
		o := openAIFaults[f.Kind]
		e.status, e.typ, e.code = o.status, o.typ, o.code
	}
	if f.Status != 0 {
		e.status = f.Status
	}
	if f.Type != "" {
		e.typ = f.Type
	}
	return e
}

func (f *Fault) message() string {
	if f.Message != "" {
		return f.Message
	}
	switch f.Kind {
	case RateLimited:
		return "fakeapi: rate limited (injected)"
	case Overloaded, StreamError:
		return "Overloaded"
	case SpendLimit:
		return "fakeapi: spend limit reached (injected); raise the limit before retrying"
	case Billing:
		return "fakeapi: credit balance too low (injected)"
	}
	return fmt.Sprintf("fakeapi: injected %s", f.Kind)
}

// TextBlock returns a text block.
func TextBlock(s string) Block { return Block{Type: "text", Text: s} }

// ToolUseBlock returns a tool_use block. input is marshalled to JSON (a
// json.RawMessage is used as is); it must encode to an object. An empty id
// lets the server generate one. It panics if input cannot be marshalled,
// which is a programming error in the caller.
func ToolUseBlock(id, name string, input any) Block {
	raw, ok := input.(json.RawMessage)
	if !ok {
		var err error
		raw, err = marshalNoEscape(input)
		if err != nil {
			panic(fmt.Sprintf("fakeapi.ToolUseBlock(%q): input does not marshal: %v", name, err))
		}
	}
	return Block{Type: "tool_use", ID: id, Name: name, Input: raw}
}

// BadArguments returns a tool_use block whose arguments are text that is
// not a JSON object, as a weak model writes them. Only the OpenAI protocols
// can carry it (they send arguments as text); a Messages API stream refuses
// it.
func BadArguments(name, text string) Block {
	raw, _ := json.Marshal(text)
	return Block{Type: "tool_use", Name: name, Input: raw}
}

// textArgs reports an input that BadArguments made: a JSON string.
func textArgs(in json.RawMessage) bool {
	in = bytes.TrimSpace(in)
	return len(in) > 0 && in[0] == '"' && json.Valid(in)
}

// argsText is a tool_use block's arguments as the OpenAI protocols send
// them: the input's JSON, or the text BadArguments gave.
func argsText(b Block) string {
	if textArgs(b.Input) {
		var s string
		json.Unmarshal(b.Input, &s)
		return s
	}
	return string(b.Input)
}

// ThinkingBlock returns a thinking block; an empty signature is generated.
func ThinkingBlock(thinking, signature string) Block {
	return Block{Type: "thinking", Thinking: thinking, Signature: signature}
}

// TextReply returns a reply of one text block.
func TextReply(s string) Reply { return Reply{Content: []Block{TextBlock(s)}} }

// ToolReply returns a reply of one tool_use block (see ToolUseBlock).
func ToolReply(id, name string, input any) Reply {
	return Reply{Content: []Block{ToolUseBlock(id, name, input)}}
}

// FaultReply returns a reply that fails with the given kind.
func FaultReply(kind FaultKind) Reply { return Reply{Fault: &Fault{Kind: kind}} }

// normalize checks a reply and fills its defaults: tool ids derived from
// seed (a hash of the request), compacted tool input, signatures, stop
// reason and output tokens. It returns a copy; the caller's reply is not
// modified.
func normalize(r Reply, seed [32]byte) (Reply, error) {
	if r.Fault != nil {
		if _, ok := faultKinds[r.Fault.Kind]; !ok {
			return r, fmt.Errorf("unknown fault kind %q", r.Fault.Kind)
		}
	}
	if err := checkQuirks(r.Quirks); err != nil {
		return r, err
	}
	content := make([]Block, len(r.Content))
	hasTool, size := false, 0
	lastServerUse := ""
	for i, b := range r.Content {
		switch b.Type {
		case "server_tool_use", "web_search_tool_result":
			var err error
			if b, err = normalizeSearch(b, seed, i, &lastServerUse); err != nil {
				return r, fmt.Errorf("content %d: %v", i, err)
			}
			size += len(b.Input)
		case "text":
			size += len(b.Text)
		case "tool_use":
			if b.Name == "" {
				return r, fmt.Errorf("content %d: tool_use without a name", i)
			}
			in := b.Input
			if len(bytes.TrimSpace(in)) == 0 {
				in = json.RawMessage("{}")
			}
			var buf bytes.Buffer
			switch {
			case textArgs(in):
				// Arguments that are not an object (BadArguments): the
				// OpenAI protocols send the text as it is.
			case !isJSONObject(in) || json.Compact(&buf, in) != nil:
				return r, fmt.Errorf("content %d: tool_use %s input is not a JSON object: %.100s", i, b.Name, in)
			default:
				b.Input = buf.Bytes()
			}
			if b.ID == "" {
				b.ID = "toolu_" + derivedID(seed, i)
			}
			hasTool = true
			size += len(b.Input)
		case "thinking":
			if b.Signature == "" {
				sum := sha256.Sum256([]byte(b.Thinking))
				b.Signature = base64.StdEncoding.EncodeToString(sum[:])
			}
			size += len(b.Thinking)
		case "redacted_thinking":
			if b.Data == "" {
				return r, fmt.Errorf("content %d: redacted_thinking without data", i)
			}
		default:
			return r, fmt.Errorf("content %d: the fake cannot stream %q blocks (use text, tool_use, thinking, redacted_thinking, server_tool_use or web_search_tool_result)", i, b.Type)
		}
		content[i] = b
	}
	r.Content = content
	if r.StopReason == "" {
		r.StopReason = "end_turn"
		if hasTool {
			r.StopReason = "tool_use"
		}
	}
	if r.OutputTokens <= 0 {
		r.OutputTokens = max(1, size/4)
	}
	return r, nil
}

// idAlphabet is base62, as the API's ids use.
const idAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// derivedID returns 24 base62 characters derived from seed and i.
func derivedID(seed [32]byte, i int) string {
	var idx [8]byte
	binary.BigEndian.PutUint64(idx[:], uint64(i))
	sum := sha256.Sum256(append(seed[:], idx[:]...))
	out := make([]byte, 24)
	for k := range out {
		out[k] = idAlphabet[int(sum[k])%len(idAlphabet)]
	}
	return string(out)
}
