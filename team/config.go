package team

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/internal/jsonfile"
)

// Config is the content of a team file, config.json. Field names in the
// file are Claude Code's (camelCase, as its team files have them). A Config is a plain value:
// Store methods hand out copies, and changing one changes nothing on disk
// until it goes through Store.Update.
type Config struct {
	Name             string
	Description      string
	CreatedAt        time.Time // epoch milliseconds in the file
	LeadAgentID      string    // "team-lead@{team}"
	LeadSessionID    string
	HiddenPaneIDs    []string
	TeamAllowedPaths []AllowedPath
	Members          []Member
	// NATS is the NATS server (nats://host:4222, or a comma-separated list
	// of a cluster's) whose JetStream holds every member's mailbox; empty
	// keeps the mailboxes in files on this machine. A Cohort field.
	NATS string
	// Extra holds top-level fields Cohort does not know, verbatim; they are
	// written back unchanged.
	Extra map[string]json.RawMessage
}

// Member is one entry of a team's members list.
type Member struct {
	AgentID          string // "name@team"
	Name             string
	AgentType        string // the agent definition it runs, "team-lead" for the lead
	Model            string
	Prompt           string // the spawn prompt
	Color            string // a Palette color; empty for the lead
	PlanModeRequired bool
	JoinedAt         time.Time // epoch milliseconds in the file
	TmuxPaneID       string    // empty when the member has no pane
	Cwd              string
	WorktreePath     string
	SessionID        string
	Subscriptions    []string
	BackendType      BackendType
	// IsActive reports that the member is part of the running team; it is
	// cleared when the member shuts down. Absent in a file means true.
	IsActive bool
	Mode     string // permission mode
	// PublicKey is a Cohort field of earlier versions (the member's key,
	// written by the member unsigned), kept as read. Nothing checks a
	// message with it: on NATS a member's key is the one its lead signed
	// (KeyGrant, memberkey.go).
	PublicKey string
	// Extra holds fields Cohort does not know, verbatim.
	Extra map[string]json.RawMessage
}

// AllowedPath is an entry of teamAllowedPaths: a path every teammate may use
// with a tool without asking, inherited by every teammate at start-up.
type AllowedPath struct {
	Path     string
	ToolName string
	AddedBy  string
	AddedAt  time.Time // epoch milliseconds in the file
	Extra    map[string]json.RawMessage
}

// BackendType says how a teammate runs.
type BackendType string

// Backend types, as Claude Code writes them.
const (
	BackendTmux      BackendType = "tmux"
	BackendITerm2    BackendType = "iterm2"
	BackendInProcess BackendType = "in-process"
	// BackendRemote is Cohort's: a teammate on a worker of the team's
	// NATS server (package teammate).
	BackendRemote BackendType = "remote"
)

// Valid reports whether b is one of the known backend types.
func (b BackendType) Valid() bool {
	return b == BackendTmux || b == BackendITerm2 || b == BackendInProcess || b == BackendRemote
}

// Palette is the fixed list of teammate colors, assigned round-robin in
// joining order.
var Palette = []string{"red", "blue", "green", "yellow", "purple", "orange", "pink", "cyan"}

// nextColor returns the palette color after the one of the most recently
// added teammate that has a palette color, or the first color.
func nextColor(members []Member) string {
	for i := len(members) - 1; i >= 0; i-- {
		if idx := slices.Index(Palette, members[i].Color); idx >= 0 {
			return Palette[(idx+1)%len(Palette)]
		}
	}
	return Palette[0]
}

// Clone returns a deep copy of c.
func (c Config) Clone() Config {
	c.HiddenPaneIDs = slices.Clone(c.HiddenPaneIDs)
	c.TeamAllowedPaths = slices.Clone(c.TeamAllowedPaths)
	for i := range c.TeamAllowedPaths {
		c.TeamAllowedPaths[i].Extra = jsonfile.CloneFields(c.TeamAllowedPaths[i].Extra)
	}
	c.Members = slices.Clone(c.Members)
	for i := range c.Members {
		c.Members[i] = c.Members[i].Clone()
	}
	c.Extra = jsonfile.CloneFields(c.Extra)
	return c
}

// Clone returns a deep copy of m.
func (m Member) Clone() Member {
	m.Subscriptions = slices.Clone(m.Subscriptions)
	m.Extra = jsonfile.CloneFields(m.Extra)
	return m
}

// Member returns the member called name (compared case-insensitively),
// preferring an active entry.
func (c *Config) Member(name string) (Member, bool) {
	i := c.memberIndex(name)
	if i < 0 {
		return Member{}, false
	}
	return c.Members[i].Clone(), true
}

// memberIndex finds name, preferring an active entry; -1 if absent.
func (c *Config) memberIndex(name string) int {
	found := -1
	for i, m := range c.Members {
		if strings.EqualFold(m.Name, name) {
			if m.IsActive {
				return i
			}
			found = i
		}
	}
	return found
}

// ActiveMembers returns the members with IsActive set, in file order
// (the lead first).
func (c *Config) ActiveMembers() []Member {
	var out []Member
	for _, m := range c.Members {
		if m.IsActive {
			out = append(out, m.Clone())
		}
	}
	return out
}

// validate checks what the rest of Cohort relies on: names usable as file
// names, ids that match them, and no two active members sharing a name.
// dirName is the team directory's name.
func (c *Config) validate(dirName string) error {
	if err := ValidateName(c.Name); err != nil {
		return fmt.Errorf("name: %w", err)
	}
	if dirName != "" && c.Name != dirName {
		return fmt.Errorf("name is %q but the team directory is %q", c.Name, dirName)
	}
	active := map[string]int{}
	for i, m := range c.Members {
		if err := ValidateName(m.Name); err != nil {
			return fmt.Errorf("members[%d].name: %w", i, err)
		}
		if want := AgentID(m.Name, c.Name); m.AgentID != want {
			return fmt.Errorf("members[%d].agentId is %q, want %q", i, m.AgentID, want)
		}
		if !m.IsActive {
			continue
		}
		key := strings.ToLower(m.Name)
		if j, dup := active[key]; dup {
			return fmt.Errorf("members[%d] and members[%d] are both active and named %q", j, i, m.Name)
		}
		active[key] = i
	}
	return nil
}
