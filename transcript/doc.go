// Package session persists conversations as JSONL transcripts and loads them
// back for --resume and --continue.
//
// A lead's transcript lives at $COHORT_HOME/projects/{slug}/{sessionId}.jsonl;
// each subagent writes a sidechain file beside it, under
// {sessionId}/subagents/agent-{agentId}.jsonl. One JSON entry per line, in the
// shape of Claude Code's transcripts (type, uuid, parentUuid, sessionId,
// timestamp, message).
//
// Design decisions the spec leaves open:
//
//   - The first entry of a transcript is a system/init entry that records the
//     rendered system prompt and the model. Resume reuses those bytes instead
//     of rendering the prompt again, so a session resumed on another day (the
//     prompt carries the date) still sends a byte-identical prefix and reads
//     the prompt cache.
//   - Compaction writes a system/compact_boundary entry and then the new
//     history (the summary message and the messages kept verbatim). Loading
//     starts after the last boundary, so a resumed session continues from the
//     compacted history.
//   - A rewind writes a compact_boundary entry too, followed by the
//     messages of an earlier place: the history after an earlier boundary,
//     cut at a message count (At). Places are found by reading the file up
//     to the boundary after theirs, so a place stays reachable after later
//     compactions and rewinds.
//   - A corrupt line is skipped and reported with its line number; a torn last
//     line (a crash mid-write) likewise. The history is then repaired so that
//     it is valid to send: a trailing assistant message whose tool calls were
//     never answered gets "interrupted" error results.
package transcript
