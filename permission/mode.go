package permission

import (
	"fmt"
	"strings"
)

// Mode is a permission mode: the default answer for calls no rule decides.
type Mode string

// The modes. ModeBubble is internal (forks use it) and cannot be chosen by
// a user or an agent definition.
const (
	ModeDefault           Mode = "default"
	ModeAcceptEdits       Mode = "acceptEdits"
	ModePlan              Mode = "plan"
	ModeDontAsk           Mode = "dontAsk"
	ModeBypassPermissions Mode = "bypassPermissions"
	ModeBubble            Mode = "bubble"
)

// Modes lists the modes a user can choose, in the order help text shows them.
var Modes = []Mode{ModeDefault, ModeAcceptEdits, ModePlan, ModeDontAsk, ModeBypassPermissions}

// ParseMode parses a user-facing mode name (exact spelling, as Claude Code).
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes {
		if s == string(m) {
			return m, nil
		}
	}
	names := make([]string, len(Modes))
	for i, m := range Modes {
		names[i] = string(m)
	}
	if s == string(ModeBubble) {
		return "", fmt.Errorf("permission mode %q is internal (forks use it) and cannot be set; valid modes: %s", s, strings.Join(names, ", "))
	}
	return "", fmt.Errorf("unknown permission mode %q; valid modes: %s", s, strings.Join(names, ", "))
}

// Valid reports whether m is one of the modes, bubble included.
func (m Mode) Valid() bool {
	switch m {
	case ModeDefault, ModeAcceptEdits, ModePlan, ModeDontAsk, ModeBypassPermissions, ModeBubble:
		return true
	}
	return false
}

// Rank orders the user-facing modes by how much they allow without asking:
// plan 0, default and dontAsk 1, acceptEdits 2, bypassPermissions 3. (dontAsk
// denies what would ask, so it allows no more than default.) bubble, which
// sends every question to a parent, ranks with default; an unknown mode
// ranks lowest.
func (m Mode) Rank() int {
	switch m {
	case ModeDefault, ModeDontAsk, ModeBubble:
		return 1
	case ModeAcceptEdits:
		return 2
	case ModeBypassPermissions:
		return 3
	}
	return 0
}

// Exceeds reports whether m allows more without asking than limit: the test
// for a mode an agent asks to give its child (a model cannot grant another
// agent more than it has itself).
func (m Mode) Exceeds(limit Mode) bool { return m.Rank() > limit.Rank() }

// ModeAuto is Claude Code's "auto" mode, in which a model-based classifier
// approves calls in the background. Cohort has no classifier; a settings
// file that asks for it gets default mode with a warning (see
// settingsMode), which asks where auto might have approved: the safe way
// to be wrong.
const ModeAuto = "auto"

// settingsMode reads a settings file's defaultMode. A value Cohort cannot
// honour is reported and read as default, with a suggestion for near
// misses.
func settingsMode(s string) (Mode, error) {
	m, err := ParseMode(s)
	switch {
	case err == nil:
		return m, nil
	case s == ModeAuto:
		return ModeDefault, fmt.Errorf(`%q is Claude Code's classifier-approved mode, which Cohort does not have; using %s, where calls no allow rule covers ask (pass --permission-mode acceptEdits, or add allow rules, to run more without asking)`, s, ModeDefault)
	case strings.EqualFold(s, "allowEdits") || strings.EqualFold(s, string(ModeAcceptEdits)):
		return ModeDefault, fmt.Errorf("%v; did you mean %q? (using %s)", err, ModeAcceptEdits, ModeDefault)
	}
	return ModeDefault, fmt.Errorf("%v (using %s)", err, ModeDefault)
}
