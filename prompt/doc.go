// Package prompt renders what an agent is told before the conversation: the
// system prompt (with its priority chain), environment details, the git
// snapshot, and the memory files that form the user context.
//
// Everything here is computed once, when an agent starts, and then frozen:
// the rendered bytes are part of the cached prompt prefix, so nothing that
// changes from turn to turn (the time, a directory listing) may appear in
// them. The date is included as a day, frozen at session start; resumed
// sessions reuse the recorded bytes (see package transcript).
//
// Layout of a request's prefix, in cache order:
//
//	tools | system[0] = the effective prompt | system[1] = environment + git
//	snapshot | first user message: <system-reminder> with memory files, then
//	the user's text
//
// Memory files sit in the first user message rather than the system prompt
// (as in Claude Code), so an agent type that skips them (read-only built-ins
// under slim_subagent_memory) still shares the system prefix bytes with its
// siblings.
package prompt
