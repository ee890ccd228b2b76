// Package team is the data layer of a Cohort team: the team file
// $COHORT_HOME/teams/{team}/config.json and the member list inside it, and
// where the team's mailboxes (package mailbox) and shared task list
// (package tasklist, under tasks/) live. Spawning teammates, backends and
// message routing live in package teammate, which builds on Store.
//
// # Layout
//
//	$COHORT_HOME/teams/{team}/
//	    config.json      the team file (Claude Code's fields, camelCase)
//	    config.lock      flock(2) sidecar serialising read-modify-write of config.json
//	    lead.lock        the lead lock: held by the process leading the team (see below)
//	    inboxes/         the team's mailbox directory (package mailbox); absent on NATS
//	    keys/{member}.key  members' signing keys, for a team on NATS (jetstream.go)
//	    keys/{member}.grant  the newest lead-signed entry of a member's key accepted here (memberkey.go)
//	    keys/team-lead.pub  on a worker: the lead's key, pinned from the signed spawn
//	    keys/tasks.json  the newest signed version of each task accepted here (tasksign.go)
//	                     (keys/ is StoreConfig.KeysRoot/{team} when set: Cohort's sessions
//	                     use $COHORT_HOME/remote/teams/{team}, which the sandbox hides, so a
//	                     model's command cannot read the lead's or a member's private key)
//	    status/{member}.json  members' statuses (package teammate); on NATS a bucket instead
//	    tasks/
//	        {id}.json    one file per task
//	        .lock        flock(2) sidecar serialising every task-list mutation
//	        .highwatermark  the highest task id ever allocated
//	        .generation  a counter bumped by every task-list mutation
//
// # Decisions the spec leaves open
//
//   - Writes go to a temporary file in the same directory, which is fsynced,
//     renamed over the target, and followed by an fsync of the directory, so
//     a reader sees the old file or the new one, never a mix, and a crash
//     loses at most the write in progress. Load reads the team file
//     without a lock; every read-modify-write happens under it.
//   - Lock waits poll flock(LOCK_NB) with a short jittered back-off, because
//     a blocking flock cannot be cancelled. Every wait ends with its context
//     or StoreConfig.LockTimeout, whichever is first. After taking a lock the
//     waiter checks that the lock file is still the one at its path (a team
//     deleted and re-created while it waited is reported as not found rather
//     than locked through a stale inode).
//   - A team file edited into invalid JSON is reported with the file, line
//     and column, and with what to do; nothing ever overwrites it. Fields
//     Cohort does not know are kept verbatim (at the top level, in members
//     and in allowed paths) and written back after Cohort's own fields, so
//     a file written by a newer Claude Code survives our rewrite. A member
//     without "isActive" is active, as Claude Code reads it.
//   - Times (createdAt, joinedAt, addedAt, and a task's createdAt/updatedAt)
//     are epoch milliseconds, as Claude Code writes them.
//   - isActive means the member is part of the running team: AddMember sets
//     it, the team layer clears it (SetActive) when the member shuts down or dies.
//     A new member may take the name of an inactive one; the old entry is
//     replaced. Names are compared case-insensitively, so two members never
//     share an inbox on a case-insensitive file system.
//   - Colors: the lead has none (it is the user's own session); teammates get
//     red, blue, green, yellow, purple, orange, pink, cyan in that order, the
//     next one after the color of the most recently added teammate, wrapping
//     after cyan. The order is therefore the order of joining, also when
//     several processes add members at once (they serialise on the lock).
//   - RemoveMember edits the team file only; the member's inbox stays, so no
//     message sent to it is lost and a member re-added under the same name
//     reads them. Delete removes the whole directory; shutting members down
//     first is the caller's job (ActiveMembers lists them).
//   - A team whose file names a NATS server ("nats", a Cohort field) keeps
//     every member's mailbox on that server's JetStream (package
//     mailbox/jsmail) for every process that opens it through a Store:
//     Store.Mailbox reads the file each time, so no process can be on files
//     while another is on NATS. A server that cannot be reached when the
//     team is made or a mailbox is opened is an error naming the server, the
//     team file and what to do; there is no fallback to files. A Store keeps
//     one connection per such team until Close.
//   - On NATS every message is signed by its sender's key: one ed25519 key
//     per member in keys/ (the remote agents' key format, package remote),
//     made by the first process that sends as that member. Only the team
//     file's members get keys or are trusted, so a name outside the team
//     can neither send nor pass a check. Members on machines that do not
//     share the team directory are checked with the key their lead signed
//     for them (KeyGrant, with a generation; memberkey.go has the
//     decisions): a key written in the team's bucket by anyone else, or
//     an older grant put back, is refused and reported. Every machine
//     watches the grant entries in order, so a respawn is known before an
//     earlier grant put back is read (grantwatch.go).
//   - On NATS what in the team file grants permissions counts only as the
//     lead signed it (its terms, terms.go). A teammate spawn carries the
//     (Created, Seq) of the terms it was issued under (SpawnTerms,
//     PinTerms): a worker accepts none below them, so terms the lead's key
//     signed for an earlier team of the same name, or this team's revoked
//     ones, written in the bucket before it joined, are refused and
//     reported, not taken as its first (keyattack7); they would also
//     have backdated the team's creation time.
//   - On NATS each task of the list is signed by the machine that wrote
//     it (tasksign.go) and each status by its member or the lead
//     (status.go): a forged, misattributed or put-back one is reported
//     and passed over.
//   - On NATS a status is current, and a heartbeat fresh, by what a
//     writer of the bucket cannot carry along when it hides, replays or
//     covers an entry (kvboard.go): the server's own sequence and time of
//     each entry, read from a watch of the key's history (then the JSON
//     API's entries after the last one read), and each signer
//     key's own stamps. An entry stamped no later than an entry of the
//     same key stored before the current status was written before it
//     (an old status put back); otherwise the entry stored last is
//     current, so the lead's marks and the member's own statuses are in
//     one order and a respawn's new key on a machine whose clock is
//     behind is not refused. A heartbeat's age runs from its write time
//     (bounded by when its original, or a later beat, was stored, and
//     after an erasure by its stamp) to the server's time read after the
//     entries, so one put back is as old as when it was written. The bucket keeps StatusHistory entries per member: junk or
//     a delete over a live member's beat does not hide it, and a fresh
//     reader (a machine spawned later, a resumed lead, a team made again
//     under the same name and lead key) reads the entries as they were
//     stored. A put with a rollup header (Nats-Rollup: the server drops
//     the key's earlier entries and leaves no marker) counts as a purge
//     under its own entry, read from its stored headers on the first
//     read as on later ones, and is reported (keyattack7). A status above erased history (a purge, junk) whose key a
//     reader never saw is dated no later than its own stamp; a lead's
//     status stamped before the team was made is an earlier team's and
//     refused; an entry stamped after the server stored it (a fast clock,
//     later stepped back) is no evidence of order; the bucket's stream
//     made again, or set back to fewer entries per key, is found at the
//     next read, reported, and (the shape) put back; the beats covered
//     before that read were heard as published (an open board subscribes
//     to the bucket's subjects: kvheard.go). Not covered: beats published
//     while no board was open (or dropped by one flooded: reported) and
//     covered in a bucket set back to one entry per key before the
//     reader's next read; a stream-level purge (no marker) before a fresh
//     reader's first read (kvboard.go lists the limits).
//   - On NATS the team file and the task list are the server's too: one
//     key-value bucket per team (StateBucket: key "config", the file's
//     JSON; key "tasks", package tasklist's KV list). Every Update is a
//     compare-and-set of "config" (retried from a fresh read when another
//     machine wrote first), so members, isActive and teamAllowedPaths are
//     the same everywhere; config.json here is the copy written after each
//     update, and what tells this machine where the server is. A read asks
//     the server each time. Create puts a new file there and empties the
//     list (a team made anew starts clean); Join makes a team led
//     elsewhere known on this machine from the server's copy. A team file
//     on the server that does not parse is reported with its bucket, key
//     and revision, and nothing overwrites it. Delete removes this
//     machine's directory only: the server's state is the team's, not one
//     machine's. StoreConfig.Replicas sets the replica count of the
//     team's streams and buckets (3 on a three-node cluster).
//   - A team directory without config.json (a Create that crashed) is not
//     listed by List and not loadable, blocks a new Create of that name, and
//     is removed by Delete; ListAll lists it and Claim takes it over.
//
// # Who leads: orphaned teams
//
// A team outlives the session that made it (its task list and mailboxes
// are files), and the isActive flags in its file say what was true when
// they were last written, not whether anyone still runs. So the process
// leading a team holds a lease on lead.lock (package internal/lease: a
// flock, which the kernel drops when the process ends however it ends,
// SIGKILL included) recording its session, pid and host. LeadStatus probes
// it: held means Led, anything else Orphaned.
//
//   - Claim is how a lead gets a team: a free name is created with the lock
//     taken before config.json exists (the team is never visible unled while
//     its creator runs); an orphaned team is taken over — kept as it was
//     when the same session led it (a resumed session) and replaced by a
//     new, empty team otherwise, since another session's stale members,
//     tasks and messages would only mislead; a led team is refused with
//     ErrLed naming the session that leads it.
//   - Replacing happens in place under the lock (config.json removed
//     first, then everything but the two lock files): deleting the
//     directory would leave the new lead holding a lock on an unlinked
//     file.
//   - DeleteOrphaned holds the lead lock while it deletes, so no session
//     takes over a team half deleted. Create (used by tests and tools that
//     only edit files) takes no lead: such a team is orphaned at once.
//   - A team made by an older Cohort has no lead.lock and counts as
//     orphaned.
package team
