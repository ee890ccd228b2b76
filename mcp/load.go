package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/cohort-dev/cohort/settings"
)

// The settings keys that approve project servers (Claude Code's names).
const (
	keyEnabled    = "enabledMcpjsonServers"
	keyDisabled   = "disabledMcpjsonServers"
	keyEnableAll  = "enableAllProjectMcpServers"
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
			data, err := os.ReadFile(path)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %v; its MCP servers are not started", path, err))
				continue
			}
			add(Parse(path, ScopeProject, data, c.Getenv))
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
			s.Disabled, s.Reason = ap.check(n)
		}
		out = append(out, s)
	}
	return out, errs
}

// approval is what the trusted settings say about project servers.
type approval struct {
	all               bool
	enabled, disabled map[string]bool
}

// approvals reads the approvals from user, local and command-line settings
// only: a project settings file comes with the repository, and the
// repository cannot approve its own servers.
func approvals(s *settings.Settings) approval {
	a := approval{enabled: map[string]bool{}, disabled: map[string]bool{}}
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
	for _, sec := range s.Section(keyEnableAll) {
		var on bool
		if sec.Source.Scope != settings.ScopeProject && json.Unmarshal(sec.Value, &on) == nil {
			a.all = on
		}
	}
	return a
}

func (a approval) check(name string) (disabled bool, reason string) {
	switch {
	case a.disabled[name]:
		return true, fmt.Sprintf("listed in %s", keyDisabled)
	case a.all || a.enabled[name]:
		return false, ""
	}
	return true, fmt.Sprintf("a project server runs only once approved: run `cohort mcp approve %s` (it records the approval in .cohort/%s)", name, approvalsFile)
}

// Approve records in projectRoot/.cohort/settings.local.json that the user
// approved the project servers names (Claude Code's enabledMcpjsonServers),
// and takes them off disabledMcpjsonServers.
func Approve(ctx context.Context, projectRoot string, names []string) (string, error) {
	path := filepath.Join(projectRoot, ".cohort", approvalsFile)
	err := settings.Edit(ctx, path, func(d *settings.Document) error {
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
