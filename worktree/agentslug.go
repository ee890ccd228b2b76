package worktree

import (
	"strings"
)

// maxLabel bounds the readable part of a derived slug.
const maxLabel = 32

// AgentSlug derives the worktree slug of an agent: a label from its name
// (or, without one, its description) and the first eight hex digits of its
// id, e.g. "fix-the-parser-1f3a9c0d" on branch cohort/fix-the-parser-1f3a9c0d.
// The label keeps ASCII letters and digits, lower-cased, with runs of
// anything else turned into one "-"; the id keeps slugs of agents with the
// same label apart. The result always passes worktree.ValidateSlug.
func AgentSlug(agentID, name, description string) string {
	id := label(strings.TrimPrefix(agentID, "a"), 8)
	if id == "" {
		id = "agent"
	}
	text := name
	if text == "" {
		text = description
	}
	slug := "agent-" + id
	if l := label(text, maxLabel); l != "" {
		slug = l + "-" + id
	}
	if ValidateSlug(slug) != nil {
		return "agent"
	}
	return slug
}

// label makes a slug segment of s: lower-case ASCII letters and digits,
// other runs collapsed to "-", no "-" at either end, at most n bytes (cut
// at a "-" when there is one).
func label(s string, n int) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	out := b.String()
	if len(out) > n {
		out = out[:n]
		if i := strings.LastIndexByte(out, '-'); i > n/2 {
			out = out[:i]
		}
	}
	return strings.Trim(out, "-")
}
