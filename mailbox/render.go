package mailbox

import (
	"strings"

	"github.com/cohort-dev/cohort/llm"
)

// Origin says who authored input the engine is about to show the model.
// The engine renders agent-originated input with Render and never treats it
// as the user's words: it cannot approve a permission, grant consent or
// change settings.
type Origin string

// Origins of conversation input.
const (
	OriginUser  Origin = "user"  // typed by the human
	OriginAgent Origin = "agent" // written by another agent (every mailbox message)
)

// Origin reports who authored m: always OriginAgent, whatever m claims.
func (Message) Origin() Origin { return OriginAgent }

// teammateTag is the element name the model sees around mailbox messages.
const teammateTag = "teammate-message"

var attrEscaper = strings.NewReplacer(
	`&`, "&amp;", `"`, "&quot;", `<`, "&lt;", `>`, "&gt;",
	"\n", "&#10;", "\r", "&#13;", "\t", "&#9;",
)

// Render returns m as the model sees it:
//
//	<teammate-message from="alice" color="blue" summary="…">text</teammate-message>
//
// color and summary appear only when set. Attribute values are escaped. In
// the body, every '<' that would open or close a teammate-message element
// (in any letter case) becomes "&lt;", so a message cannot end its own
// element early and smuggle text outside it; all other text is verbatim.
func Render(m Message) string {
	var b strings.Builder
	b.Grow(len(m.Text) + len(m.Summary) + 64)
	b.WriteString("<" + teammateTag + ` from="`)
	b.WriteString(attrEscaper.Replace(m.From))
	b.WriteByte('"')
	if m.Color != "" {
		b.WriteString(` color="`)
		b.WriteString(attrEscaper.Replace(m.Color))
		b.WriteByte('"')
	}
	if m.Summary != "" {
		b.WriteString(` summary="`)
		b.WriteString(attrEscaper.Replace(m.Summary))
		b.WriteByte('"')
	}
	b.WriteByte('>')
	writeBody(&b, m.Text)
	b.WriteString("</" + teammateTag + ">")
	return b.String()
}

// Block returns Render(m) as a text block for a user-role message.
func Block(m Message) llm.Block { return llm.Text(Render(m)) }

// writeBody copies text, escaping the '<' of any teammate-message tag.
func writeBody(b *strings.Builder, text string) {
	for {
		i := strings.IndexByte(text, '<')
		if i < 0 {
			b.WriteString(text)
			return
		}
		b.WriteString(text[:i])
		rest := text[i+1:]
		rest = strings.TrimPrefix(rest, "/")
		if len(rest) >= len(teammateTag) && strings.EqualFold(rest[:len(teammateTag)], teammateTag) {
			b.WriteString("&lt;")
		} else {
			b.WriteByte('<')
		}
		text = text[i+1:]
	}
}
