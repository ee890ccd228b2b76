package permission

import (
	"fmt"
	"slices"

	"github.com/cohort-dev/cohort/settings"
)

// Unseen is what a session's Read deny rules hide, in a form that outlives
// the session: the rules with the directories they resolve against, and
// the directories hidden whatever the rules say (HideSecrets,
// HideFromReads). The sandbox hides all of it from the session's
// commands, so its checkpoints never see it; a rewind run later, by
// another process with other rules, must leave it alone too (package
// checkpoint records it with each checkpoint).
type Unseen struct {
	Cwd  string `json:"cwd"`
	Home string `json:"home"`
	// Rules are Read deny rules ("Read(./cli/**)"; "Read" for a rule that
	// did not parse, which denies every read).
	Rules []UnseenRule `json:"rules,omitempty"`
	// Dirs are absolute directories hidden from every read.
	Dirs []string `json:"dirs,omitempty"`
}

// UnseenRule is a Read deny rule and the directory its "/" anchor
// resolves against (Rule.Root).
type UnseenRule struct {
	Rule string `json:"rule"`
	Root string `json:"root,omitempty"`
}

// Unseen returns what the checker's Read deny rules and hidden
// directories hide; ok is false when it hides nothing.
func (c *Checker) Unseen() (u Unseen, ok bool) {
	u = Unseen{Cwd: c.sh.cwd, Home: c.sh.home}
	for _, r := range c.sh.snapshot() {
		if r.Behavior != Deny || !r.coversTool("Read") {
			continue
		}
		text := "Read"
		if r.Invalid == "" && r.Specifier != "" {
			text = "Read(" + r.Specifier + ")"
		}
		ur := UnseenRule{Rule: text, Root: r.Root}
		if !slices.Contains(u.Rules, ur) {
			u.Rules = append(u.Rules, ur)
		}
	}
	c.sh.mu.Lock()
	u.Dirs = slices.Concat(c.sh.secrets, c.sh.hidden)
	c.sh.mu.Unlock()
	return u, len(u.Rules)+len(u.Dirs) > 0
}

// Checker rebuilds a checker that denies the reads u describes, and
// nothing else: what DeniedRead said in the session that recorded u. A
// rule that no longer parses denies every read (the safe way round).
func (u Unseen) Checker() (*Checker, error) {
	c, err := New(Config{Env: settings.Env{Cwd: u.Cwd, Home: u.Home}})
	if err != nil {
		return nil, fmt.Errorf("the recorded Read deny rules: %w", err)
	}
	for _, ur := range u.Rules {
		r, err := ParseRule(ur.Rule)
		if err != nil {
			r = &Rule{Tool: "*", Invalid: ur.Rule}
		}
		r.Behavior, r.Source, r.Root, r.dest = Deny, "a checkpoint's record", ur.Root, DestSession
		c.sh.rules = append(c.sh.rules, r)
	}
	c.hide(&c.sh.secrets, u.Dirs)
	return c, nil
}
