package tui

import (
	"regexp"
	"strings"
	"sync"
)

// What the lead reads in its user messages besides the user's prompts is
// shown as one line each: a task notification as its summary ("Agent
// "audit" completed"), a teammate's message as "alice: its summary or
// first line", and the typed-ahead text (already in the conversation as
// the user's line) not at all.

var (
	noticeSummary = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)<summary>(.*?)</summary>`) })
	noticeStatus  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)<status>(.*?)</status>`) })
	mateOpen      = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^<teammate-message\s+from="([^"]*)"[^>]*?(?:\ssummary="([^"]*)")?[^>]*>`)
	})
)

// typedAheadOpen opens the block a typed-ahead text reaches the lead in
// (package crew writes it).
const typedAheadOpen = "The user sent this message during your turn"

// noticeLine is the line a text block of a user message is shown as, and
// false for one that is not shown.
func noticeLine(s string) (string, bool) {
	s = strings.TrimSpace(s)
	switch {
	case strings.HasPrefix(s, typedAheadOpen):
		return "", false
	case strings.HasPrefix(s, "<task-notification>"):
		if m := noticeSummary().FindStringSubmatch(s); m != nil {
			return firstLine(m[1]), true
		}
		if m := noticeStatus().FindStringSubmatch(s); m != nil {
			return "a background task ended: " + firstLine(m[1]), true
		}
	case strings.HasPrefix(s, "<teammate-message"):
		if m := mateOpen().FindStringSubmatch(s); m != nil {
			body := m[2]
			if body == "" {
				body = strings.TrimSuffix(s[len(m[0]):], "</teammate-message>")
			}
			return m[1] + ": " + firstLine(body), true
		}
	}
	return firstLine(s), true
}
