// Package remote runs agents on other machines: a lead submits agent jobs
// to a NATS JetStream work-queue stream, workers (cohort worker) pull and
// run them, and each job's result — final text, usage, and the agent's
// work as a patch against the job's base commit — comes back once.
//
// This file's siblings hold the parts that do not need NATS: the job and
// its strict decoding (job.go), its signature (sign.go), the worker's
// policy (policy.go), the code's way out and back as a git bundle and a
// format-patch (git.go), and the check a returned patch passes before the
// lead applies it (patch.go).
//
// Design decisions the spec leaves open:
//
//   - A job is decoded strictly: an unknown field is an error, not
//     ignored. A job cannot bring hooks or MCP servers (its Definition has
//     no such fields), since either would run code on the worker outside
//     the agent's sandboxed tools, and it cannot switch the sandbox off.
//   - Trust is a signature, not only the connection: every job travels in
//     an Envelope signed with the lead's ed25519 key (made on first use,
//     kept 0600 under $COHORT_HOME), over a fixed context string and the
//     job's JSON, which names the lead and when it was issued. A worker
//     opens only jobs signed by a key in its trust file, whose lead field
//     matches the key, issued within its MaxAge (a day), so a job
//     captured on the wire cannot be altered, relabelled or replayed much
//     later. Anything else is refused with the reason as the job's result
//     and never redelivered. NATS credentials (one user per lead) decide
//     who may publish at all; the signature decides what a worker runs.
//   - The code travels as a git bundle in the stream's object store,
//     named by its sha256 digest: the job carries the name (so the
//     signature covers the code), many jobs from one base commit share one
//     upload, and a repository far larger than a message's max_payload
//     still goes. The bundle is made from a scratch repository that
//     borrows the lead's objects, so the lead's refs are never touched.
//   - The worker's Policy caps every job: tools narrowed to the worker's
//     list, the permission mode to its ceiling (acceptEdits unless it
//     says otherwise; jobs run headless, so what would ask is denied),
//     turns and wall time to its limits, the sandbox always on, and a
//     job's allow rules kept only for tools the worker allows (its own
//     allow rules are added). What is capped is listed in the result, so
//     the lead's model reads why. What cannot be capped without changing
//     the job's meaning — a model the worker does not offer, only tools it
//     does not allow — refuses the job.
//   - The work comes back as git format-patch output against the base:
//     the agent's commits, then anything it left uncommitted as one more
//     commit. The lead checks the patch's paths with git's own parser
//     (git apply --numstat, run outside any repository so no path is
//     skipped) against permission.ProtectedPath — the rule local edits
//     follow — plus all of .cohort/, paths leaving the repository, and the
//     scripts the lead's hooks run, in either letter case. A patch that
//     touches any of them, or does not parse, is kept aside for the user
//     and not applied.
package remote
