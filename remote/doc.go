// Package remote runs agents on other machines: a lead submits agent jobs
// to a NATS JetStream work-queue stream, workers (cohort worker) pull and
// run them, and each job's result — final text, usage, and the agent's
// work as a patch against the job's base commit — comes back once.
//
// This file's siblings hold the parts that do not need NATS: the job and
// its strict decoding (job.go), its signature (sign.go) and its result's
// (resultsign.go), the worker's policy (policy.go), the code's way out and
// back as a git bundle and a format-patch (git.go), and the check a
// returned patch passes before the lead applies it (patch.go).
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
//   - Results are signed the same way, the other way round (resultsign.go):
//     each worker has its own ed25519 key ($COHORT_HOME/remote/worker.key,
//     named by its --name, default worker-HOST; it prints its key line
//     when it starts, and cohort worker key --worker prints it), and
//     signs every result — and every refusal of an unverified job — over
//     another context string and the result's JSON, which names the
//     worker, the job id, and quotes the lead's signature on the job's
//     envelope; the patch is inside what is signed. A lead takes a result
//     only if it is signed by a key in its trusted_workers file
//     ($COHORT_HOME/remote/trusted_workers, read again whenever it
//     changed — its identity, size, modification and status-change time,
//     checked at every look-up; the ctime because a writer can put an
//     mtime back and no one can put a ctime back — so a worker added is
//     trusted and one removed is no longer trusted without a restart; a
//     file that cannot be read after a change — removed, unreadable, over
//     1 MiB, half written — trusts no worker until it reads again, and
//     the refusal of each result says why: removing the file is how a
//     user stops trusting every worker at once, and keys are not kept on
//     the word of a file that no longer says them), names that
//     worker and the job, and
//     quotes the signature of the job this very lead process submitted: a
//     forgery, an altered patch, a result of an older job or of another
//     lead's job with the same id, or one renamed to another worker is
//     refused, reported (to the session's stderr as a warning naming the
//     job and why) and the lead goes on waiting for the real one. A lead
//     whose trusted_workers file is missing or empty fails each remote
//     spawn saying how to fill it. Not covered: a worker the lead trusts
//     can answer any job it can see, even one another worker took
//     (trusting a worker is trusting its results); the lead does not
//     learn from the server which worker a delivery went to.
//   - Trust files (a worker's trusted leads, a lead's trusted_workers) are
//     opened without blocking and must be regular files of at most 1 MiB:
//     a named pipe or a link to a device is an error naming the file, not
//     a start that hangs or reads without end.
//   - A job runs only from the lead's own publish (Worker.replayed): its
//     message must carry the lead's message id job-<id> (job-<id>.<n>
//     for its n-th submission again, "The queue" below), which the job
//     stream drops as a duplicate for 10 minutes, and the server must have
//     stored it within the worker's SubmitWindow (5 minutes; also the clock
//     skew allowed between a lead and the server) of the job's signed
//     issue time — the server's stored time, not the publisher's word. A
//     copy of a signed job published again, with or without that id, is
//     terminated unrun and without a result (its own result may be
//     stored; the lead's signature on the copy is genuine), however its
//     stored result fared: the "already run" check no longer rests on a
//     record anyone may purge. Not covered, under the premise that anyone
//     may use the JetStream API: whoever purges or deletes and re-creates
//     the job stream, or shrinks its duplicate window and puts it back
//     (keyattack6), resets its duplicate window and can replay a job
//     captured less than SubmitWindow ago: a job some worker claimed is
//     not run again by it or its Peers ("The queue": the claim), unless
//     the claim is deleted too, and then once per worker (a worker keeps
//     no record of its own across restarts); a job its lead cancelled
//     before any worker claimed it is refused while that lead is up
//     ("Cancellation" below); with NATS
//     users as the README advises, only leads may publish jobs and only
//     workers manage the streams.
//   - Wire compatibility: results from a worker older than this package
//     (unsigned) are refused by a lead, and an older lead cannot read a
//     signed result (it sees a payload that does not decode): upgrade the
//     leads and workers on one prefix together. Jobs are unchanged but
//     for a lead's submission again of a job never claimed (Job.Retry),
//     which an older worker refuses to decode.
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
//   - A job may be a teammate spawn (Job.Teammate, from a lead whose
//     teammates run "remote"): the worker, not a separate command, takes
//     it (cohort worker serves remote agents and teammates alike), so a
//     worker's trust file, policy, sandbox and git confinement apply to
//     both. It joins the team from the server the spawn names, pins the
//     lead's message key the signed spawn carries (so no one who may write
//     the team's bucket passes for the lead) and runs the member in the
//     job's clone until its lead shuts it down; then its work comes back
//     as any job's. The team tools (TeamTools) are added to its tools
//     whatever the policy says: they touch only the team's mailboxes and
//     task list. Its code is a Snapshot of the lead's working tree: HEAD
//     plus what is uncommitted, committed with a scratch index so no ref
//     or index of the lead's changes.
//
// # The queue (nats.go, client.go, worker.go)
//
// A Prefix (default "cohort"; one per tenant) names everything: jobs on
// PREFIX.jobs in the work-queue stream PREFIX_JOBS, results on
// PREFIX.results.<id> in PREFIX_RESULTS, cancellations on
// PREFIX.cancel.<id> in PREFIX_CANCELS, refusals of unverified jobs on
// PREFIX.refused.<id> (in PREFIX_RESULTS), progress on PREFIX.progress.<id>
// (core NATS), workers' claims of jobs in the key-value bucket
// PREFIX_CLAIMS, bundles in the object store PREFIX_BUNDLES. Whoever
// connects first makes them (file storage); all clients update them to
// the same shape.
//
//   - Exactly one result per job: a job is published with message id
//     job-<id> (a retried submit is not queued twice); a result with
//     result-<id>-<digest of its signed bytes> (a worker's retried publish
//     is stored once, and no forger can take the id first) into a stream
//     that keeps every message of a subject for Retention, and a worker
//     that is handed a job whose result it (or a worker in its own
//     trusted_workers file) signed is stored acknowledges it without
//     running it again. The lead takes the first result it sees that
//     passes its checks; it reads the stored ones oldest first, each
//     once per Wait (scanStored), and reports and skips the rest.
//   - No publish displaces a signed result, refusal or cancellation: the
//     stream used to keep one message per subject, so junk published on
//     PREFIX.results.<id> after the worker's result replaced it, and a
//     lead that was not listening at that moment never got it. Of the
//     ways to keep it, all messages per subject was chosen: per-worker
//     subjects can be written by anyone too (no ACLs), and first-write-
//     wins (DiscardNewPerSubject) lets a forger who publishes first keep
//     the worker's result out. The cost is that a reader reads every
//     message of the job's subject — a flood of junk is read once, since
//     a Wait remembers where it stopped, and in batches (scanStored: the
//     first message by a direct look-up, the rest through a short-lived
//     in-memory consumer, 512 a request, so 10,000 junk messages cost a
//     reader about as much as storing them cost the sender); the first
//     five refused are reported one by one, the rest as a count at each
//     poll — and what the stream holds is bounded by Retention and the
//     account's limits, not by the number of jobs. A worker reads the
//     results stream only for a job handed out before (a first delivery
//     cannot have a result).
//   - The shape is checked at every read, not only at connect
//     (setup.stream): a client that sets the results or cancellations
//     stream to keep fewer messages (per subject, in all, in bytes, for
//     a shorter time) or other subjects — a raw client, or a lead or
//     worker older than this, which sets one message per subject when it
//     connects — is reported (the lead's Report names the stream and the
//     change; a worker logs it) and the shape is put back at once. What
//     the server dropped meanwhile is gone from the stream; a lead keeps
//     in memory every result of its jobs it heard as it was published
//     (Client.hear, subscribed from Dial, not only while a Wait runs), so
//     a result stored and then displaced still reaches it. Not covered: a
//     lead that was not connected when the result was published and whose
//     stored copy was then dropped (or purged: anyone with the JetStream
//     API can purge) waits to its deadline, having been told the stream
//     changed. Wire: an older lead or worker and this one put the shape
//     back and forth (at its connect, at this one's reads), each time
//     reported: upgrade the leads and workers on one prefix together.
//   - A job is acknowledged only after its result is stored (a publish
//     the server confirmed); a worker that cannot store it leaves the job
//     unacknowledged, so it is redelivered and its stored-or-not state is
//     decided by the next delivery.
//   - Heartbeats are in-progress acks at a third of the ack wait (30s by
//     default); a worker that dies or hangs loses the job after the ack
//     wait to another one. A consumer hands a job out at most MaxDeliver
//     times (5); the delivery that reaches the limit and fails stores a
//     failed result, so a job that keeps killing workers ends.
//   - A refusal of a job whose signature did not verify (unsigned, an
//     untrusted key, altered) is not stored as the job's result: its id
//     is only the message's claim, and a forger who may publish jobs could
//     otherwise fail anyone's job by naming it. It is stored on
//     PREFIX.refused.<id>, signed by the worker, quoting the refused
//     envelope's signature and naming the sha256 of the exact message
//     refused (Result.Refused), and a lead accepts it only from a worker
//     it trusts, if that is the signature it made for the job and those
//     are the bytes it published. The quoted signature alone proves
//     nothing — it did not verify, and anyone may copy the lead's from
//     the wire onto an altered or relabelled payload with the job's id,
//     which a trusted worker would refuse quoting it — so the refusal is
//     bound to what was refused, not to what it carried. A worker makes
//     a refusal only for a message with the lead's message id job-<id>
//     (the job stream drops a second one for 10 minutes); any other
//     unverified message is terminated unanswered. Wire: a refusal from
//     a worker older than this (no digest) is reported and not taken —
//     the lead waits on; an older lead cannot decode a newer worker's
//     refusal (an unknown field) and reports it the same way.
//   - What is the job's fault ends it at once with a result, never
//     redelivered: a refusal (signature, trust, age, policy), a payload
//     that does not decode (the envelope's id still names it; an envelope
//     without even that is terminated, since no lead can be waiting for
//     it), a runner error (a missing model key). What is the worker's
//     fault gives the job back (a nak, or the worker shutting down):
//     fetching the code failed, the worker is stopping.
//   - A job counts as taken only through a claim signed by a worker
//     (claim.go): a consumer's ack proves nothing, since anyone with the
//     run of the JetStream API may pull a job from the workers' consumer
//     and ack it, and the job vanished (keyattack6). A worker handed a
//     job claims it before anything slow (after the replay and
//     stored-result checks, before the cancellation checks): the key of
//     the job's id in PREFIX_CLAIMS, by compare-and-set, holding a claim
//     it signs (its own context string) naming the job, its lineage, the
//     message's stream sequence and the delivery. It creates the key, or
//     replaces a value that is not a claim of this job by itself or one
//     of its Peers (junk, a forgery, an older job's with the id), or a
//     claim of an earlier delivery of this very message (its worker lost
//     it after the ack wait); a claim of another message of the job (a
//     copy, or the lead's submission again) or of this delivery by
//     another worker terminates this delivery unrun and unanswered. So a
//     job runs at most once across its copies on workers that trust each
//     other's keys, and across the lead's submissions again. The lead's
//     Wait, at each look-up, watches the key until a worker it trusts
//     has claimed the job, after which the job is that worker's as its
//     result would be: a job taken from the queue (delivered by the
//     workers' consumer, or gone from the job stream) and unclaimed for
//     ClaimWait (30 s) is reported and submitted again — the job as
//     first submitted, signed anew (a fresh issue time, which the replay
//     check needs) with Job.Retry: the attempt, published with message id
//     job-<id>.<n>, and the lead's signature on the first envelope, which
//     results, progress, claims and cancellations of every attempt quote
//     (the job's lineage: Cancel and the checks of results are
//     unchanged). A job taken maxAttempts (5) times unclaimed ends the
//     Wait with ErrUnclaimed. This was chosen over a limits-retention
//     job stream that denies deletes, claimed by the stream sequence: the
//     work queue, its acks and redeliveries stay as they were. Not
//     covered, under the premise: a thief who deletes the claim (or the
//     bucket) lets a copy or a submission again run a second time; a
//     worker that claimed a job and died after someone acked its
//     delivery for it leaves the job claimed and unrun (the lead waits to
//     its deadline); workers that do not list each other in
//     trusted_workers (Peers) take each other's claims for junk, so after
//     a theft or a slow claim a job may run on two of them; a refusal of
//     an unverified submission again is not stored (its message id is not
//     job-<id>). Wire: a worker older than this never claims, so a lead
//     submits each of its jobs again after ClaimWait (a submission it
//     cannot decode: a failed result quoting another signature, refused
//     by the lead) — upgrade leads and workers on one prefix together.
//   - A slot pulls one job only when it is idle: prefetched jobs would
//     wait in one worker's buffer with their ack wait running while
//     another worker is free.
//   - The lead follows its jobs with a subscription on every result and
//     refusal subject of the prefix from Dial on (it keeps only those of
//     jobs it submitted that pass its checks) and, since it may have been
//     away when the result was published (a
//     reconnect, a server restart), a direct look-up of the stored result
//     at the start and every PollInterval (2s), each with its own deadline:
//     a request sent while the server was down is never answered. Ordered
//     consumers were tried and did not recover reliably across a restart
//     of the server (scanStored's batch reader is a consumer made anew at
//     each read, removed after it).
//   - Progress is best effort (core NATS): a lead that misses an event
//     sees the next, which carries the totals. It is signed by the worker
//     as results are (progresssign.go: over its own context string, with
//     the lead's signature on the job's envelope), and a lead takes only
//     a trusted worker's event of the job it submitted: crew records the
//     task's usage and tool calls from progress, so an unsigned event (a
//     forged 10^12 tokens) is dropped and reported once per Wait. Signing
//     was chosen over taking usage only from the result, which would have
//     left the task's live figures forgeable. An event replayed within its
//     job carries totals no higher than the latest, which crew ignores.
//     An event names the worker that signed it (SealProgress sets it), and
//     a Wait takes events only from the job's runner (progressFrom): the
//     Wait asks who runs the job — a random nonce on PREFIX.ask.<id>, at
//     its start and again (at most every 250 ms) when it hears a
//     "running" it cannot place — and the worker running the job answers
//     with a signed "running" naming the job's delivery it runs and the
//     nonce. Only that answer, or later a "running" of a later delivery
//     (the job handed to another worker, which sends one as it starts and
//     at every heartbeat), makes a worker the runner: an earlier worker's
//     genuine "running", replayed from the wire, was signed before the
//     Wait asked and names an earlier delivery, so it takes the progress
//     from no one (keyattack5 P2); an answer to the Wait's own question
//     that names an earlier delivery than its runner's (the worker
//     answered before the job changed hands, or it is replayed) does not
//     either (keyattack6). Events before the answer are dropped
//     unsaid (a round trip). The delivery and nonce ride in the phase
//     string ("running (delivery 2, asked 5f…)"), not new fields, since
//     events are read strictly. Not covered: a trusted worker that claims
//     the job with events of its own is believed, as its signed result
//     would be; an attacker on core NATS who floods PREFIX.ask.<id> makes
//     the running worker sign an answer per message (one goroutine's
//     work). Wire: a worker older than this answers no question, so a
//     lead takes no progress from it (the result still carries the
//     usage); an older lead takes a newer worker's events (it shows the
//     phase as sent).
//   - Cancellation is stored, not only sent: a worker checks for it before
//     it starts a job, and a running job's worker is subscribed to it, so
//     TaskStop stops a job wherever it is. It is signed by the lead
//     (cancelsign.go: the job's id and the lead's signature on the job's
//     envelope, in the job's envelope style, over its own context string):
//     a worker stops a job only for its own lead's cancellation of that
//     very job, and logs and ignores any other (the job keeps running, so
//     a result saying "stopped by the lead" is the lead's doing). The
//     stream keeps every cancellation of a job, and a worker about to
//     start it reads them all for its lead's, so junk published after the
//     lead's does not bury it. A stored cancellation can be dropped all
//     the same by anyone with the run of the JetStream API (a purge of
//     its subject; one message per subject and junk, the shape put back
//     at once; DenyPurge would stop only the first), so Cancel also takes
//     a job still in the queue out of it: it deletes the job's message
//     from the job stream by the sequence Submit was given, and if the
//     workers' consumer never delivered that far, no worker can be handed
//     it and the lead settles the job itself (cancelled, "before it
//     started") — keyattack5 C7. A job already handed to a worker is left
//     to it (it heard the cancellation as it was published) and, deleted,
//     is not handed to another if that worker dies. The job's message can
//     come back all the same: a copy (anyone may read the job stream)
//     published again with the lead's own message id once the job
//     stream's duplicate window was shrunk and put back, or the stream
//     purged, passes the worker's replay check within SubmitWindow
//     (keyattack6); a worker's claim does not stop it either, since no
//     worker claimed the job before it was cancelled. So the lead's own memory has the last word: from its
//     Cancel until it closes, the lead listens on PREFIX.cancelled.<id>
//     and answers with its signed cancellation, and a worker about to
//     start a job asks there after it read the stored cancellations
//     (cancelask.go). No listener is the server's "no responders", at
//     once (a job not cancelled, an older lead, a lead gone); someone
//     else listening costs the worker leadAnswerWait (2 s) before it runs
//     the job, and nothing it answers but the lead's cancellation of that
//     very job counts. Not covered: a consumer deleted and made anew by
//     an attacker (its delivered sequence starts again) makes the lead
//     settle a job a worker is running, which that worker stops all the
//     same; a job cancelled by a lead that has closed since (a copy put
//     back after the lead's session ended runs, within SubmitWindow of
//     its issue, once per worker: the job stream's stated limit above).
//     Wire: a worker older than this never asks, and an older lead
//     never answers (no responders: the worker goes on at once).
//
// # On the lead and on the worker
//
// The lead (package crew, isolation "remote") dials at its first remote
// spawn, so a session starts whether or not NATS is up, and an
// unreachable server is that Agent call's error within ConnectTimeout
// (5s), naming the URL. The submission itself, the bundle's upload
// included, has a deadline too. A worker (cohort worker) runs each job as
// a cohort.Session (cohort.RemoteRunner) that reads only the worker's
// user settings — never the clone's project settings, whose hooks would
// run outside the sandbox — and starts no MCP servers from the clone.
package remote
