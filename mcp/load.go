package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort/internal/configtrust"
	"github.com/cohort-dev/cohort/internal/ownread"
	"github.com/cohort-dev/cohort/settings"
)

// The settings keys that approve project servers (Claude Code's names).
const (
	keyEnabled    = "enabledMcpjsonServers"
	keyDisabled   = "disabledMcpjsonServers"
	keyEnableAll  = "enableAllProjectMcpServers"
	keyApproved   = "approvedMcpjsonServers" // Cohort's: name → the approved definition's fingerprint
	ProjectFile   = ".mcp.json"
	approvalsFile = "settings.local.json"
)

// LoadConfig says where a session's servers come from.
type LoadConfig struct {
	// Settings are the session's settings: their mcpServers, and the
	// approvals of project servers.
	Settings *settings.Settings
	// ProjectDirs hold the .mcp.json files read, outermost first (the
	// repository root, then the working directory); a nearer file's server
	// replaces a farther one of the same name.
	ProjectDirs []string
	// CLI are the --mcp-config values; Strict (--strict-mcp-config) makes
	// them the only servers.
	CLI    []string
	Strict bool
	// Dir resolves relative --mcp-config paths.
	Dir    string
	Getenv func(string) string
	// Trust, when set, is the record of where agents' commands could
	// write: an .mcp.json there is read only as a person approved it
	// (internal/configtrust), else it is an error and none of its servers
	// is known.
	Trust *configtrust.Book
}

// Load returns the session's servers sorted by name — .mcp.json files,
// then the settings' mcpServers, then --mcp-config, a later one replacing
// an earlier one of the same name — with each project server Disabled
// unless the user approved it (Approved).
func Load(c LoadConfig) ([]Spec, []error) {
	byName := map[string]Spec{}
	var errs []error
	add := func(specs []Spec, e []error) {
		errs = append(errs, e...)
		for _, s := range specs {
			byName[s.Name] = s
		}
	}
	if !c.Strict {
		for _, dir := range c.ProjectDirs {
			path := filepath.Join(dir, ProjectFile)
			data, err := ownread.Config(path, 0) // a FIFO planted as .mcp.json must not hang the start
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %v; its MCP servers are not started", path, err))
				continue
			}
			if v := c.Trust.Check(dir, path, data); v != nil {
				errs = append(errs, fmt.Errorf("%s: its MCP servers are not started: it %s", path, v.Why()))
				continue
			}
			specs, e := Parse(path, ScopeProject, data, c.Getenv)
			if c.Trust.ByApproval(dir, path, data) {
				for i := range specs {
					specs[i].Approved = true
				}
			}
			add(specs, e)
		}
		if c.Settings != nil {
			add(FromSettings(c.Settings, c.Getenv))
		}
	}
	for _, v := range c.CLI {
		add(ReadConfig(v, c.Dir, c.Getenv))
	}
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	slices.Sort(names)
	ap := approvals(c.Settings)
	out := make([]Spec, 0, len(names))
	for _, n := range names {
		s := byName[n]
		if s.Scope == ScopeProject {
			s.Disabled, s.Reason = ap.check(s)
		}
		out = append(out, s)
	}
	return out, errs
}

// approval is what the trusted settings say about project servers.
type approval struct {
	all               bool
	enabled, disabled map[string]bool
	approved          map[string]string // name → fingerprint
}

// approvals reads the approvals from user, local and command-line settings
// only: a project settings file comes with the repository, and the
// repository cannot approve its own servers.
func approvals(s *settings.Settings) approval {
	a := approval{enabled: map[string]bool{}, disabled: map[string]bool{}, approved: map[string]string{}}
	if s == nil {
		return a
	}
	list := func(key string, into map[string]bool) {
		for _, sec := range s.Section(key) {
			if sec.Source.Scope == settings.ScopeProject {
				continue
			}
			var names []string
			if json.Unmarshal(sec.Value, &names) == nil {
				for _, n := range names {
					into[n] = true
				}
			}
		}
	}
	list(keyEnabled, a.enabled)
	list(keyDisabled, a.disabled)
	for _, sec := range s.Section(keyApproved) {
		var m map[string]string
		if sec.Source.Scope != settings.ScopeProject && json.Unmarshal(sec.Value, &m) == nil {
			maps.Copy(a.approved, m)
		}
	}
	for _, sec := range s.Section(keyEnableAll) {
		var on bool
		if sec.Source.Scope != settings.ScopeProject && json.Unmarshal(sec.Value, &on) == nil {
			a.all = on
		}
	}
	return a
}

// check decides a project server: approved by what it runs. An approval
// records the definition's fingerprint; a server whose definition changed
// since, or that was approved by name only (Claude Code's
// enabledMcpjsonServers, which says nothing of what runs), is disabled
// until approved again. enableAllProjectMcpServers trusts every
// definition the project holds, as the user who set it asked.
func (a approval) check(s Spec) (disabled bool, reason string) {
	name := s.Name
	again := fmt.Sprintf("run `cohort mcp approve %s` to approve what it runs now (it records the approval in .cohort/%s)", name, approvalsFile)
	fp, approved := a.approved[name]
	switch {
	case a.disabled[name]:
		return true, fmt.Sprintf("listed in %s", keyDisabled)
	case a.all:
		return false, ""
	case approved && fp == s.Fingerprint:
		return false, ""
	case approved:
		return true, "its definition changed since it was approved (it now runs " + s.runs() + "), so it is not started; " + again
	case a.enabled[name]:
		return true, fmt.Sprintf("it is approved by name only (%s), and Cohort approves a project server by what it runs; %s", keyEnabled, again)
	}
	return true, "a project server runs only once approved: " + again
}

// runs says briefly what a server runs, for messages.
func (s Spec) runs() string {
	if s.Type == TypeHTTP {
		return s.URL
	}
	return strings.Join(append([]string{s.Command}, s.Args...), " ")
}

// Approve records in projectRoot/.cohort/settings.local.json that the user
// approved the project servers specs as they are defined now: their names
// (Claude Code's enabledMcpjsonServers) and what each runs
// (approvedMcpjsonServers, name → fingerprint), and takes them off
// disabledMcpjsonServers.
func Approve(ctx context.Context, projectRoot string, specs []Spec) (string, error) {
	path := filepath.Join(projectRoot, ".cohort", approvalsFile)
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	err := settings.Edit(ctx, path, func(d *settings.Document) error {
		fps := map[string]string{}
		if raw, ok := d.Get(keyApproved); ok {
			if err := json.Unmarshal(raw, &fps); err != nil {
				return fmt.Errorf("%s is not an object of names and fingerprints: %v", keyApproved, err)
			}
		}
		for _, s := range specs {
			fps[s.Name] = s.Fingerprint
		}
		if err := d.Set(keyApproved, fps); err != nil {
			return err
		}
		on, err := d.Strings(keyEnabled)
		if err != nil {
			return err
		}
		off, err := d.Strings(keyDisabled)
		if err != nil {
			return err
		}
		for _, n := range names {
			if !slices.Contains(on, n) {
				on = append(on, n)
			}
			off = slices.DeleteFunc(off, func(s string) bool { return s == n })
		}
		if len(off) == 0 {
			d.Delete(keyDisabled)
		} else if err := d.Set(keyDisabled, off); err != nil {
			return err
		}
		return d.Set(keyEnabled, on)
	})
	return path, err
}
