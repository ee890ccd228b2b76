// Package mailbox is the durable message transport between the agents of a
// team: one append-only JSONL inbox per agent, written by any number of
// processes and consumed by exactly one reader.
//
// # Layout
//
// A mailbox directory (normally $COHORT_HOME/teams/{team}/inboxes/) holds, per
// registered agent:
//
//	{agent}.jsonl        the inbox, one JSON message a line
//	{agent}.lock         flock(2) sidecar serialising appends and compaction
//	{agent}.cursor       the reader's durable position (written atomically)
//	{agent}.reader.lock  flock(2) sidecar held by the one live Reader
//
// Lock files are never deleted, so every process always locks the same
// inode; the inbox itself is replaced only by compaction, which is why a
// writer opens it only after taking the lock.
//
// # Decisions the spec leaves open
//
//   - Durability: appends are not fsynced by default. An acknowledged append
//     has completed write(2), so the bytes are in the page cache and survive a
//     SIGKILL of any process, which is the failure the design must tolerate;
//     surviving power loss costs an fsync per message (Config.Sync). Cursor
//     and compaction writes are always fsynced, because a reader that replays
//     or skips after a crash is worse than a slow one.
//   - Lock waits poll flock(LOCK_NB) with a jittered exponential back-off
//     (20 µs up to 2 ms) instead of a blocking flock. A blocked flock cannot
//     be cancelled, so one stopped process (Ctrl-Z in a tmux pane) holding
//     the lock would hang every sender; polling keeps every wait bounded by
//     its context, and Config.LockTimeout (10 s) bounds waits whose context
//     has no deadline. The price is CPU under heavy contention: with 32
//     processes appending flat out, most of the cost is retries.
//   - Ids are 128 bits: a 48-bit millisecond timestamp followed by 80 random
//     bits, as 32 lower-case hex digits, so they sort by creation time and are
//     unique across processes without coordination. A caller may supply its
//     own id to make a re-send idempotent: the reader drops repeats.
//   - Acknowledgement is per message id. The durable cursor is the byte offset
//     of the longest fully acknowledged prefix of the inbox; ids acknowledged
//     out of order beyond it, and a window of recently acknowledged ids
//     (Config.DedupeWindow), are stored in the cursor too. A restarted Reader
//     therefore redelivers exactly the unacknowledged messages, once.
//   - States: a message is pending until a Reader returns it, processing
//     until it is acknowledged, then processed (Reader.State). Processing
//     falls back to pending when the reader dies before acknowledging.
//   - Only the Reader compacts, from Ack, once the acknowledged prefix passes
//     Config.CompactBytes; it does so only if the append lock is free at that
//     moment (and waits for it only past four times the threshold), so the
//     consumer is not held up behind writers. Under the append lock it copies
//     the unconsumed tail to a temporary file, records the new file's
//     identity (device and inode) in the cursor together with the old
//     identity and offset, and renames the copy over the inbox. A reader that
//     restarts after a crash between those steps finds the old inode in the
//     cursor's "prev" entry and resumes at the old offset; a file identity it
//     does not recognise is reported and re-read from the start, with ids
//     deduplicated. Writers cannot lose a message to compaction because they
//     open the inbox only after taking the lock.
//   - Agent names are checked against ^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$ before
//     any path is built, and inbox and lock files are opened with O_NOFOLLOW,
//     so neither a name nor a planted symlink can point a write elsewhere.
//   - Bad lines never stop delivery. A corrupt or oversized line, or one
//     addressed to another agent, is skipped and reported through
//     Config.OnProblem with file and line number. A final line without its
//     newline is treated as in progress and left unconsumed; the next append
//     terminates it first (so it becomes a corrupt line, reported once).
//   - Watching uses fsnotify on the directory, filtered to the inbox file,
//     and always keeps a stat poll (Config.PollInterval, 250 ms) as a safety
//     net for filesystems where inotify misses writes.
//   - Messages from this package are agent-originated (Origin): Render wraps
//     them in a <teammate-message> element with escaped attributes and a
//     neutralised body, so text from another agent can neither close the
//     element nor pose as the user.
//
// Transport and Inbox are what the teammate loop, the lead and the team
// store use; Dir is the file implementation, and package mailbox/jsmail the
// NATS JetStream one for teams across machines. Transport.Pending is part of
// the interface (the lead's "anything in flight?" needs it from any
// process), and Dir.Pending takes a context for it.
package mailbox
