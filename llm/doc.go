// Package llm holds the provider-neutral vocabulary every other package speaks:
// messages made of content blocks, tool definitions, a request, the streamed
// events of a response, and usage with its cache fields.
//
// Providers (llm/claude, llm/openai) translate these types to and from their
// wire formats; the engine builds requests from them. Nothing in this package
// performs I/O.
//
// Design decisions the spec leaves open:
//
//   - Cache breakpoints are explicit markers (Block.Cache, ToolDef.Cache) set by
//     whoever builds the request, rather than a provider-side policy, so that
//     callers with unusual shapes (forks) can place them where sharing pays.
//     Markers are never persisted: Block.Cache is excluded from JSON.
//   - A streamed response that is retried mid-way emits EventRetry; consumers
//     drop any partial content they were showing. Only EventDone carries a
//     complete message, so a cut stream never yields a half message; each
//     EventBlockStop carries its complete block, so a consumer can act on a
//     block before the message ends (and, by stopping the iteration at
//     EventRetry, keep what it acted on instead of a retried response).
//   - Agents of one session may use different providers. The runtime hands
//     every agent the same Model and names each agent's model in
//     Request.Model; a Router picks the provider from a "provider/model" id
//     ("openai/qwen3"), so an agent definition's model field is all it takes
//     to run an agent on another provider. Routed responses report their
//     model with the prefix, and PriceTable.Lookup falls back to the id
//     without it.
//   - A tool call whose arguments were not a JSON object (a model's output,
//     in the OpenAI protocols, which carry arguments as text) has those
//     arguments as a JSON string in Block.Input: valid JSON, so transcripts
//     keep it, but not an object, so the engine's input validation answers
//     it with an is_error result instead of running the tool.
package llm
