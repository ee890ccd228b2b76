// Package sessionsock carries messages to a running Cohort session over a
// Unix domain socket: the uds:<path> addresses of SendMessage. Every
// session listens on $COHORT_HOME/sessions/{sessionId}.sock (Path) and
// hands what arrives to its lead like a mailbox message; Send writes to
// such a socket and waits for the acknowledgement.
//
// # Protocol
//
// A connection carries newline-delimited JSON. The client writes messages
// in the mailbox line format (mailbox.Message: id, from, to, text,
// timestamp, color?, summary?, type?), plus priority? (now, next or later:
// Delivery, which the handler reads with DeliveryFrom; any other value is
// refused); the listener answers each, in
// order, with one line: {"ok":true,"id":"…"} once the handler accepted it,
// or {"ok":false,"id":"…","error":"…"}. A connection may carry any number
// of messages; Send uses one per message.
//
// # Decisions the spec leaves open
//
//   - Missing fields a receiver can supply are supplied: an empty to
//     becomes Config.Recipient (the lead, "team-lead"), a missing id or
//     timestamp is assigned. Everything else is checked with
//     mailbox.Message.Validate. So `printf '{"from":"ci","text":"build
//     broke"}\n' | nc -U <socket>` works, and a sender that does not know
//     the lead's name need not.
//   - A bad message (not JSON, failing validation, over
//     Config.MaxMessageBytes) gets an error reply and the connection stays
//     usable: an oversized line is read to its newline and dropped, which
//     keeps the framing. Blank lines are ignored. A connection is closed
//     when it idles past Config.IdleTimeout, on a write that cannot finish
//     in 10 s, when the peer ends mid-line, or at Close.
//   - Exactly-once handling per id: the listener remembers the ids it is
//     delivering and the last Config.DedupeWindow it delivered. A repeat
//     of a delivered id is acknowledged without calling the handler again;
//     a repeat that arrives while the first is still in the handler waits
//     for it; a failed delivery is forgotten so that a retry runs the
//     handler again. Senders may therefore retry with the same id after a
//     lost acknowledgement.
//   - Only our own user may talk to a session. The socket lives in a 0700
//     directory (created so, or tightened to it; a directory owned by
//     someone else is refused) and is chmod 0600 after bind, whatever the
//     umask. Beyond that the listener reads each peer's uid from the
//     kernel (SO_PEERCRED on Linux, LOCAL_PEERCRED on macOS and FreeBSD)
//     and refuses other users with an error reply before reading a byte;
//     where the platform cannot say, every peer is refused. Root gets no
//     exception. The handler finds the sender's uid and pid with PeerFrom. Send checks the listener's uid the same way, so a message
//     never goes to a socket another user planted.
//   - Ownership of a socket path is a flock(2) on {sessionId}.sock.lock
//     beside it, held for the Listener's life and gone with its process.
//     Listen refuses (ErrInUse) while another process holds it. With the
//     lock, a socket found at the path is probed: if something answers it
//     is left alone (ErrInUse), if nothing does it is stale and replaced;
//     a file there that is not a socket is an error, never removed. Close
//     removes the socket only if it is still the one it bound, and then the
//     lock file.
//   - A Unix socket path holds at most 107 bytes on Linux (103 on macOS).
//     Longer paths fail at once with an error that says so and suggests a
//     shorter COHORT_HOME; no workaround (such as binding through
//     /proc/self/fd) is attempted, since senders would need it too.
//   - Handler errors are returned to the sender as the error text; a
//     handler panic is recovered, logged with its stack and reported as a
//     failed delivery. Handlers run on the connection goroutines and must
//     respect their context, which Close cancels before it waits.
//
// Messages that arrive here come from other agents or programs of the same
// user; the lead must render them as agent-originated (mailbox.Render),
// never as the user.
package sessionsock
