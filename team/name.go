package team

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cohort-dev/cohort/internal/clip"
	"github.com/cohort-dev/cohort/internal/lazyre"
)

// Errors callers branch on. Returned errors wrap them with details.
var (
	// ErrInvalidName: a team or agent name does not match NamePattern.
	ErrInvalidName = errors.New("invalid name")
	// ErrExists: Create found a team of that name.
	ErrExists = errors.New("team already exists")
	// ErrNotFound: no team of that name.
	ErrNotFound = errors.New("team not found")
	// ErrMemberExists: AddMember found an active member of that name.
	ErrMemberExists = errors.New("member already exists")
	// ErrNoMember: the team has no member of that name.
	ErrNoMember = errors.New("no such member")
)

// LeadName is the name of the team lead's member entry and inbox.
const LeadName = "team-lead"

// LeadAgentType is the agentType of the lead's member entry.
const LeadAgentType = "team-lead"

// NamePattern is what team and agent names must match (Claude Code's agent
// name rule). It keeps names usable as file names: no separators, no "..".
const NamePattern = `^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`

var nameRE = lazyre.New(NamePattern)

// ValidateName reports whether name may name a team or an agent.
func ValidateName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("%w %q: use 1-64 letters, digits, '_' or '-', starting with a letter or digit", ErrInvalidName, clip.Runes(name, 80))
	}
	return nil
}

// AgentID returns the agent id of member name in team: "name@team".
func AgentID(name, team string) string { return name + "@" + team }

// ParseAgentID splits "name@team" and validates both parts.
func ParseAgentID(id string) (name, team string, err error) {
	name, team, ok := strings.Cut(id, "@")
	if !ok {
		return "", "", fmt.Errorf("%w: agent id %q is not of the form name@team", ErrInvalidName, clip.Runes(id, 80))
	}
	if err := ValidateName(name); err != nil {
		return "", "", err
	}
	if err := ValidateName(team); err != nil {
		return "", "", err
	}
	return name, team, nil
}
