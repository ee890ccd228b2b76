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
//	P_TEAM_T              the stream of both (work-queue retention)
//	P_TEAM_T_INBOXES      key-value bucket: the registered inboxes
//	P_TEAM_T_READERS      key-value bucket with a TTL: the live consumers' leases
//	inbox-A               A's durable pull consumer, filtered to its inbox
//	Config.StateDir/A.seen  on A's machine: the ids A acknowledged lately
//
// # Decisions the spec leaves open
//
//   - Work-queue retention: a message stays in the stream until its
//     consumer acknowledges it, then the server deletes it. So Pending is
//     the count on the agent's subject, callable from any process, and a
//     consumer made anew starts from exactly what was never acknowledged.
//   - At-least-once with dedupe by id: Append publishes with the message
//     id as the Nats-Msg-Id, so the server drops a retry within its
//     duplicate window (Config.DuplicateWindow, 2 min). An Inbox drops an
//     id it is already handling, one acknowledged lately in memory
//     (Config.DedupeWindow ids), and one in its seen-id record,
//     acknowledging the repeat. The seen-id record is the file mailbox's
//     cursor's list of recent ids: Ack writes the ids to
//     Config.StateDir/AGENT.seen on the owner's machine (synced) before
//     it acknowledges them to the server, so an id acknowledged is never
//     handed over again, by this Inbox or one opened anew on the same
//     machine, whatever the server forgot. A consumer that dies before
//     Ack gets the message again, as the file mailbox's does
//     (at-least-once); one that dies between the record and the server's
//     acknowledgement gets it again too, and drops it.
//   - Acknowledgement comes after the message is taken: the teammate loop
//     acknowledges chat when its agent's conversation takes it, exactly as
//     it does with the file cursor (this package only moves the ack to the
//     server). The last id of an Ack waits for the
//     server's confirmation (the others precede it on one connection), so
//     a restarted consumer never sees an acknowledged message.
//   - One live consumer per inbox, as the file mailbox's reader lock
//     gives: OpenInbox creates a lease key in P_TEAM_T_READERS (a second
//     consumer gets mailbox.ErrReaderBusy), renews it at a third of
//     Config.LeaseTTL (15 s), and deletes it on Close; a consumer that
//     dies without closing frees it when the TTL runs out. A lease found
//     gone (deleted by someone, or run out while no server answered) is
//     taken again and reported; one found held by another consumer, at a
//     renewal or before the consumer is made anew, fails the inbox
//     (below), so two consumers never read one inbox for long. Holding the
//     lease, OpenInbox deletes and recreates the durable consumer, so what
//     a dead consumer held is redelivered at once rather than after an
//     ack wait. The live consumer is never redelivered to (its ack wait
//     is an hour, and a redelivery of a message it holds is dropped).
//   - Registration is a key in P_TEAM_T_INBOXES, not the consumer: the
//     consumer is recreated on every open, and a sender must not see the
//     recipient unknown meanwhile. Append refuses an unregistered
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
//   - An open inbox keeps hearing or says it cannot. nats.go ends a
//     consumer's subscription when the consumer is deleted; the inbox
//     then makes it anew at once, as it does when the consumer's leader
//     changes or its heartbeats stop, and every Config.CheckInterval (5
//     s) it asks the server whether its consumer and the stream are the
//     ones it made, as it made them (the consumer's whole config as the
//     server gave it at the start, metadata aside: a pause, headers only,
//     a delivery cap, a rate or request limit, a backoff each count, and
//     its creation time; the stream's retention, subjects, duplicate
//     window, limits, and no transform, republish, rollup, seal, mirror
//     or sources). A consumer deleted, changed or made by someone else is
//     made anew and reported (nothing is lost: what it held
//     unacknowledged comes again; a message handed over without its body
//     by a consumer set to headers only is not dead-lettered but left
//     for the consumer made anew, which the bodiless delivery triggers at
//     once after asking the server); a stream deleted is made anew as Open makes it, reporting
//     that what it held unacknowledged is lost. A stream that exists but is not as it must
//     be (a duplicate window shortened, a stream made anew by someone
//     with another shape), or a consumer that cannot be made again within
//     Config.LeaseTTL of the server answering (the time a dead process
//     holds the lease; while no server answers at all the inbox waits, as
//     its lease runs out on its own), makes
//     the inbox fail: Read and Receive return ErrDeaf with why, the
//     lease is deleted at once so the owner can be respawned, and the
//     problem is reported through Config.OnProblem and, when this process
//     signs as the owner, by a message from the owner to the lead. An
//     inbox never renews its lease while it has given up hearing.
//   - Nothing is dropped silently: a message whose body does not parse,
//     or that is addressed to another agent, is dead-lettered; one that is
//     unsigned, signed by an unknown or wrong key, or a protocol answer
//     not from the lead, is refused and dead-lettered too. Both are
//     reported through Config.OnProblem with the subject, and kept on
//     P.team.T.dead.A with headers naming the subject and the reason. If
//     the dead letter cannot be stored, the message stays in the inbox to
//     be tried again.
//   - A message taken from the inbox by someone else is reported, not
//     prevented. Any client of the JetStream API may pull from a durable
//     pull consumer by its name; what it acknowledges the work queue
//     deletes, so the owner never gets it (keyattack6). The server
//     numbers every delivery of a consumer, redeliveries included, and
//     the inbox is its consumer's only reader, so a number it never sees
//     went elsewhere (gaps.go): a gap before a delivery is reported at
//     once, and deliveries the server had made by a check at least 5 s
//     old (CheckInterval) that never came — the thief took the last ones
//     — at that check. The report (Config.OnProblem) names the consumer
//     and the count, and the owner tells the lead by a message how many
//     deliveries it missed, so what a sender believes delivered can be
//     sent again. Not covered: which messages were taken (they are gone
//     from the stream); a message the thief pulled and did not
//     acknowledge comes to the owner only after the consumer's hour-long
//     ack wait or when the inbox is opened again (it is reported missing
//     meanwhile). Preventing it would need limits retention with the
//     owner's own record of what it took, so that a message acknowledged
//     by anyone could be read again by its stream sequence — a change of
//     the stream's shape, Pending and the replay checks not made here —
//     or NATS users that keep the JetStream API to cohort processes, as
//     the README advises.
//   - Read returns what has arrived, without a round trip: messages are
//     pulled in the background as they come (up to 256 ahead), and
//     Receive wakes when one does.
package jsmail
