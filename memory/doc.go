// Package memory is Cohort's project memory: a directory of Markdown files
// that agents keep across sessions, with MEMORY.md as its index.
//
// The project's memory lives in $COHORT_HOME/projects/{slug}/memory/, beside
// the project's transcripts ({slug} as for transcripts: the canonical repo
// root, so every worktree of a repository shares one memory). MEMORY.md
// holds one line per entry, "- [Title](file.md) — hook", pointing at topic
// files in the same directory. The lead is given the index (not the topic
// files) at session start and saves memories with its ordinary Write and
// Edit tools: package permission lets the file tools use a memory dir
// without asking in every mode but plan, and the Bash sandbox may write it.
// Package dream consolidates it in the background.
//
// Decisions the spec leaves open:
//
//   - The index is loaded within its limits: at most MaxIndexLines lines
//     and MaxIndexBytes bytes, cut at a line boundary, with a note saying
//     how much was left out and that the index should be pruned. The cut is
//     deterministic (the bytes are part of the cached prompt prefix).
//   - Prepare creates the directory and refuses one that resolves outside
//     its base ($COHORT_HOME for the project's memory and user-scoped agent
//     memory, the project root for project- and local-scoped agent memory):
//     a memory dir that is a symbolic link out of $COHORT_HOME would let
//     every write without asking land wherever the link points.
//   - Agent definitions with memory: user|project|local get their own
//     directory (AgentDir): user in $COHORT_HOME/agent-memory/{name}/,
//     project in {root}/.cohort/agent-memory/{name}/ (meant to be
//     committed), local in {root}/.cohort/agent-memory-local/{name}/ (meant
//     for .gitignore). Each works like the project's memory.
package memory
