// Package jsmail holds a team's mailboxes on NATS JetStream: the
// mailbox.Transport for a team whose members run on more than one machine.
// The file mailbox (package mailbox's Dir) stays the default on one
// machine; the messages, their JSON and their ids are the same on both.
//
// # Layout
//
// For team T under prefix P (default "cohort"):
//
//	P.team.T.inbox.A      agent A's inbox: one message, its JSON line as the body
//	P.team.T.dead.A       what A's inbox refused or could not parse, kept
//	P.team.T.stored.A     the headers of each message once stored in A's inbox (a wake-up)
//	P_TEAM_T              the stream of both (limits retention, Config.MaxAge,
//	                      deleting and purging messages denied)
//	P_TEAM_T_INBOXES      key-value bucket: the registered inboxes
//	P_TEAM_T_READERS      key-value bucket with a TTL: the live readers' leases
//	P_TEAM_T_CURSORS      key-value bucket: each owner's cursor, for Pending
//	Config.StateDir/A.seen  on A's machine: the ids A acknowledged lately and
//	                      A's cursor in the stream
//
// # Decisions the spec leaves open
//
//   - Reading by the owner's cursor (issue 42). A message stays in the
//     stream until Config.MaxAge (30 days) after it was stored, whoever
//     reads or acknowledges it, and the stream denies deleting and
//     purging messages. The owner reads no consumer: it asks the server
//     for the next message on its inbox's subject from a stream sequence
//     (the stream's message get, next_by_subj), one after another, from
//     its own cursor, kept on its machine in its seen-id record (seen.go):
//     a floor below which every message of the inbox was taken, and the
//     sequences above it taken already (acknowledged, dead-lettered, or
//     dropped as a repeat). Ack writes the ids and the cursor, synced,
//     before it returns — what the acknowledgement to the server did
//     before. The reader is woken by the stream itself: it republishes
//     the headers of each message stored on an inbox to
//     P.team.T.stored.A (with the sequence, after storing, so a read
//     never races the store), and it reads from its cursor every
//     Config.CheckInterval anyway (a wake-up lost in a reconnect). So a
//     client that pulls from any consumer on an inbox subject and
//     acknowledges what it gets — the inbox's durable consumer of an
//     earlier version on a closed inbox, one beside the open inbox, its
//     last deliveries before a Close — takes nothing from the owner, and
//     there is no consumer of the owner's to delete, pause or change
//     (keyattack6, keyattack7). Deleting or purging messages the stream
//     refuses; a stream changed to allow it, or with a shorter MaxAge,
//     is refused by the inbox (it goes deaf, below). What it costs: a
//     member that does not take its mail within MaxAge loses it (the
//     server drops it unread); make it longer for members that may be
//     away longer. The stream keeps every message for MaxAge, read or
//     not (the disk it takes).
//   - Pending (messages stored and not yet taken by the owner) must be
//     known in any process, and the owner's cursor is on its machine.
//     So the owner puts its cursor in the team's cursor bucket after each
//     Ack ("FLOOR ABOVE CREATED": its floor, how many above it it took,
//     and the stream's creation time it counts in), and Pending counts
//     the subject's messages from the floor on (a short-lived consumer's
//     pending count, made and deleted by Pending) less those taken above
//     it. Counting the subject's messages less a count of the taken ones
//     kept elsewhere would not hold once MaxAge drops some. The key is
//     not signed: a client that writes it makes Pending wrong, which the
//     teammate loop only uses to fold or wake, and never takes a message
//     (the owner reads by its own record). A failed put leaves Pending
//     high until the next Ack.
//   - Migration: a team stream of an earlier version is a work queue,
//     a retention the server does not change. Open deletes it and makes
//     it anew when no inbox holds a message (its dead letters go,
//     reported); when one does, Open fails saying how many wait and what
//     to do (read them with the earlier version, or delete the stream).
//     A seen-id record of an earlier version has no cursor: the inbox
//     reads the new stream from its start.
//   - At-least-once with dedupe by id: Append publishes with the message
//     id as the Nats-Msg-Id, so the server drops a retry within its
//     duplicate window (Config.DuplicateWindow, 2 min). An Inbox drops an
//     id it is already handling, one acknowledged lately in memory
//     (Config.DedupeWindow ids), and one in its seen-id record, marking
//     the repeat taken. The seen-id record is the file mailbox's cursor's
//     list of recent ids: Ack writes the ids and the cursor to
//     Config.StateDir/AGENT.seen on the owner's machine (synced) before it
//     returns, so an id acknowledged is never handed over again, by this
//     Inbox or one opened anew on the same machine, whatever the server
//     forgot. A reader that dies before Ack gets the message again, as
//     the file mailbox's does (at-least-once).
//   - Acknowledgement comes after the message is taken: the teammate loop
//     acknowledges chat when its agent's conversation takes it, exactly as
//     it does with the file cursor.
//   - One live consumer per inbox, as the file mailbox's reader lock
//     gives: OpenInbox creates a lease key in P_TEAM_T_READERS (a second
//     consumer gets mailbox.ErrReaderBusy), renews it at a third of
//     Config.LeaseTTL (15 s), and deletes it on Close; a consumer that
//     dies without closing frees it when the TTL runs out. A lease found
//     gone (deleted by someone, or run out while no server answered) is
//     taken again and reported; one found held by another consumer, at a
//     renewal or before the consumer is made anew, fails the inbox
//     (below), so two readers never read one inbox for long. What a dead
//     reader held and did not acknowledge is read again at once by the
//     next, from the cursor.
//   - Registration is a key in P_TEAM_T_INBOXES. Append refuses an unregistered
//     recipient with mailbox.ErrUnknownRecipient, as Dir does; a
//     Transport remembers the registrations it has seen.
//   - Signatures: any NATS client that may publish on a team subject could
//     forge a message, so every message is signed by its sender with
//     ed25519 over a context string, the subject, the message's id, the
//     time it was signed and the body; the signature, the signer's name
//     and the time travel in headers (Cohort-Signature, Cohort-Key,
//     Cohort-Sent, with the id as Nats-Msg-Id), leaving the body the file
//     mailbox's line. The
//     signer must be the message's From, and its key must be in Keys. The
//     lead's answers — permission and plan approval responses, and
//     shutdown requests — are accepted only from Config.Lead (so only with
//     the lead's key); members' messages need their own key. The keys are
//     the remote agents' (package remote's LoadOrCreateKey and trust-file
//     line "name base64-public-key"), named by member. A key found is
//     kept; a message that does not verify with it is checked once more
//     with the key the KeySource answers now, which replaces it: a member
//     respawned on another machine signs with a new key (package team
//     has the lead sign each member's key, with a generation, so that
//     the answer cannot be a key someone else wrote or an older one), and
//     its old key is refused from then on.
//   - Replays: any client that listens on a team subject can keep a
//     signed message and publish it again, byte for byte (a lead's
//     shutdown_request, an old chat instruction). Two checks refuse it,
//     and neither rests on what the server remembers. First, freshness:
//     a message is accepted only if the server stored it within
//     Config.FreshWindow (50 s) of its signed send time, and only if its
//     Nats-Msg-Id header is its signed id; so a replay accepted must
//     carry the original's id and come within twice the window of it.
//     Second, the owner's own record: within that time the original's id
//     is in the seen-id record of the machine that took it (kept for the
//     duplicate window, over twice the freshness window, counted in the
//     server's storing times, so this machine's clock does not matter),
//     and the replay is dropped there, before the owner sees it — after a
//     restart of the owner, of the server, or a stream deleted and made
//     anew (which all wipe the server's duplicate record) alike. The
//     server's duplicate window stays a first filter, and an inbox still
//     refuses a stream whose window is not over twice the freshness
//     window (someone changed it). What it costs: a sender's clock more
//     than FreshWindow off the server's gets its messages refused
//     (reported, with both times, to check the clocks). What it does not
//     cover: an owner respawned on another machine has no record of what
//     the first took, so a replay within the 2 × 50 s after the
//     original, to a member moved to a new machine right then, after the
//     server forgot the id, would pass; and whoever can write the
//     owner's state directory can unmake its record.
//   - An open inbox keeps hearing or says it cannot. Every
//     Config.CheckInterval (5 s) it asks the server whether the stream is
//     the one it reads, as Open made it: its retention, subjects,
//     duplicate window, MaxAge (not shorter), no other limit, deleting
//     and purging denied, its republishing of wake-ups, and no transform,
//     rollup, seal, mirror or sources. A stream deleted is made anew as
//     Open makes it, reporting that what it held and the owner had not
//     taken is lost; one made anew by someone else is reported so, and
//     the cursor starts again at its beginning (the seen ids still refuse
//     a replay). A stream that exists but is not as it must be (a
//     duplicate window shortened, deletes allowed, a stream made anew by
//     someone with another shape), or one no server could be asked about
//     for Config.LeaseTTL while connected, makes the inbox fail: Read and
//     Receive return ErrDeaf with why, the lease is deleted at once so
//     the owner can be respawned, and the problem is reported through
//     Config.OnProblem and, when this process signs as the owner, by a
//     message from the owner to the lead. An inbox never renews its
//     lease while it has given up hearing.
//   - Nothing is dropped silently: a message whose body does not parse,
//     or that is addressed to another agent, is dead-lettered; one that is
//     unsigned, signed by an unknown or wrong key, or a protocol answer
//     not from the lead, is refused and dead-lettered too. Both are
//     reported through Config.OnProblem with the subject, and kept on
//     P.team.T.dead.A with headers naming the subject and the reason. If
//     the dead letter cannot be stored, the message is not taken: it is
//     tried again a second later, as is one whose sender's key could not
//     be read.
//   - Read returns what has arrived, without a round trip: messages are
//     read in the background as they are stored (up to 256 ahead), and
//     Receive wakes when one arrives.
package jsmail
