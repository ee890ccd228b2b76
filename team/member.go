package team

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort/internal/clip"
)

// MemberSpec describes a teammate joining a team. Name is required; the
// agent id, color, joinedAt and isActive are assigned by AddMember.
type MemberSpec struct {
	Name             string
	AgentType        string
	Model            string
	Prompt           string
	PlanModeRequired bool
	TmuxPaneID       string
	Cwd              string
	WorktreePath     string
	SessionID        string
	Subscriptions    []string
	BackendType      BackendType // empty, or one of the Backend constants
	Mode             string
}

// AddMember adds a teammate to team: agentId name@team, the next palette
// color, joinedAt now, isActive true; and registers its inbox. It fails
// with ErrMemberExists if an active member has that name (compared
// case-insensitively); an inactive entry of that name is replaced.
func (s *Store) AddMember(ctx context.Context, team string, spec MemberSpec) (Member, error) {
	if err := ValidateName(spec.Name); err != nil {
		return Member{}, fmt.Errorf("team %q: add member: %w", team, err)
	}
	if spec.BackendType != "" && !spec.BackendType.Valid() {
		return Member{}, fmt.Errorf("team %q: add member %q: backend type %q is not one of tmux, iterm2, in-process, remote", team, spec.Name, spec.BackendType)
	}
	mb, err := s.Mailbox(team)
	if err != nil {
		return Member{}, err
	}
	var added Member
	_, err = s.Update(ctx, team, func(c *Config) error {
		if i := c.memberIndex(spec.Name); i >= 0 {
			if c.Members[i].IsActive {
				return fmt.Errorf("team %q: %w: %q is already an active member; choose another name", team, ErrMemberExists, c.Members[i].Name)
			}
			c.Members = slices.Delete(c.Members, i, i+1)
		}
		added = Member{
			AgentID: AgentID(spec.Name, team), Name: spec.Name, AgentType: spec.AgentType,
			Model: spec.Model, Prompt: spec.Prompt, Color: nextColor(c.Members),
			PlanModeRequired: spec.PlanModeRequired, JoinedAt: s.cfg.Now(),
			TmuxPaneID: spec.TmuxPaneID, Cwd: spec.Cwd, WorktreePath: spec.WorktreePath,
			SessionID: spec.SessionID, Subscriptions: slices.Clone(spec.Subscriptions),
			BackendType: spec.BackendType, IsActive: true, Mode: spec.Mode,
		}
		// The inbox exists before the member is visible in the file, so a
		// message sent to a listed member always has somewhere to go.
		if err := mb.Register(ctx, spec.Name); err != nil {
			return fmt.Errorf("team %q: register inbox of %q: %w", team, spec.Name, err)
		}
		c.Members = append(c.Members, added)
		return nil
	})
	if err != nil {
		return Member{}, err
	}
	return added.Clone(), nil
}

// editMember applies fn to member name under the team lock.
func (s *Store) editMember(ctx context.Context, team, name string, fn func(*Member)) (Member, error) {
	var out Member
	_, err := s.Update(ctx, team, func(c *Config) error {
		i := c.memberIndex(name)
		if i < 0 {
			return fmt.Errorf("team %q: %w %q", team, ErrNoMember, name)
		}
		fn(&c.Members[i])
		out = c.Members[i].Clone()
		return nil
	})
	return out, err
}

// SetActive sets member name's isActive flag.
func (s *Store) SetActive(ctx context.Context, team, name string, active bool) (Member, error) {
	return s.editMember(ctx, team, name, func(m *Member) { m.IsActive = active })
}

// SetMode records member name's permission mode.
func (s *Store) SetMode(ctx context.Context, team, name, mode string) (Member, error) {
	return s.editMember(ctx, team, name, func(m *Member) { m.Mode = mode })
}

// SetPane records the terminal pane member name runs in ("" for none).
func (s *Store) SetPane(ctx context.Context, team, name, paneID string) (Member, error) {
	return s.editMember(ctx, team, name, func(m *Member) { m.TmuxPaneID = paneID })
}

// RemoveMember deletes member name's entry from the team file. Its inbox
// is kept (messages are never dropped). The lead cannot be removed.
func (s *Store) RemoveMember(ctx context.Context, team, name string) error {
	_, err := s.Update(ctx, team, func(c *Config) error {
		i := c.memberIndex(name)
		if i < 0 {
			return fmt.Errorf("team %q: %w %q", team, ErrNoMember, name)
		}
		if c.Members[i].AgentID == c.LeadAgentID {
			return fmt.Errorf("team %q: %q is the lead and cannot be removed; delete the team instead", team, name)
		}
		c.Members = slices.Delete(c.Members, i, i+1)
		return nil
	})
	return err
}

// Member returns member name of team as the file says now.
func (s *Store) Member(team, name string) (Member, error) {
	cfg, err := s.readTeam(team)
	if err != nil {
		return Member{}, err
	}
	m, ok := cfg.Member(name)
	if !ok {
		return Member{}, fmt.Errorf("team %q: %w %q", team, ErrNoMember, name)
	}
	return m, nil
}

// ActiveMembers returns team's active members, the lead first.
func (s *Store) ActiveMembers(team string) ([]Member, error) {
	cfg, err := s.readTeam(team)
	if err != nil {
		return nil, err
	}
	return cfg.ActiveMembers(), nil
}

func (s *Store) readTeam(team string) (Config, error) {
	if err := ValidateName(team); err != nil {
		return Config{}, fmt.Errorf("team: %w", err)
	}
	return s.read(team)
}

// AddAllowedPath adds a teamAllowedPaths entry (addedAt now). An entry for
// the same path and tool is replaced, so the list holds each pair once.
func (s *Store) AddAllowedPath(ctx context.Context, team string, p AllowedPath) error {
	if strings.TrimSpace(p.Path) == "" || strings.TrimSpace(p.ToolName) == "" {
		return fmt.Errorf("team %q: an allowed path needs a path and a tool name", team)
	}
	if strings.ContainsAny(p.Path, "\x00\n") {
		return fmt.Errorf("team %q: allowed path %q contains a NUL or newline", team, clip.Runes(p.Path, 80))
	}
	p.AddedAt = s.cfg.Now()
	_, err := s.Update(ctx, team, func(c *Config) error {
		c.TeamAllowedPaths = slices.DeleteFunc(c.TeamAllowedPaths, func(a AllowedPath) bool {
			return a.Path == p.Path && a.ToolName == p.ToolName
		})
		c.TeamAllowedPaths = append(c.TeamAllowedPaths, p)
		return nil
	})
	return err
}
