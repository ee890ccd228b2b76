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
//   - Parameters are built fresh from the llm.Request on every call, and every
//     byte slice the SDK marshals is copied first, so nothing set for one
//     request (a cache marker above all) can leak into another or into the
//     caller's history. Tool input schemas and tool_use inputs are sent as the
//     raw JSON the caller gave (compacted), never through a Go map, so the
//     bytes on the wire are deterministic and the schema is preserved exactly.
//   - The SDK's own retries are off (option.WithMaxRetries(0)); this package
//     owns the policy described on [Config]. A response counts only once
//     message_stop has arrived: a stream that ends before it, a dropped
//     connection, a stalled connection (no bytes for [Config.IdleTimeout]) and
//     an error event inside the stream all abandon the partial response,
//     emit llm.EventRetry, and send the whole request again.
//   - A malformed stream (an event whose JSON does not parse, content blocks out
//     of order, tool input that is not JSON, a 2xx answer that is not an event
//     stream) is a protocol error and is not retried: retrying would most
//     likely repeat it and hide the fault. The error says what was wrong.
//   - Errors that arrive inside a stream have HTTP status 200, so they are
//     classified by their error type, mapped to the status the API would use
//     for it (overloaded_error → 529, rate_limit_error → 429, …).
//   - The x-should-retry header can veto a retry ("false", which is how the API
//     marks a spend-limit 429 among others) but never adds one: the spec fixes
//     which statuses are retried and that list wins over "true".
//   - When both ANTHROPIC_API_KEY and ANTHROPIC_AUTH_TOKEN are set, the API key
//     is used, as the SDK does; the SDK refuses two credentials at once.
//   - Temperature is not a field of the SDK's MessageNewParams (v2.15.0); it is
//     set in the body with option.WithJSONSet, so it still reaches the API.
//   - A request with MaxTokens zero gets [DefaultMaxTokens].
package claude
