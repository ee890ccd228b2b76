package engine

import "github.com/cohort-dev/cohort/llm"

// The pre-send size check. Compaction used to be decided only from the last
// response's usage, so a turn that added a great deal at once — a thousand
// tool results, a burst of task notifications — went out far over the
// context window, which the API refuses ("prompt is too long"). Before every
// request the engine now estimates the request's size and compacts first
// when the estimate crosses the threshold.
//
// The estimate trusts the model where it can: the last response's usage
// counts everything up to and including that response exactly, so only
// what was appended since (the messages after the last assistant message)
// is estimated, at bytesPerToken. Without a response to build on (a first
// request, a resumed history, right after a compaction) the whole request
// is estimated: system prompt, tool definitions and messages. Images are
// counted at a flat imageTokens, not by the size of their base64 data.

// bytesPerToken is the estimate's exchange rate (the fake Messages API
// counts tokens the same way). Prose is about four bytes a token; code and
// JSON are denser, so the estimate errs low on them — only for what the last
// response's usage does not already cover.
const bytesPerToken = 4

// imageTokens is what an image is counted as: about what the API charges
// for one at the largest size it takes without scaling (1.15 megapixels).
const imageTokens = 1600

// blockOverhead is what each block adds to the estimate besides its
// contents, ids and names (its type and the JSON punctuation), in bytes.
const blockOverhead = 40

// nextRequestTokens estimates the input tokens of the next request.
func (a *Conversation) nextRequestTokens() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.lastSeen > 0 {
		since := len(a.history)
		for since > 0 && a.history[since-1].Role != llm.RoleAssistant {
			since--
		}
		return a.lastSeen + messagesTokens(a.history[since:])
	}
	return a.fixedTokensLocked() + messagesTokens(a.history)
}

// messagesTokens estimates the tokens of msgs.
func messagesTokens(msgs []llm.Message) int64 {
	var n int64
	for _, m := range msgs {
		n += blocksTokens(m.Content)
	}
	return n
}

// blocksTokens estimates the tokens of blocks, tool result contents
// included.
func blocksTokens(blocks []llm.Block) int64 {
	var bytes, images int64
	var walk func([]llm.Block)
	walk = func(bs []llm.Block) {
		for _, b := range bs {
			if b.Type == llm.BlockImage {
				images++
				continue
			}
			bytes += jsonLen(b.Text) + jsonLen(b.Thinking) + int64(len(b.Input)+len(b.Data)+len(b.ID)+len(b.ToolUseID)+len(b.Name)) + blockOverhead
			walk(b.Content)
		}
	}
	walk(blocks)
	return bytes/bytesPerToken + images*imageTokens
}

// jsonLen is the length of s as a JSON string's contents: quotes,
// backslashes and control characters take more bytes escaped. Tool results
// are often JSON or code, full of quotes and newlines, and the API counts
// what is sent.
func jsonLen(s string) int64 {
	n := int64(len(s))
	for i := 0; i < len(s); i++ {
		n += int64(jsonExtra[s[i]])
	}
	return n
}

// jsonExtra is how many bytes escaping adds to each byte value.
var jsonExtra = func() (t [256]uint8) {
	for c := range 0x20 {
		t[c] = 5 // \u00XX
	}
	for _, c := range []byte{'"', '\\', '\n', '\r', '\t', '\b', '\f'} {
		t[c] = 1
	}
	return t
}()
