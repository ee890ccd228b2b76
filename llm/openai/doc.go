// Package openai is the provider for OpenAI-compatible servers: it
// implements llm.Model on top of the official Go SDK
// (github.com/openai/openai-go/v3), over the chat completions protocol that
// vLLM, llama.cpp's server, Ollama, LM Studio and the gateways offer, or
// over OpenAI's Responses protocol (Config.API), streaming every response.
//
// It is built like llm/claude, whose retry policy and watchdog it shares
// (llm/internal/retry): the SDK is the HTTP client (base URL, bearer
// credentials, middleware) and frames the server-sent events
// (packages/ssestream); this package writes the request body and reads the
// event payloads itself.
//
// Design decisions the spec and the issue leave open:
//
//   - Request bodies are written by hand (llm/internal/jsonenc), members in
//     a fixed order, strings escaped as encoding/json escapes them, tool
//     schemas as the caller's JSON compacted. The same request gives the
//     same bytes (testdata/*.golden), and a conversation's earlier turns
//     are the same bytes on every later request, so a server that caches
//     prompt prefixes (vLLM, llama.cpp, OpenAI) reuses its cache across
//     turns and across forks, which share their parent's history.
//   - An assistant turn goes back as the server sent it: its text blocks
//     joined into one content string (the protocol has one), its tool
//     calls' arguments as the exact text the model wrote. Re-encoding
//     them (compacting, escaping) would change the rendered prompt and
//     lose the server's cache from that turn on.
//   - Thinking: reasoning_content (vLLM, DeepSeek, llama.cpp) and reasoning
//     (Ollama, OpenRouter) deltas become a thinking block. Thinking is not
//     sent back in chat requests: the chat templates of open reasoning
//     models drop earlier turns' reasoning anyway, and DeepSeek's API
//     refuses it. With the Responses protocol, reasoning items come back as
//     thinking blocks whose ID is the item's id and Signature its
//     encrypted_content, and are sent back as they came (requests ask for
//     reasoning.encrypted_content and store nothing on the server).
//     llm.Request.Effort maps to reasoning_effort (reasoning.effort), max to
//     xhigh; a Thinking budget has no equivalent and only makes a
//     Responses request ask for a reasoning summary.
//   - Cache markers (llm.Block.Cache, llm.ToolDef.Cache) are dropped: these
//     servers cache prefixes without them. Usage maps cached prompt tokens
//     (prompt_tokens_details.cached_tokens, DeepSeek's
//     prompt_cache_hit_tokens, input_tokens_details.cached_tokens) to
//     CacheReadInputTokens and the rest of the prompt to InputTokens; cache
//     writes are not reported by these protocols and stay zero. A server
//     that reports no usage (it ignores stream_options.include_usage)
//     gives zero usage. Prices come from the caller's price table: a model
//     it does not list (every local model, unless configured) costs
//     nothing.
//   - MaxTokens goes out as max_completion_tokens to OpenAI's own API and
//     not at all to other servers, which bound an answer by the context
//     left (Config.MaxTokensParam changes it). A response to a request that
//     carried no bound is cut off by the client once it has streamed twice
//     the bound (four bytes a token) and ends with max_tokens, as the
//     server would have ended it: a server with no bound of its own
//     (llama.cpp with context shift) would otherwise stream forever. Stop sequences go out as
//     stop (the Responses protocol has none and drops them).
//   - The system prompt is one system message (one instructions string),
//     its blocks joined by blank lines: most local chat templates accept a
//     single system message, first. A tool result is a tool message; an
//     error result's text is wrapped in <tool_use_error> tags (as Claude
//     Code renders tool errors), since the protocol has no error flag;
//     images in a tool result go in a user message after it.
//   - Tolerated in chat streams: a tool call whole in one chunk; parallel
//     calls interleaved by index, or without an index (named by id, or
//     continuing the last call); finish_reason "stop" after tool calls
//     (tool calls mean tool_use unless the answer ran out of tokens); no
//     finish_reason at all; the usage on any chunk, in a last chunk with
//     empty, null or no choices, or nowhere; no [DONE] after a
//     finish_reason (the end of the body is the end); text and arguments
//     cut inside a UTF-8 sequence or between escaped surrogate halves (the
//     pieces are decoded together, never turned into U+FFFD); arguments sent
//     as a JSON object rather than a string; a tool call without an id
//     (one is made up).
//   - A response counts only once it is complete: [DONE] (chat) or
//     response.completed / response.incomplete (Responses), or, in chat,
//     a finish_reason followed by the end of the body. A stream cut before
//     that, a dropped connection, a stall (no event for Config.IdleTimeout;
//     SSE comments do not count, so a server that only sends keep-alives
//     times out) and a server error inside the stream abandon the partial
//     response, emit llm.EventRetry, and send the whole request again: no
//     tool runs twice, because tools run only after EventDone. After a
//     finish_reason the wait for the end is cut to five seconds: a server
//     that hangs there has delivered its answer.
//   - Errors come in several shapes (OpenAI's {"error": {...}}, vLLM's
//     top-level error object, llama.cpp's numeric code, a proxy's HTML
//     page); the message is the server's, or the status and the start of
//     the body. A 200 answer that is the JSON of an error instead of a
//     stream is classified like that error (a server_error is retried); a
//     200 answer that is neither a stream nor an error (HTML from a captive
//     portal) is a protocol error and is not retried, nor is a stream whose
//     events are not JSON.
//   - Tool arguments that are not a JSON object are not an error of the
//     stream: the model wrote them. The tool_use input is then those
//     arguments as a JSON string, which the engine refuses to run (its
//     input validation wants an object) and answers with an is_error
//     result the model reads and can correct; the arguments go back to the
//     server as the text they were.
//   - OpenAI has no 529: an overloaded server answers 503, which is
//     retried like every 5xx, for background agents too. A 429 for an
//     exhausted quota (insufficient_quota) is not retried.
//   - The client is built from Config alone: the SDK's own reading of
//     OPENAI_* from the process environment is bypassed, because the
//     caller resolves credentials (ConfigFromEnv takes an injected getenv).
//     A server other than api.openai.com may need no key.
package openai
