package engine

import (
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/transcript"
)

// Fitting the window. Compaction keeps the most recent messages verbatim,
// and sometimes they alone are too large: a lead that launched a thousand
// background agents in one message holds a thousand launch results in one
// user message, then a thousand notifications. The API refuses such a
// request outright ("prompt is too long"), and so would it refuse the
// summary request that carries it. So when a request would still be over
// the compaction threshold after compacting, the engine cuts the longest
// texts the model was given — tool results and the text blocks of user
// messages after the first — to one common length, just short enough for
// the request to fit, each with a note saying how much was cut. Everything
// else stays: the first message (the task, or the compaction summary), the
// assistant's own messages and tool calls, images, and the pairing of every
// tool_use with its result. The cut history is written to the transcript
// after a compaction boundary, so a resume continues from the same bytes.
//
// The summary request is fitted the same way (to the window less the
// summary's own budget) without changing the history it summarises.

// minCutBytes is the least a cut text keeps: below it a result says
// nothing, and the request stays too large rather than lose all detail.
const minCutBytes = 256

// cutNote ends a cut text; %d is the number of bytes cut.
const cutNote = "\n[… %d bytes cut here so that the conversation fits the context window …]"

// cutNoteRoom is the room a cut note takes, in bytes (the note itself with
// a number of up to ten digits).
var cutNoteRoom = len(fmt.Sprintf(cutNote, 1_000_000_000))

// fitBudget is the request size, in tokens, that fitting aims under.
func (a *Conversation) fitBudget() int64 {
	c := a.cfg.Compaction
	return int64(c.Threshold * float64(c.ContextWindow))
}

// fixedTokens estimates the request's system prompt and tool definitions.
func (a *Conversation) fixedTokens() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.fixedTokensLocked()
}

func (a *Conversation) fixedTokensLocked() int64 {
	var bytes int64
	for _, d := range a.defs {
		bytes += int64(len(d.Name)+len(d.Description)+len(d.InputSchema)) + blockOverhead
	}
	return bytes/bytesPerToken + blocksTokens(a.cfg.System)
}

// fitHistory cuts the history to the budget when the next request, of
// estimate tokens, would exceed it, and records the result. It does nothing
// when compaction is disabled (the caller keeps the history as it is) or the
// request fits.
func (a *Conversation) fitHistory(estimate int64) error {
	if a.cfg.Compaction.Disabled || estimate <= a.fitBudget() {
		return nil
	}
	fixed := a.fixedTokens()
	a.mu.Lock()
	history := a.history
	fitted, cut := fitMessages(history, a.fitBudget()-fixed)
	if cut == 0 {
		a.mu.Unlock()
		return nil
	}
	a.history = fitted
	a.lastSeen, a.lastUsage = 0, llm.Usage{} // the last usage no longer describes the history
	a.mu.Unlock()
	return a.recordRewrite(fmt.Sprintf("cut %d long texts to fit the context window", cut), fitted, "")
}

// recordRewrite writes a compaction boundary and then msgs, the history that
// replaces everything before it; the first message gets firstOrigin.
func (a *Conversation) recordRewrite(note string, msgs []llm.Message, firstOrigin string) error {
	a.mu.Lock()
	a.rewrites++
	a.mu.Unlock()
	if err := a.record(transcript.Entry{Type: transcript.TypeSystem, Subtype: transcript.SubtypeCompactBoundary, Content: note}); err != nil {
		return err
	}
	for i := range msgs {
		m := msgs[i]
		typ, origin := transcript.TypeAssistant, ""
		if m.Role == llm.RoleUser {
			typ, origin = transcript.TypeUser, transcript.OriginToolResult
			if i == 0 && firstOrigin != "" {
				origin = firstOrigin
			}
		}
		if err := a.record(transcript.Entry{Type: typ, Message: &m, Origin: origin}); err != nil {
			return err
		}
	}
	return nil
}

// cuttable is one text the fitter may shorten: msgs[msg].Content[block],
// or the inner block of that tool_result when inner >= 0; size is its
// length as sent (JSON-escaped).
type cuttable struct{ msg, block, inner, size int }

// fitMessages returns msgs with their longest cuttable texts cut to a
// common length, so that the messages' estimate is at most budget tokens
// (or as close as minCutBytes allows), and how many texts were cut. msgs
// itself is never modified; it is returned as is when nothing is cut.
func fitMessages(msgs []llm.Message, budget int64) ([]llm.Message, int) {
	total := messagesTokens(msgs)
	if total <= budget {
		return msgs, 0
	}
	var cs []cuttable
	var cutBytes int64
	for i := 1; i < len(msgs); i++ { // the first message stays whole
		if msgs[i].Role != llm.RoleUser {
			continue
		}
		for j, b := range msgs[i].Content {
			switch b.Type {
			case llm.BlockText:
				cs = append(cs, cuttable{i, j, -1, int(jsonLen(b.Text))})
				cutBytes += jsonLen(b.Text)
			case llm.BlockToolResult:
				for k, in := range b.Content {
					if in.Type == llm.BlockText {
						cs = append(cs, cuttable{i, j, k, int(jsonLen(in.Text))})
						cutBytes += jsonLen(in.Text)
					}
				}
			}
		}
	}
	if len(cs) == 0 {
		return msgs, 0
	}
	// The bytes the cuttable texts may keep between them.
	room := (budget-total)*bytesPerToken + cutBytes
	limit := capFor(cs, room)
	out := slices.Clone(msgs)
	cloned := map[int]bool{}
	n := 0
	for _, c := range cs {
		if c.size <= limit {
			continue
		}
		if !cloned[c.msg] {
			out[c.msg].Content = slices.Clone(out[c.msg].Content)
			cloned[c.msg] = true
		}
		b := &out[c.msg].Content[c.block]
		if c.inner < 0 {
			b.Text = cutText(b.Text, limit)
		} else {
			b.Content = slices.Clone(b.Content)
			b.Content[c.inner].Text = cutText(b.Content[c.inner].Text, limit)
		}
		n++
	}
	return out, n
}

// capFor returns the largest length such that the texts, each cut to it,
// take at most room bytes between them; never below minCutBytes.
func capFor(cs []cuttable, room int64) int {
	sizes := make([]int, len(cs))
	for i, c := range cs {
		sizes[i] = c.size
	}
	slices.Sort(sizes)
	var below int64 // bytes of the texts shorter than the cap
	for i, s := range sizes {
		rest := int64(len(sizes) - i)
		// Cap in [previous size, s]: the shorter texts keep their bytes,
		// the rest (including this one) keep cap bytes each.
		if below+rest*int64(s) > room {
			return max(int((room-below)/rest), minCutBytes)
		}
		below += int64(s)
	}
	return max(sizes[len(sizes)-1], minCutBytes) // everything fits uncut
}

// cutText shortens s to at most limit bytes as sent (JSON-escaped, note
// included), cutting at a character boundary.
func cutText(s string, limit int) string {
	room := int64(limit - cutNoteRoom)
	keep := 0
	for keep < len(s) && jsonLen(s[keep:keep+1]) <= room {
		room -= jsonLen(s[keep : keep+1])
		keep++
	}
	for keep > 0 && keep < len(s) && !utf8.RuneStart(s[keep]) {
		keep--
	}
	return s[:keep] + fmt.Sprintf(cutNote, len(s)-keep)
}
