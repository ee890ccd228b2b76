// Package attach is the control socket of a background session and its
// client: the terminal UI of `cohort attach` drives a running background
// session through it as it drives a session of its own process. Server
// runs in the background session ($COHORT_HOME/bg/{id}.ctl); Dial returns
// a Client, which has the methods of the UI's session.
//
// # Protocol
//
// Newline-delimited JSON both ways. The client sends calls, {"seq": n,
// "op": …, "text"?, "id"?, "decision"?}: run (a prompt), send (typed
// ahead), interrupt, mode, model, stop, background, message, compact,
// clear, and decide (the answer to a permission request). The server
// answers each call with {"type": "reply", "seq": n, "error"?}, and sends
// on its own: hello (the session's id, model and mode, first), event (a
// cohort.Event in its Go field names: the stream-json form has no
// decoder), permission (a request that waits, with its id), agents (the
// agent list, when it changes) and end (a run the client started is
// over).
//
// # Decisions the spec leaves open
//
//   - One client at a time: a second attach is refused while one is
//     attached. Detaching (the UI ends, the connection closes) leaves the
//     session running and its waiting permission requests waiting; they
//     are sent again to the next client.
//   - Permission requests that arrive with no one attached wait; they are
//     never approved on their own. Stopping the session refuses them.
//   - The UI sees the events of the runs it starts. Events of a run the
//     session was already doing when the client attached are not replayed;
//     the agent tree (pushed every 200 ms when it changes) and the waiting
//     prompts show what it does.
//   - Only our own user reaches the socket: it lives in the registry's
//     0700 directory and is made 0600.
//   - Hello is the first line a client reads: it is queued before the
//     agent list's pusher starts.
//
// # In the library
//
// The library lists, finds, stops and removes the sessions of this machine
// with package bgsession, and attaches to one with this package: Dial the
// session's control socket (bgsession.Registry.ControlPath) and the Client
// runs prompts, yields the session's cohort.Event values, answers its
// waiting permission requests and detaches on Close, leaving the session
// running. The client speaks package cohort's types, so this package sits
// above package cohort, beside the front ends (internal/arch lists it among
// cohort's clients); the session's side, Server, is what a background
// `cohort` process serves.
package attach
