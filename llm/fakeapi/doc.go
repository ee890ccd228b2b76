// Package fakeapi is a fake of the Anthropic Messages API, and of OpenAI's
// chat completions and Responses APIs, that speaks the real protocols over
// HTTP on a loopback port. Every test of the engine and
// the CLI points the official SDK at it, and `cohort demo` and
// `cohort --model scripted:FILE` run on it, so Cohort works without an API
// key.
//
//	srv := fakeapi.New(fakeapi.Config{Policy: func(r *fakeapi.Request) fakeapi.Reply {
//		return fakeapi.TextReply("hello")
//	}})
//	defer srv.Close()
//	client := anthropic.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test"))
//
// # Protocol
//
// POST /v1/messages with "stream": true answers with server-sent events in
// the API's grammar: message_start (usage with input_tokens,
// cache_creation_input_tokens, cache_read_input_tokens and output_tokens),
// then per block content_block_start, content_block_delta (text_delta,
// input_json_delta, thinking_delta, signature_delta) and content_block_stop,
// then message_delta (stop_reason and the cumulative usage) and message_stop.
// A ping follows the first content_block_start, as the API sends it, and more
// pings fall at seeded random places between message_start and message_stop.
// Text and tool input are cut into deltas at seeded random byte positions:
// anywhere, including inside \uXXXX escapes, between escaped surrogate
// halves and between a backslash and the character it escapes, but never
// inside a UTF-8 sequence, which a JSON string cannot carry. The same body and
// Config.Seed give the same events; message ids ("msg_fake…") count up per
// server and tool_use ids ("toolu_…") derive from a hash of the request, so a
// retried request gets the same ids.
//
// Without "stream" the complete message is returned as JSON.
// POST /v1/messages/count_tokens returns {"input_tokens": N}.
//
// # The OpenAI protocols
//
// POST /v1/chat/completions and POST /v1/responses speak OpenAI's
// protocols, so the official openai-go SDK, and any OpenAI-compatible
// client, can be tested against the fake the same way: point its base URL
// at URL+"/v1". Each body is translated into the same Request the Messages
// API gives (chatwire.go, respwire.go say how), so one Policy or script
// answers all three protocols, validation applies the same rules (roles
// alternate, every tool call answered), and Request.API says which protocol
// a request used (a script matches it with `api: chat`).
//
// Chat streams are "data:" lines of chat.completion.chunk objects: the role,
// then reasoning_content, content and tool_calls deltas (a tool call opens
// with index, id, type and name; its arguments follow in pieces under the
// same index), a chunk with the finish_reason, with
// stream_options.include_usage a chunk with "choices": [] and the usage
// (prompt_tokens, prompt_tokens_details.cached_tokens, completion_tokens),
// and data: [DONE]. Responses streams are named events with sequence
// numbers from response.created to response.completed (or
// response.incomplete), each output item announced, streamed and closed
// (responses.go). Tool ids come as "call_…". Errors have OpenAI's shape,
// {"error": {"message", "type", "param", "code"}}, with OpenAI's statuses
// (an overloaded server answers 503, a spent quota 429 insufficient_quota),
// and responses carry x-request-id.
//
// Quirks (Config.Quirks, Reply.Quirks, a rule's `quirks: [...]`) reproduce
// what compatible servers do differently: a tool call whole in one chunk,
// finish_reason "stop" after tool calls, no finish_reason, usage on the
// finish chunk or with "choices": null or not at all, text and arguments
// cut inside UTF-8 sequences or between escaped surrogate halves, parallel
// tool calls interleaved by index, thinking as "reasoning", no [DONE],
// keep-alive comments (quirk.go lists them). BadArguments makes a tool call
// whose arguments are text that is not JSON, as a weak model writes them.
//
// Errors use the API's shape — HTTP status, {"type":"error","error":{"type",
// "message"},"request_id"} — and every response carries a request-id header.
// Retryable statuses carry x-should-retry: true.
//
// # Validation
//
// Requests are checked like the real API checks them and rejected with 400
// invalid_request_error: missing model, max_tokens or messages; a missing
// anthropic-version header; a first message that is not from the user;
// roles that do not alternate (the real API merges consecutive same-role
// messages; the fake rejects them, so a client bug that sends them shows up);
// empty content or empty text blocks; tool_result blocks that do not answer a
// tool_use of the immediately preceding assistant message, and tool_use
// blocks left unanswered by the next user message; duplicate tool_use ids or
// tool names; tool names outside ^[a-zA-Z0-9_-]{1,128}$; more than 4
// cache_control markers ("A maximum of 4 blocks with cache_control may be
// provided. Found 5."); a thinking budget under 1024 or not below max_tokens.
// Unknown top-level fields are accepted, since the API keeps adding them.
// With Config.APIKey set, a wrong or missing key gets 401.
// Every request, rejected or not, is recorded; Requests returns them.
//
// # Prompt caching
//
// The simulator lays a request out in the API's order — tools, system blocks,
// then every message block — and hashes the prefix at each block, starting
// from the model name. A block's contribution is its canonical JSON (keys
// sorted, cache_control removed) plus, for message blocks, role and message
// index. Tokens are estimated as bytes/4 of that canonical JSON, cumulated
// over the prefix; this is the only token estimate the fake uses (output
// tokens likewise default to content bytes/4).
//
// Reads: for each breakpoint (a block with cache_control), the simulator
// looks for a live entry at that block or up to LookBack (20) blocks before
// it; the longest hit over all breakpoints is read. Writes: every breakpoint
// after the hit whose prefix reaches MinTokens (1024) is written. Usage:
// cache_read_input_tokens is the hit's prefix, cache_creation_input_tokens
// the tokens from the hit to the last written breakpoint, input_tokens the
// rest. Entries expire TTL (5 min; an hour for "ttl": "1h") after their last
// use by the injected clock; a hit refreshes them. A request plans its reads
// when it arrives, before its policy runs, and its writes are committed only
// once its message_start has been sent: two requests in flight before their
// first token never read each other's writes, as with the real cache. A
// request that fails before streaming (an injected 429, a rejection) reads
// and writes nothing. tool_choice and thinking settings are not part of the
// hash.
//
// The OpenAI protocols have no markers: their servers cache prefixes on
// their own. For them every block is a breakpoint, so the longest cached
// prefix is read, except that the last block is always computed (a model
// needs fresh logits); the usage reports the read part as cached_tokens and
// every input token in prompt_tokens (no cache writes are reported).
//
// # Faults
//
// A Reply's Fault fails the request: RateLimited (429, with retry-after and
// retry-after-ms headers when set), SpendLimit (429 that must not be
// retried: x-should-retry: false), Overloaded (529), ServerError (500),
// BadRequest (400), Unauthorized (401), PermissionDenied (403), Billing
// (402); or, after about half of the reply's events were sent, StreamError
// (an SSE error event, overloaded_error by default, then the response ends)
// and CutConnection (the TCP connection is hijacked and closed, so the client
// reads an unexpected EOF and never sees message_stop), Stall (nothing more,
// the connection held open until the client leaves) and KeepAlive (SSE
// comments forever). HTMLError answers with a proxy's HTML page (502) and
// ErrorBody with 200 and a JSON error body instead of a stream, as broken
// gateways do. FirstTokenDelay holds back the headers and message_start. Request.Attempt counts how often the
// exact body was seen, so a policy can fail the first attempts only. The fake
// never truncates a reply to max_tokens; a script sets stop_reason:
// max_tokens when it wants that case.
//
// # Scripts
//
// A script is a YAML (or JSON) list of rules; a mapping {rules: [...]} is
// accepted too. Each request is checked against the rules in order and the
// first rule whose conditions all hold, and whose `times` is not used up,
// answers it. A rule:
//
//	rules:
//	  - name: delegate                # names the rule in logs and Recorded.Label
//	    match:                        # every condition given must hold
//	      system: "You are the lead"  # substring of the system prompt text
//	      system_re: "lead|planner"   # RE2 regexp on the same text
//	      first_user: "fix the bug"   # substring of the first user message
//	      last_user: "done"           # substring of the last user message: its
//	                                  # text and its tool_result text
//	      tool_result: "exit 0"       # substring of the last user message's
//	                                  # tool_result text only
//	      turn: 1                     # assistant messages so far (0 = first call)
//	      attempt: 1                  # Request.Attempt (1 = not a retry)
//	      model: "haiku"              # substring of the model name
//	      tool: "Agent"               # a tool of this name is offered
//	      api: chat                   # messages, chat or responses
//	      # first_user_re, last_user_re, tool_result_re: regexps as above
//	    times: 1                      # answer at most this many requests
//	    reply:                        # blocks, in order (or a plain string)
//	      - thinking: "Plan it."      # optional signature: ...
//	      - text: "Delegating: {{first_user}}"
//	      - tool_use: {name: Agent, input: {description: "fix", prompt: "{{last_user}}"}}
//	    stop_reason: tool_use         # default: tool_use if a tool_use block, else end_turn
//	    fault: {kind: overloaded, retry_after: "1", message: "busy"}
//	    first_token_delay: 50ms
//	    output_tokens: 42
//	    quirks: [whole_tool_calls]    # OpenAI-compatible servers' deviations
//
// A reply block "- web_search: {query: …, results: [{title, url,
// page_age}]}" (or "error: max_uses_exceeded" instead of results) streams
// a server-side web search as the API does: a server_tool_use block whose
// input arrives as input_json_delta fragments, then a
// web_search_tool_result block sent whole in its content_block_start (the
// hits' encrypted_content is derived from their URLs). WebSearchBlocks
// builds the same from Go. The fake never searches; requests that carry
// the blocks back (after a pause_turn) are accepted.
//
// A rule needs a reply or a fault (or both: a stream_error fault sends part of
// the reply first). A tool_use without an id gets a generated one. Text,
// thinking and the string values of tool input may hold placeholders, filled
// per request: {{first_user}}, {{last_user}}, {{last_tool_result}},
// {{system}}, {{turn}}, {{attempt}}, {{model}}. Inside tool input the
// substituted text is JSON-escaped, so input stays valid whatever it holds.
//
// Because rules match on conversation content (the first user message, the
// system prompt, the tools offered, the turn), many agents talking to one
// server at once each get their own replies, whatever order their requests
// arrive in. A request that no rule matches is rejected with 400
// invalid_request_error whose message names the script and quotes the turn,
// first and last user message, so the missing rule is obvious; the client
// does not retry it. Parse errors name the file and line and say what to
// change. testdata/demo.yaml is a complete example.
//
// # A model's pace
//
// By default every event of a reply goes out at once. Config.FirstTokenDelay
// (the default of Reply.FirstTokenDelay) and Config.OutputTokensPerSecond
// stream at a model's pace instead: after the first-token delay each text,
// thinking and tool-input delta is released when its bytes are due, at
// four bytes a token, and what was written before a wait is flushed, so a
// tool_use block's content_block_stop reaches the client as soon as its
// input has streamed (pace.go). The OpenAI protocols' content and argument
// chunks are paced the same way; a complete response waits for the whole
// content's time. The waits go through Config.Sleep and the request's
// context: a client that leaves mid-stream ends them.
//
// # Replies decided later
//
// A policy may return a Reply whose Await decides the content later (the
// relay in llm/fakeapi/relay waits for a person's answer file). A Messages
// API stream begins at once with message_start, whose usage depends only
// on the request, and sends a ping every Config.AwaitPing so the client's
// idle watchdog does not abandon it; the awaited reply then streams as any
// other, and one that is an HTTP fault ends the begun stream with an error
// event of its type. Other responses wait for Await before they begin.
//
// # Concurrency
//
// A Server serves any number of concurrent streams; no lock is held while a
// response streams or a policy runs. Close cancels the context of every
// in-flight request (Request.Context), so slow first tokens and blocked
// policies end, then waits for every handler.
package fakeapi
