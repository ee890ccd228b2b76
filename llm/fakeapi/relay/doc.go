// Package relay lets a person — or another agent — play the model: the fake
// Messages API (llm/fakeapi) hands each request to the player as files and
// streams the answer the player writes, with the fake's usual splitting,
// usage and cache accounting, so the client cannot tell it from a scripted
// reply. It is how prompt changes are tried by hand: the player reads
// exactly the system prompts, tool definitions, results and notifications
// the client sends, and answers as a model would.
//
//	rl, _ := relay.New(relay.Config{Dir: "/tmp/relay"})
//	srv := fakeapi.New(fakeapi.Config{Policy: rl.Policy})
//	defer rl.Close()
//	defer srv.Close()
//
// bench/cmd/fakeserve -relay DIR runs it in its own process; doc/relay.md
// in the repository is the player's guide.
//
// # Files
//
// Request N (numbered from 1 in arrival order, four digits: 0007) gets:
//
//   - 0007.request.md: the view. A header (the agent's label, the turn,
//     the model), then for a new agent its system prompt (or which agent's
//     it equals) and its tools (full definitions of those not shown before;
//     an array seen before is named, one that differs is described by what
//     differs), then the messages new since the agent's last answer: tool
//     results with the call they answer, notifications, teammate messages,
//     text the user typed. A later request of the same agent shows only
//     what is new, and its tools only if they changed.
//   - 0007.request.json: the request body as sent.
//   - 0007.status: the first line is the state — waiting, invalid (the
//     answer is malformed; the request still waits), answered, cancelled
//     (the client gave up) or timeout — then "answer-sha256 HEX" naming the
//     answer content the state is about, then the detail (the error to fix).
//   - 0007.answer.md: written by the player (see Answers).
//
// index.md lists every request with its agent, turn, state and what was
// new; pending lists the numbers still waiting, one a line, so several
// agents' requests can wait at once (a fan-out). New refuses a directory
// that holds another relay's files.
//
// # Answers
//
// An answer file is Markdown. Prose is a text block; a fenced block whose
// info string is "tool NAME" is a tool call whose input is the block's
// YAML or JSON; "thinking" is a thinking block; other fences stay in the
// text. Blocks stream in the order written.
//
//	I'll run the tests first.
//
//	```tool Bash
//	command: go test ./...
//	description: Run the tests
//	```
//
// A tool must be offered by the request and its input must have the
// schema's required fields (and no unknown ones, when the schema forbids
// them); "tool! NAME" sends the call unchecked, to see what the client does
// with a call it did not offer. A special block ends at a line of at least
// as many backticks as opened it: open with ```` to put ``` inside an
// input. A malformed answer is reported in the status file with the line
// and what to change; the request keeps waiting, and saving the fixed file
// is enough. Submit (fakeserve relay answer N FILE) writes an answer whole
// and waits for the verdict.
//
// The player writes only content. The stop reason (tool_use when the
// answer calls a tool, else end_turn), the usage and the cache accounting
// are the fake's, as for any reply; the answer streams at the fake's pace
// when it has one.
//
// # Conversations
//
// Requests carry no agent id, so the relay recognises conversations by
// their content. A conversation is keyed by its system prompt and first
// user message; a request continues one when its messages repeat what
// preceded the relay's last answer to it (cache markers aside), followed by
// an assistant message — the answer as the client kept it. The first
// conversation is "lead", the next "agent-2", "agent-3", … in order of
// appearance. A new conversation whose first message holds the prompt of a
// tool call the relay streamed (an Agent call) names that call; one whose
// history extends another's and whose new messages hold such a prompt is a
// fork of it; one whose first message holds another's last answer (a
// compaction summary) keeps that agent's label. Agents started with
// identical prompts at once are told apart because a conversation with a
// request waiting cannot send another. A request that returns to an
// earlier point of its conversation (an answer the client never received)
// is shown from there, and says so.
//
// A request waits until its answer is read (the directory is watched with
// fsnotify and each answer file is also read every Config.Poll), the client
// cancels it (its status says cancelled, and a line at the end of its view),
// Config.Timeout passes (the client
// gets overloaded_error and may retry) or the relay closes. While it
// waits, the fake's stream has begun and pings keep the client's idle
// watchdog quiet (fakeapi's Reply.Await).
package relay
