package permission

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/cohort-dev/cohort/settings"
)

// Destination says where a rule update is kept (Claude Code's names).
type Destination string

// The destinations. Only the three settings destinations are persisted.
const (
	DestUser    Destination = "userSettings"
	DestProject Destination = "projectSettings"
	DestLocal   Destination = "localSettings"
	DestSession Destination = "session"
	DestCLI     Destination = "cliArg"
)

func destOfScope(s settings.Scope) Destination {
	switch s {
	case settings.ScopeUser:
		return DestUser
	case settings.ScopeProject:
		return DestProject
	case settings.ScopeLocal:
		return DestLocal
	}
	return DestCLI
}

// Update types (Claude Code's PermissionUpdate "type").
const (
	UpdateAddRules          = "addRules"
	UpdateReplaceRules      = "replaceRules"
	UpdateRemoveRules       = "removeRules"
	UpdateSetMode           = "setMode"
	UpdateAddDirectories    = "addDirectories"
	UpdateRemoveDirectories = "removeDirectories"
)

// RuleUpdate changes the permission state at run time, typically from an
// approver's "always allow" answer. Its JSON is Claude Code's
// PermissionUpdate, so a permission-prompt program written for Claude Code
// can return it unchanged.
type RuleUpdate struct {
	Type        string      `json:"type"`
	Rules       []RuleValue `json:"rules,omitempty"`
	Behavior    Behavior    `json:"behavior,omitempty"`
	Destination Destination `json:"destination"`
	Mode        Mode        `json:"mode,omitempty"`
	Directories []string    `json:"directories,omitempty"`
}

// RuleValue is one rule in a RuleUpdate.
type RuleValue struct {
	ToolName    string `json:"toolName"`
	RuleContent string `json:"ruleContent,omitempty"`
}

// String returns the rule as written in settings.
func (v RuleValue) String() string {
	if v.RuleContent == "" {
		return v.ToolName
	}
	return v.ToolName + "(" + v.RuleContent + ")"
}

// ValueOf converts a parsed rule for a RuleUpdate.
func ValueOf(r *Rule) RuleValue { return RuleValue{ToolName: r.Tool, RuleContent: r.Specifier} }

func (u RuleUpdate) validate() ([]*Rule, error) {
	switch u.Destination {
	case DestUser, DestProject, DestLocal, DestSession, DestCLI:
	default:
		return nil, fmt.Errorf("unknown destination %q", u.Destination)
	}
	switch u.Type {
	case UpdateAddRules, UpdateReplaceRules, UpdateRemoveRules:
		if _, err := ParseBehavior(string(u.Behavior)); err != nil {
			return nil, err
		}
		var rules []*Rule
		for _, v := range u.Rules {
			r, err := ParseRule(v.String())
			if err != nil {
				return nil, err
			}
			r.Behavior, r.Source, r.dest = u.Behavior, string(u.Destination), u.Destination
			rules = append(rules, r)
		}
		return rules, nil
	case UpdateSetMode:
		if !u.Mode.Valid() || u.Mode == ModeBubble {
			_, err := ParseMode(string(u.Mode))
			return nil, err
		}
	case UpdateAddDirectories, UpdateRemoveDirectories:
		for _, d := range u.Directories {
			if d == "" {
				return nil, errors.New("empty directory")
			}
		}
	default:
		return nil, fmt.Errorf("unknown update type %q", u.Type)
	}
	return nil, nil
}

// Apply applies an update in memory and, for settings destinations when a
// Persist function was configured, writes it to the settings file. An
// invalid update changes nothing. A persistence failure is returned after
// the in-memory change took effect, so the session still honours it.
func (c *Checker) Apply(ctx context.Context, u RuleUpdate) error {
	rules, err := u.validate()
	if err != nil {
		return fmt.Errorf("permission update: %w", err)
	}
	sh := c.sh
	switch u.Type {
	case UpdateSetMode:
		if err := c.SetMode(u.Mode); err != nil {
			return fmt.Errorf("permission update: %w", err)
		}
	case UpdateAddDirectories, UpdateRemoveDirectories:
		sh.mu.Lock()
		for _, d := range u.Directories {
			d = expandDir(d, sh.home, sh.cwd)
			if u.Type == UpdateAddDirectories {
				sh.addDir(d)
			} else {
				sh.dirs = slices.DeleteFunc(sh.dirs, func(w workDir) bool { return w.path == d && d != sh.cwd })
			}
		}
		sh.mu.Unlock()
	default:
		for _, r := range rules {
			r.Root = sh.cwd
		}
		sh.mu.Lock()
		sh.rules = applyRules(sh.rules, u, rules)
		sh.mu.Unlock()
	}
	if sh.persist == nil || (u.Destination != DestUser && u.Destination != DestProject && u.Destination != DestLocal) {
		return nil
	}
	if err := sh.persist(ctx, u); err != nil {
		return fmt.Errorf("permission update applied for this session but not saved: %w", err)
	}
	return nil
}

func applyRules(cur []*Rule, u RuleUpdate, rules []*Rule) []*Rule {
	switch u.Type {
	case UpdateReplaceRules:
		cur = slices.DeleteFunc(cur, func(r *Rule) bool { return r.Behavior == u.Behavior && r.dest == u.Destination })
		return append(cur, rules...)
	case UpdateRemoveRules:
		return slices.DeleteFunc(cur, func(r *Rule) bool {
			return r.Behavior == u.Behavior && r.Invalid == "" && slices.ContainsFunc(rules, func(x *Rule) bool { return x.String() == r.String() })
		})
	}
	for _, r := range rules {
		if !slices.ContainsFunc(cur, func(x *Rule) bool { return x.Behavior == r.Behavior && x.String() == r.String() }) {
			cur = append(cur, r)
		}
	}
	return cur
}

// AddRules adds rules (written as in settings) with one behavior; see Apply.
func (c *Checker) AddRules(ctx context.Context, b Behavior, rules []string, dest Destination) error {
	u := RuleUpdate{Type: UpdateAddRules, Behavior: b, Destination: dest}
	for _, s := range rules {
		r, err := ParseRule(s)
		if err != nil {
			return err
		}
		u.Rules = append(u.Rules, ValueOf(r))
	}
	return c.Apply(ctx, u)
}

// SettingsPersister returns a Persist function that writes updates to
// Cohort's own settings files: localSettings to <project>/.cohort/
// settings.local.json, projectSettings to <project>/.cohort/settings.json,
// userSettings to $COHORT_HOME/settings.json (never to .claude files). The
// project is env.ProjectRoot(). Writes are atomic and locked.
func SettingsPersister(env settings.Env) func(context.Context, RuleUpdate) error {
	return func(ctx context.Context, u RuleUpdate) error {
		var path string
		switch u.Destination {
		case DestUser:
			path = filepath.Join(env.CohortHome, "settings.json")
		case DestProject:
			path = filepath.Join(env.ProjectRoot(), ".cohort", "settings.json")
		case DestLocal:
			path = filepath.Join(env.ProjectRoot(), ".cohort", "settings.local.json")
		default:
			return nil
		}
		return settings.Edit(ctx, path, func(d *settings.Document) error {
			perm, err := d.Object("permissions")
			if err != nil {
				return err
			}
			if err := persistInto(perm, u); err != nil {
				return err
			}
			return d.Set("permissions", perm)
		})
	}
}

func persistInto(perm *settings.Document, u RuleUpdate) error {
	edit := func(key string, fn func([]string) []string) error {
		list, err := perm.Strings(key)
		if err != nil {
			return err
		}
		return perm.Set(key, fn(list))
	}
	var texts []string
	for _, v := range u.Rules {
		texts = append(texts, v.String())
	}
	switch u.Type {
	case UpdateAddRules:
		return edit(string(u.Behavior), func(l []string) []string { return appendNew(l, texts) })
	case UpdateReplaceRules:
		return perm.Set(string(u.Behavior), texts)
	case UpdateRemoveRules:
		return edit(string(u.Behavior), func(l []string) []string {
			return slices.DeleteFunc(l, func(s string) bool { return slices.Contains(texts, s) })
		})
	case UpdateSetMode:
		return perm.Set("defaultMode", u.Mode)
	case UpdateAddDirectories:
		return edit("additionalDirectories", func(l []string) []string { return appendNew(l, u.Directories) })
	case UpdateRemoveDirectories:
		return edit("additionalDirectories", func(l []string) []string {
			return slices.DeleteFunc(l, func(s string) bool { return slices.Contains(u.Directories, s) })
		})
	}
	return nil
}

func appendNew(list, add []string) []string {
	for _, s := range add {
		if !slices.Contains(list, s) {
			list = append(list, s)
		}
	}
	if list == nil {
		list = []string{}
	}
	return list
}
