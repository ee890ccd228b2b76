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
//     complete message, so a cut stream never yields a half message.
package llm
