package worktree

import (
	"fmt"
	"strings"
	"unicode/utf16"
)

// MaxSlugLen is the longest slug accepted.
const MaxSlugLen = 64

// BranchPrefix is the namespace of the branches Cohort creates: a worktree
// with slug s is on branch BranchPrefix+s.
const BranchPrefix = "cohort/"

// ValidateSlug checks that slug can name a worktree directory under
// .cohort/worktrees and a branch under cohort/: segments separated by "/",
// each made of ASCII letters, digits, ".", "_" and "-"; at most MaxSlugLen
// bytes; no empty, "." or ".." segment, so the path can never leave the
// worktrees directory. Segments must also be valid in a git ref name: none
// starts with "." or "-", ends with "." or ".lock", or contains "..".
// The error wraps ErrInvalidSlug and says what to change.
func ValidateSlug(slug string) error {
	bad := func(why string) error {
		return fmt.Errorf("%w %q: %s; use letters, digits, '.', '_' and '-' in '/'-separated segments, at most %d characters", ErrInvalidSlug, slug, why, MaxSlugLen)
	}
	switch {
	case slug == "":
		return bad("it is empty")
	case len(slug) > MaxSlugLen:
		return bad(fmt.Sprintf("it is %d characters long", len(slug)))
	}
	for i := 0; i < len(slug); i++ {
		if c := slug[i]; !slugChar(c) && c != '/' {
			return bad(fmt.Sprintf("character %q at offset %d is not allowed", c, i))
		}
	}
	for seg := range strings.SplitSeq(slug, "/") {
		switch {
		case seg == "":
			return bad("it has an empty segment (leading, trailing or doubled '/')")
		case seg == "." || seg == "..":
			return bad(fmt.Sprintf("segment %q would leave the worktrees directory", seg))
		case seg[0] == '.' || seg[0] == '-':
			return bad(fmt.Sprintf("segment %q starts with %q", seg, seg[0]))
		case strings.HasSuffix(seg, "."):
			return bad(fmt.Sprintf("segment %q ends with '.'", seg))
		case strings.HasSuffix(seg, ".lock"):
			return bad(fmt.Sprintf("segment %q ends with .lock, which git reserves", seg))
		case strings.Contains(seg, ".."):
			return bad(fmt.Sprintf("segment %q contains '..', which git refuses in branch names", seg))
		}
	}
	return nil
}

func slugChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '.' || c == '_' || c == '-'
}

// ProjectSlug turns a path (normally a canonical repo root from RepoRoot)
// into the directory name sessions and memory are stored under: every
// character outside [A-Za-z0-9] becomes "-". Characters are counted the way
// Claude Code counts them (UTF-16 code units), so a character outside the
// Basic Multilingual Plane becomes "--" and the names agree with its
// project directories.
func ProjectSlug(path string) string {
	var b strings.Builder
	b.Grow(len(path))
	for _, r := range path {
		switch {
		case r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'):
			b.WriteRune(r)
		case utf16.RuneLen(r) == 2:
			b.WriteString("--")
		default:
			b.WriteByte('-')
		}
	}
	return b.String()
}

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
