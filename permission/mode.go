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
	ModeDefault     Mode = "default"
	ModeAcceptEdits Mode = "acceptEdits"
	ModePlan        Mode = "plan"
	ModeDontAsk     Mode = "dontAsk"
	ModeBypass      Mode = "bypassPermissions"
	ModeBubble      Mode = "bubble"
)

// Modes lists the modes a user can choose, in the order help text shows them.
var Modes = []Mode{ModeDefault, ModeAcceptEdits, ModePlan, ModeDontAsk, ModeBypass}

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
	case ModeDefault, ModeAcceptEdits, ModePlan, ModeDontAsk, ModeBypass, ModeBubble:
		return true
	}
	return false
}
