// Package ownread opens the files Cohort reads on its own into a prompt —
// memory files (COHORT.md, CLAUDE.md, AGENTS.md) and memory indexes
// (MEMORY.md) — so that a file planted in a repository or a memory
// directory cannot put what the user hid, or Cohort's own process state,
// into a request.
//
// Nobody approves these reads, and a hostile repository can commit a
// memory file that is a symbolic link (AGENTS.md → secrets/key, COHORT.md
// → /proc/self/environ). So a file is opened first and what was opened is
// judged, never a path checked and then opened by name:
//
//   - Within a root (the project for its memory files, the memory
//     directory for its index) the name is opened through os.Root: a link
//     is followed only while it stays inside the root.
//   - Without a root (the user's own memory files in $COHORT_HOME and
//     ~/.claude, which the user links from a dotfiles repository) links
//     are followed anywhere but the kernel's pseudo file systems.
//   - What was opened must be a regular file (opened with O_NONBLOCK, so
//     a FIFO cannot block a session's start), its real path (the kernel's,
//     from /proc/self/fd) must not lie under /proc, /dev or /sys, and
//     neither that path nor the name may be covered by a Read deny rule.
//
// Two more kinds of file are read with the same judge of what was opened
// (not the name): configuration Cohort obeys (Config: settings, .mcp.json,
// agent definitions, the trust registry's digests), followed through
// links anywhere but into /proc, /dev and /sys and at most MaxConfig bytes,
// so a sparse file of gigabytes planted as .mcp.json cannot exhaust the
// next session's memory; and instructions put into a prompt when the user
// or the model names them (Text: custom commands, skills, workflow
// scripts), judged against the Read deny rules too.
//
// And files of a repository's state that git writes, and so can a
// command in the sandbox (GitState: the index, HEAD, refs, packed-refs, a
// .git file, commondir, gitdir, alternates; bounds MaxGitRef,
// MaxGitPackedRefs, MaxGitIndex), and project files Cohort reads itself
// (Whole: Grep's Go backend, the sandbox's look at denied files): the
// same judge without deny rules, whole and bounded. A FIFO planted as
// .git/index hung the session's next checkpoint before these.
//
// Left as they are: files only Cohort writes in its private directories
// of $COHORT_HOME, which the sandbox hides from every command
// (checkpoints, transcripts, tasks, teams, mailboxes, the trust registry
// — internal/configtrust reads its own), and /proc files Cohort reads of
// processes by pid.
//
// A refused file is a *Refused error naming the file, why, and what to do;
// callers report it on stderr and leave the file out.
package ownread
