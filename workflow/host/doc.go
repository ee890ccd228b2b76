// Package host runs workflow scripts out of process. The script engine
// (package workflow, on goja) lives in a separate binary, cohort-workflow;
// this package is both ends of the line between it and Cohort, and it does
// not import goja, so cmd/cohort stays free of goja's reflection (which
// would turn off the linker's method dead-code elimination, see
// internal/arch).
//
// Design decisions:
//
//   - One host process per request. Cohort starts cohort-workflow, writes
//     one request (run, check or list) and reads until the host's "done";
//     a run's agent() calls arrive as "agent" messages that Cohort answers
//     with "answer", so every workflow agent is spawned by Cohort on its
//     one spawn path (sandbox, permissions, hooks, worktrees and cost
//     accounting apply) and the host only computes. Isolation also gives
//     a hard stop: a runaway script is a process that can be killed.
//
//   - The protocol is JSON lines on the host's stdin and stdout (Message;
//     its Type says which fields are set). Each side checks every line it
//     reads: a line that is not JSON, has an unknown type, lacks its
//     fields or answers a call nobody made ends the exchange with an error
//     naming the side and the line number. Nothing waits for a reply that
//     cannot come: the host exits on EOF of its stdin, and Cohort treats an
//     early EOF of the host's stdout as the host's death, quoting its
//     stderr.
//
//   - The host never outlives Cohort: it runs in its own process group
//     (internal/proc: close stdin → SIGTERM → SIGKILL, always reaped), gets
//     SIGKILL from the kernel when Cohort dies (Linux's parent-death
//     signal), and stops by itself when its stdin closes.
//
//   - Finding the binary: Config.Path, else cohort-workflow next to the
//     running executable (where `go install ./cmd/...` puts both), else on
//     PATH; when it is missing, the error names the go install command.
//
//   - The types that cross the line (AgentRequest, AgentResult, Event,
//     Meta, Result) are defined here and aliased by package workflow, so
//     there is one definition of each.
package host
