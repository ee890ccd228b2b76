// Package bridge carries messages between Cohort sessions on different
// machines over NATS: the bridge:<session> addresses of SendMessage. Every
// session whose settings name a NATS server (remote.nats) opens a Bridge:
// it lists itself in the server's session registry and subscribes to its
// own inbox subject; a message to bridge:<id or name> is signed by the
// sending session and checked by the receiving one, which hands it to its
// person for approval before its lead sees it, unless it is the person's
// own (a session of the same home that its person started).
//
// # Layout
//
// Under prefix P (default "cohort", the remote agents' prefix):
//
//	P.session.ID.inbox   session ID's inbox: one message a request, its JSON line as the body
//	P_SESSIONS           key-value bucket with a TTL: ID → the live session's entry
//	                     {id, name, host, publicKey, startedAt, incarnation}
//
// # Decisions the spec leaves open
//
//   - Delivery is a NATS request to the inbox subject, answered once the
//     receiving session has taken the message (held for its person): the
//     sender learns at once whether it arrived, as a uds: send does, and a
//     session that is not listening is "no responders", never a message
//     left for nobody. There is no JetStream stream behind it: a session
//     that is gone cannot take a message later anyway.
//   - The registry is how a name becomes an id and how a sender is known:
//     an entry lives Config.TTL (30 s), renewed at a third of it while the
//     session runs, deleted when it closes. A session that dies drops out
//     within the TTL. An unknown session is an error naming the sessions
//     the registry knows.
//   - Every message is signed with the sending session's ed25519 key (the
//     remote agents' lead key) over a context string, the subject and the
//     body; the signature and the sender's id travel in headers
//     (Cohort-Session, Cohort-Signature). The receiver checks it against
//     the public key in the sender's registry entry, and that the message's
//     From names that session. A message that does not parse, or whose
//     signature is missing, wrong or from a session the registry does not
//     know, is refused (the sender is told why) and reported through
//     Config.OnProblem with its subject; it never reaches the session.
//   - A signature proves which registered session sent a message, not
//     that its person may instruct this one: anyone who can write the
//     registry can register a session. So a bridged message is held for
//     the person's approval (the same hold-and-decide as a uds: message
//     from a session the person did not start; a session nobody can
//     approve in refuses it) unless it is the person's own. It is the
//     person's own when it carries a second signature (Cohort-Person,
//     over its own context string, the subject, the receiving Bridge's
//     incarnation and the body) that
//     verifies with this session's own key — the key of this
//     COHORT_HOME, remote/lead.key, which the registry cannot change and
//     the sandbox hides from every command — its timestamp is within
//     Config.OwnWindow (2 min) of now, and its id was not taken as own
//     before. A session signs it only when its person started it: no
//     session is among its process's ancestors (sessionorigin.Detect,
//     the rule a uds: message is judged by) and it is not a remote
//     job's. So the person's sessions of one home, on this machine or on
//     another that shares the home's key, talk as their uds: messages
//     do, and everything else waits for the person. What this rests on:
//     the key stays in the home (a model's commands cannot read it while
//     the sandbox is on; with it off, what a session says is only as
//     good as the user's trust in its model, as for sessionorigin), and
//     a captured message cannot be taken twice within the window or at
//     all after it (it is held instead).
//   - The ids taken as own are kept in memory, and a session resumed
//     under the same id opens a new Bridge, which has forgotten them. So
//     the person's signature also covers the receiver's incarnation: a
//     random value made at every Open and listed in its registry entry,
//     which the sender reads when it resolves the address. A message
//     captured on its way to one Bridge is the person's own to that one
//     only; replayed to the resumed session it is held. No state is kept
//     for it (nothing in the home to corrupt or delete). Anyone who can
//     write the registry can change a listed incarnation; the person's
//     messages then fail the check and are held: a delay for the person,
//     never a message obeyed unasked.
//   - Names are the sessions' names (a named background session's, or
//     none); an address matches an id exactly or a name in any case. Two
//     live sessions of one name are an error listing both.
package bridge
