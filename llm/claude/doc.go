// Package claude is the Anthropic Messages API provider: it implements
// llm.Model on top of the official Go SDK (github.com/anthropics/anthropic-sdk-go/v2),
// streaming every response.
//
// The package only translates and retries. Where cache breakpoints go is the
// request builder's decision (llm.Block.Cache, llm.ToolDef.Cache); this
// package turns each marker into a cache_control on the matching parameter and
// refuses a request that carries more than four.
//
// Design decisions the spec leaves open:
//
//   - The SDK is the HTTP client — base URL, credentials, anthropic-version and
//     the other headers, middleware, *anthropic.Error for error statuses and
//     for error events in the stream, and the SSE framing (ssestream) — but
//     this package writes the request body and reads the event payloads
//     itself. The SDK's parameter types marshal through nested MarshalJSON
//     calls that cost about six times plain encoding and allocate eight times
//     the body; its event union and Message.Accumulate cost 11–14 µs an event.
//     Together they were about 85 % of a query-loop turn's CPU (BENCHMARKS.md).
//   - The body is the SDK's own bytes for the same request: members in the
//     order its MessageNewParams marshals them, strings escaped as
//     encoding/json escapes them (HTML characters included), "temperature"
//     and "stream" last, where option.WithJSONSet puts them. A test keeps the
//     old translation through the SDK's types as an oracle and compares the
//     two byte for byte, by table and by fuzzing. So prompt-cache prefixes
//     are what they were, and the body is deterministic: the same request
//     gives the same bytes. It is written fresh from the llm.Request on every
//     call and shares no memory with it, so a cache marker set for one
//     request cannot leak into another or into the caller's history.
//   - Tool input schemas and tool_use inputs are sent as the raw JSON the
//     caller gave (compacted), never through a Go map, so the schema is
//     preserved exactly. Compacted schemas are cached per Model, keyed by
//     their bytes (not by the caller's slice, which may change): an agent
//     sends the same tools on every request.
//   - Stream events are decoded with encoding/json into one small struct of
//     the members this package reads, and the message is accumulated here,
//     with the same checks the SDK's accumulator made (blocks in index
//     order, deltas for existing blocks of the matching kind), and one more:
//     nothing extends a block after its content_block_stop, whose
//     llm.EventBlockStop carries the complete block (the engine starts a
//     tool call from it before the message ends, so it must be final). A
//     fuzz test compares the result with the SDK's accumulation.
//   - Without Config.HTTPClient, Models share one transport that keeps up to
//     MaxIdleConnsPerHost idle connections per host (http.DefaultTransport
//     keeps 2): hundreds of agents streaming at once would otherwise dial
//     a new connection for most requests to an HTTP/1.1 endpoint.
//   - The SDK's own retries are off (option.WithMaxRetries(0)); this package
//     owns the policy described on [Config]. A response counts only once
//     message_stop has arrived: a stream that ends before it, a dropped
//     connection, a stalled connection (no bytes for [Config.IdleTimeout]) and
//     an error event inside the stream all abandon the partial response,
//     emit llm.EventRetry, and send the whole request again.
//   - Every retry is yielded as llm.EventRetry before its wait, carrying the
//     attempt about to start, MaxAttempts, the wait, the error, the base URL
//     and the HTTP status (0 when no answer came). A refused connection on a
//     request's first attempt is not retried while nothing has ever answered
//     at a base URL other than the Anthropic API's: that is a wrong URL or a
//     server not started, and ten attempts would be two minutes of silence.
//     Once the server has answered, a refused connection is a restart and
//     is retried. Config.MaxRetryTime (COHORT_API_RETRY_MAX) caps the time
//     one request spends retrying.
//   - A malformed stream (an event whose JSON does not parse, content blocks out
//     of order, tool input that is not JSON, a 2xx answer that is not an event
//     stream) is a protocol error and is not retried: retrying would most
//     likely repeat it and hide the fault. The error says what was wrong.
//   - Errors that arrive inside a stream have HTTP status 200, so they are
//     classified by their error type, mapped to the status the API would use
//     for it (overloaded_error → 529, rate_limit_error → 429, …).
//   - The x-should-retry header can veto a retry ("false", which is how the API
//     marks a spend-limit 429 among others) but never adds one: the retry
//     policy (llm/internal/retry) fixes which statuses are retried, and
//     that list wins over "true".
//   - When both ANTHROPIC_API_KEY and ANTHROPIC_AUTH_TOKEN are set, the API key
//     is used, as the SDK does; the SDK refuses two credentials at once.
//   - Temperature is not a field of the SDK's MessageNewParams (v2.15.0); the
//     body carries it where option.WithJSONSet would put it.
//   - A request with MaxTokens zero gets [DefaultMaxTokens].
//   - llm.ToolDef.WebSearch turns on the server-side web search
//     (web_search_20250305, with max_uses and allowed or blocked domains).
//     Its server_tool_use and web_search_tool_result blocks are read from
//     the stream (the result arrives whole in content_block_start) and sent
//     back unchanged, encrypted content included, when the conversation
//     continues. Other server tools' blocks are a protocol error.
package claude
