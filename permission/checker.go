package permission

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cohort-dev/cohort/internal/heldir"
	"github.com/cohort-dev/cohort/settings"
)

// Config builds a Checker.
type Config struct {
	// Env gives the session's working directory, home and $COHORT_HOME.
	Env settings.Env
	// Settings are the loaded settings files (nil for none).
	Settings *settings.Settings
	// Mode is --permission-mode; empty means the settings' defaultMode, or
	// default.
	Mode Mode
	// Allow, Deny and Ask are rules from the command line
	// (--allowedTools, --disallowedTools), already split with SplitRules.
	Allow, Deny, Ask []string
	// AdditionalDirs are extra working directories from the command line.
	AdditionalDirs []string
	// Persist writes a rule update to its settings file (see
	// SettingsPersister); nil keeps updates in memory.
	Persist func(context.Context, RuleUpdate) error
	// Protected are more files that count as protected paths (editing
	// them asks in every mode): the scripts configured hooks run
	// (hook.Set.Scripts), which would run rewritten code outside every
	// check. The directory holding each is protected too, so that a
	// helper the script sources cannot be rewritten in its place, unless
	// it is a working directory itself: then the script alone is, as the
	// sandbox does (a working directory cannot be read-only whole).
	Protected []string
	// Unsandboxed is sandbox.allowUnsandboxedCommands: what a Bash call
	// with dangerouslyDisableSandbox gets.
	Unsandboxed Unsandboxed
}

// Unsandboxed says what a Bash call asking to run outside the sandbox
// (dangerouslyDisableSandbox) gets, after Claude Code's
// sandbox.allowUnsandboxedCommands.
type Unsandboxed int

const (
	// UnsandboxedAsk (the setting absent): a person decides, in every
	// mode, bypassPermissions included; print mode refuses it.
	UnsandboxedAsk Unsandboxed = iota
	// UnsandboxedIgnored (false): the flag is ignored; the call is
	// decided, and runs, as a sandboxed one.
	UnsandboxedIgnored
	// UnsandboxedAllowed (true), as Claude Code: the call asks even when
	// a rule or the analysis would allow it sandboxed, except in
	// bypassPermissions mode.
	UnsandboxedAllowed
)

// Checker decides whether a tool call may run. It is safe for concurrent
// use. Children made with ForChild share the parent's rules and working
// directories (an "always allow" answered for one agent holds for all) but
// have their own mode.
type Checker struct {
	sh   *shared
	mu   sync.RWMutex
	mode Mode
	// own are the files this checker's agent may read without asking
	// (AllowOwnRead); a child's checker starts without any.
	own ownReads
}

// shared is the state every checker of a session sees.
type shared struct {
	home, cohortHome, cwd string
	protectedFiles        map[string]bool
	protectedDirs         []string
	unsandboxed           Unsandboxed
	persist               func(context.Context, RuleUpdate) error
	bypassDisabled        bool
	// ceiling is the highest mode any checker sharing this state may take
	// ("" for none; SetCeiling).
	ceiling atomic.Value // Mode
	// degraded lists settings files whose deny rules may be missing; while
	// it is non-empty nothing is auto-allowed.
	degraded []string
	problems []error

	mu    sync.RWMutex
	rules []*Rule
	dirs  []workDir
	// memory are the memory directories (AddMemoryDir): file tools read and
	// write inside them without asking, in every mode but plan (reads in
	// plan too).
	memory []workDir
	// hidden are directories no tool may read (HideFromReads).
	hidden []string
	// secrets are Cohort's private directories (HideSecrets): no tool may
	// read them, whatever the rules say.
	secrets []string
}

// workDir is a working directory in its written and resolved forms.
type workDir struct {
	path, resolved string
}

// New builds a Checker. Invalid rules and modes in settings files are not
// errors: they are reported by Problems and handled failing closed (an
// invalid deny rule denies every call of its tool; an invalid ask rule asks
// for every call of its tool; an invalid allow rule is dropped). Invalid
// command-line rules or mode are errors, as is bypassPermissions when a
// settings file disables it.
func New(cfg Config) (*Checker, error) {
	env := cfg.Env
	if !filepath.IsAbs(env.Cwd) || !filepath.IsAbs(env.Home) {
		return nil, fmt.Errorf("permission: working directory %q and home %q must be absolute", env.Cwd, env.Home)
	}
	sh := &shared{home: filepath.Clean(env.Home), cwd: filepath.Clean(env.Cwd), persist: cfg.Persist, unsandboxed: cfg.Unsandboxed}
	if env.CohortHome != "" {
		sh.cohortHome = filepath.Clean(env.CohortHome)
	}
	sh.addDir(sh.cwd)
	sh.protectedFiles = map[string]bool{}
	for _, p := range cfg.Protected {
		if filepath.IsAbs(p) {
			p = filepath.Clean(p)
			sh.protectedFiles[p] = true
			if r, err := resolvePath(p); err == nil {
				sh.protectedFiles[r] = true
			}
			sh.protectedDirs = append(sh.protectedDirs, filepath.Dir(p))
		}
	}
	mode := ModeDefault
	if cfg.Settings != nil {
		mode = sh.loadSettings(cfg.Settings)
	}
	var errs []error
	for _, list := range []struct {
		b     Behavior
		flag  string
		rules []string
	}{{Allow, "--allowedTools", cfg.Allow}, {Deny, "--disallowedTools", cfg.Deny}, {Ask, "command line", cfg.Ask}} {
		for _, text := range list.rules {
			r, err := ParseRule(text)
			if err != nil {
				var re *RuleError
				errors.As(err, &re)
				re.Source = list.flag
				errs = append(errs, re)
				continue
			}
			r.Behavior, r.Source, r.Root, r.dest = list.b, list.flag, sh.cwd, DestCLI
			sh.rules = append(sh.rules, r)
		}
	}
	for _, d := range cfg.AdditionalDirs {
		sh.addDir(expandDir(d, sh.home, sh.cwd))
	}
	sh.keepScriptDirsBelowRoots()
	if cfg.Mode != "" {
		if !cfg.Mode.Valid() || cfg.Mode == ModeBubble {
			_, err := ParseMode(string(cfg.Mode))
			errs = append(errs, err)
		}
		mode = cfg.Mode
	}
	if mode == ModeBypassPermissions && sh.bypassDisabled {
		if cfg.Mode == ModeBypassPermissions {
			errs = append(errs, errors.New("bypassPermissions mode is disabled by disableBypassPermissionsMode in settings"))
		}
		mode = ModeDefault
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &Checker{sh: sh, mode: mode}, nil
}

// loadSettings adds the rules, directories and mode of every settings
// source and returns the mode they select.
func (sh *shared) loadSettings(s *settings.Settings) Mode {
	mode := ModeDefault
	for _, sp := range s.Permissions() {
		src, p := sp.Source, sp.Value
		if p.Incomplete {
			sh.degraded = append(sh.degraded, src.Path)
		}
		if p.DisableBypass {
			sh.bypassDisabled = true
		}
		dest := destOfScope(src.Scope)
		for _, list := range []struct {
			b     Behavior
			rules []settings.Text
		}{{Deny, p.Deny}, {Ask, p.Ask}, {Allow, p.Allow}} {
			for _, t := range list.rules {
				sh.addSettingsRule(list.b, t, src, dest)
			}
		}
		for _, d := range p.AdditionalDirectories {
			if src.Approved {
				sh.problems = append(sh.problems, approvedNotApplied(src, d, "permissions.additionalDirectories", "a directory it names would become writable to agents' file tools and commands"))
				continue
			}
			sh.addDir(expandDir(d.Value, sh.home, src.Root))
		}
		if v := p.DefaultMode; v.Value != "" {
			m, err := settingsMode(v.Value)
			if err != nil {
				sh.problems = append(sh.problems, fmt.Errorf("%s:%d:%d: permissions.defaultMode: %v", src.Path, v.Line, v.Col, err))
			}
			if src.Approved && m == ModeBypassPermissions {
				sh.problems = append(sh.problems, approvedNotApplied(src, v, "permissions.defaultMode", "bypassPermissions is the mode in which sandbox.allowUnsandboxedCommands true lets commands run outside the sandbox with no one asked"))
				continue
			}
			mode = m
		}
	}
	if mode == ModeBypassPermissions && sh.bypassDisabled {
		sh.problems = append(sh.problems, errors.New("permissions.defaultMode is bypassPermissions but disableBypassPermissionsMode is set; using default"))
	}
	return mode
}

func (sh *shared) addSettingsRule(b Behavior, t settings.Text, src *settings.Source, dest Destination) {
	r, err := ParseRule(t.Value)
	if err == nil {
		r.Behavior, r.Source, r.Line, r.Col, r.Root, r.dest, r.ByApproval = b, src.Path, t.Line, t.Col, src.Root, dest, src.Approved
		sh.rules = append(sh.rules, r)
		if r.ByApproval && b == Allow {
			sh.noteApprovedAllow(r, src, t)
		}
		return
	}
	var re *RuleError
	errors.As(err, &re)
	re.Source, re.Line, re.Col = src.Path, t.Line, t.Col
	if b == Allow {
		sh.problems = append(sh.problems, fmt.Errorf("%w (the rule is ignored)", re))
		return
	}
	// Fail closed for the tool the rule is about: the broken rule still
	// covers the whole tool. A rule whose tool name cannot be read names no
	// tool; Claude Code ignores it, and so does Cohort (denying every call
	// over one typo would stop the agent altogether).
	tool, ok := toolOf(t.Value)
	if !ok {
		sh.problems = append(sh.problems, fmt.Errorf("%w (the rule names no tool that can be read, so it is ignored, as Claude Code ignores it)", re))
		return
	}
	verb := map[Behavior]string{Deny: "denies", Ask: "asks for"}[b]
	sh.problems = append(sh.problems, fmt.Errorf("%w (until it is fixed, Cohort %s every call of %s)", re, verb, tool))
	sh.rules = append(sh.rules, &Rule{Tool: tool, Behavior: b, Source: src.Path, Line: t.Line, Col: t.Col, Invalid: t.Value, dest: dest})
}

// toolOf extracts the tool name of an invalid rule; ok is false when even
// that is unreadable.
func toolOf(text string) (name string, ok bool) {
	name = strings.TrimSpace(text)
	if i := strings.IndexByte(name, '('); i >= 0 {
		name = name[:i]
	}
	if checkToolName(name) != "" {
		return "", false
	}
	if name == "Task" {
		return "Agent", true
	}
	return name, true
}

// expandDir makes a configured directory absolute: "~/" is home, relative
// paths are relative to base.
func expandDir(d, home, base string) string {
	switch {
	case d == "~" || strings.HasPrefix(d, "~/"):
		return filepath.Join(home, strings.TrimPrefix(d, "~"))
	case filepath.IsAbs(d):
		return filepath.Clean(d)
	}
	return filepath.Join(base, d)
}

func (sh *shared) addDir(d string) {
	res, err := resolvePath(d)
	if err != nil {
		res = d
	}
	for _, w := range sh.dirs {
		if w.path == d {
			return
		}
	}
	sh.dirs = append(sh.dirs, workDir{path: d, resolved: res})
}

// Unsandboxed returns what a Bash call with dangerouslyDisableSandbox
// gets (Config.Unsandboxed).
func (c *Checker) Unsandboxed() Unsandboxed { return c.sh.unsandboxed }

// Problems returns what was wrong with the settings' rules and modes, for
// the caller to show as warnings.
func (c *Checker) Problems() []error { return append([]error(nil), c.sh.problems...) }

// Mode returns the current mode.
func (c *Checker) Mode() Mode {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.mode
}

// SetMode changes this checker's mode (EnterPlanMode, the mode switch in
// the UI). Children already made keep theirs.
func (c *Checker) SetMode(m Mode) error {
	if !m.Valid() {
		_, err := ParseMode(string(m))
		return err
	}
	if m == ModeBypassPermissions && c.sh.bypassDisabled {
		return errors.New("bypassPermissions mode is disabled by disableBypassPermissionsMode in settings")
	}
	m = c.sh.capped(m)
	c.mu.Lock()
	c.mode = m
	c.mu.Unlock()
	return nil
}

// ForChild returns the checker for a subagent whose definition asks for
// mode def ("" for none). The child inherits the parent's mode unless the
// definition sets one; a parent in bypassPermissions or acceptEdits keeps
// its mode regardless. Rules and working directories are shared, so they
// apply at every depth.
func (c *Checker) ForChild(def Mode) *Checker {
	parent := c.Mode()
	m := parent
	if parent != ModeBypassPermissions && parent != ModeAcceptEdits && def != "" && def.Valid() {
		m = def
	}
	if m == ModeBypassPermissions && c.sh.bypassDisabled {
		m = ModeDefault
	}
	return &Checker{sh: c.sh, mode: c.sh.capped(m)}
}

// SetCeiling makes limit the highest mode this checker, its children and
// every checker sharing its rules may take from now on: a mode set later
// (SetMode, a permission update, a child's definition) that exceeds it is
// lowered to it, and so is the present mode. A worker sets its policy's
// ceiling on a teammate it runs, whose mode a message could try to raise.
// A ceiling, once set, is only lowered.
func (c *Checker) SetCeiling(limit Mode) error {
	if _, err := ParseMode(string(limit)); err != nil {
		return err
	}
	if cur, ok := c.sh.ceiling.Load().(Mode); ok && limit.Exceeds(cur) {
		limit = cur
	}
	c.sh.ceiling.Store(limit)
	c.mu.Lock()
	c.mode = c.sh.capped(c.mode)
	c.mu.Unlock()
	return nil
}

// capped is m lowered to the ceiling, if it exceeds it.
func (sh *shared) capped(m Mode) Mode {
	if limit, ok := sh.ceiling.Load().(Mode); ok && m.Exceeds(limit) {
		return limit
	}
	return m
}

// AddMemoryDir makes dir a memory directory of the session (the project's
// memory, an agent definition's memory): Read, Write, Edit and the other
// file tools may use paths inside it without asking in every mode but
// plan, where only reads run. Deny and ask rules still decide first, and
// dir does not become a working directory (Bash read-only commands and
// acceptEdits do not reach it). dir must be absolute; it is resolved now,
// so that a link planted inside it later cannot widen it.
func (c *Checker) AddMemoryDir(dir string) {
	if !filepath.IsAbs(dir) {
		return
	}
	dir = filepath.Clean(dir)
	res, err := resolvePath(dir)
	if err != nil {
		res = dir
	}
	c.sh.mu.Lock()
	defer c.sh.mu.Unlock()
	for _, d := range c.sh.memory {
		if d.resolved == res {
			return
		}
	}
	c.sh.memory = append(c.sh.memory, workDir{path: dir, resolved: res})
}

// AllowOwnRead lets this checker's agent read the file at path — the
// output file of one of its own tasks, which Cohort names under
// $COHORT_HOME — with the built-in read tools (Read, Glob, Grep, LS)
// without asking, in every mode. Only this agent: children, siblings and
// other sessions keep asking. path must be absolute; it is resolved now,
// and a later read is let through only when it names the same path and
// that path still resolves to the same file, so that a path which merely
// leads there (through "..", or a link planted elsewhere) or a file
// swapped for a link since does not count. Deny and ask rules decide
// first. Safe for concurrent use.
func (c *Checker) AllowOwnRead(path string) {
	if !filepath.IsAbs(path) {
		return
	}
	lit := filepath.Clean(path)
	res, err := resolvePath(lit)
	if err != nil {
		return
	}
	c.own.mu.Lock()
	defer c.own.mu.Unlock()
	if c.own.files == nil {
		c.own.files = map[string]string{}
	}
	c.own.files[lit] = res
}

// ownReads are the files an agent may read without asking: the literal
// path and what it resolved to when it was allowed.
type ownReads struct {
	mu    sync.RWMutex
	files map[string]string
}

// covers reports whether every form names an allowed file as allowed (at
// least one form).
func (o *ownReads) covers(forms []pathForms) bool {
	o.mu.RLock()
	defer o.mu.RUnlock()
	if len(forms) == 0 || len(o.files) == 0 {
		return false
	}
	for _, f := range forms {
		if res, ok := o.files[f.literal]; !ok || res != f.resolved {
			return false
		}
	}
	return true
}

// WorkingDirs returns the working directories (the session's cwd first).
func (c *Checker) WorkingDirs() []string {
	c.sh.mu.RLock()
	defer c.sh.mu.RUnlock()
	out := make([]string, len(c.sh.dirs))
	for i, d := range c.sh.dirs {
		out[i] = d.path
	}
	return out
}

// DeniedWhole reports whether a deny rule without a specifier names tool
// (an MCP tool: also its server, or a prefix of its name): no call of it
// can run, and Claude Code does not offer such a tool to the model. A
// rule that did not parse, though it denies, names no tool here.
func (c *Checker) DeniedWhole(tool string) bool {
	for _, r := range c.sh.snapshot() {
		if r.Behavior == Deny && r.Specifier == "" && r.Invalid == "" &&
			(r.Tool == tool || strings.HasPrefix(r.Tool, "mcp__") && mcpCovers(r.Tool, tool)) {
			return true
		}
	}
	return false
}

// Rules returns the rules with the given behavior, in evaluation order.
func (c *Checker) Rules(b Behavior) []*Rule {
	var out []*Rule
	for _, r := range c.sh.snapshot() {
		if r.Behavior == b {
			out = append(out, r)
		}
	}
	return out
}

func (sh *shared) snapshot() []*Rule {
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	return append([]*Rule(nil), sh.rules...)
}

func (sh *shared) dirSnapshot() []workDir {
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	return append([]workDir(nil), sh.dirs...)
}

// inMemory reports whether every resolved path is inside a memory
// directory (and there is at least one path).
func (sh *shared) inMemory(forms []pathForms) bool {
	sh.mu.RLock()
	defer sh.mu.RUnlock()
	if len(forms) == 0 || len(sh.memory) == 0 {
		return false
	}
	for _, f := range forms {
		in := false
		for _, d := range sh.memory {
			if within(f.resolved, d.resolved) {
				in = true
				break
			}
		}
		if !in {
			return false
		}
	}
	return true
}

// ProtectedFile reports whether path (absolute) is one of the files
// configured as protected (Config.Protected: the scripts hooks run) or in
// the directory of one. With ProtectedPath it is the whole protected-path
// rule for files outside $COHORT_HOME.
func (c *Checker) ProtectedFile(path string) bool {
	path = filepath.Clean(path)
	if c.sh.protectedFiles[path] {
		return true
	}
	for _, d := range c.sh.protectedDirs {
		if within(path, d) {
			return true
		}
	}
	return false
}

// Protected reports whether a path (absolute; judged as written and with
// its links resolved) is a protected path: git control files, settings,
// agent definitions, .mcp.json, the scripts hooks run and their
// directories, $COHORT_HOME outside the memory directories. Writing one
// needs a person or an allow rule naming it, in every mode (tool.Access).
// Safe for concurrent use.
func (c *Checker) Protected(path string) bool {
	e := &evaluation{sh: c.sh}
	if !filepath.IsAbs(path) {
		return true
	}
	r, err := resolvePath(path)
	if err != nil {
		return true
	}
	if c.sh.inMemory([]pathForms{{literal: filepath.Clean(path), resolved: r}}) {
		return false // a memory directory is the agents' to write, as in Check
	}
	return e.protected(filepath.Clean(path)) || e.protected(r)
}

// WriteRoots returns the directories an agent working in cwd may write
// without a person or a rule (tool.Access): cwd, the working directories,
// and the memory directories, resolved. A cwd held since an Agent call's
// check (package internal/heldir) is its held path, which the file tools
// open through the hold. Safe for concurrent use.
func (c *Checker) WriteRoots(cwd string) []string {
	var out []string
	add := func(d string) {
		if r, err := resolvePath(d); err == nil {
			d = r
		}
		for _, o := range out {
			if o == d {
				return
			}
		}
		out = append(out, d)
	}
	if d := heldir.Lookup(cwd); d != nil {
		out = append(out, d.Path()) // held since it was checked: not resolved by name again
	} else if filepath.IsAbs(cwd) {
		add(filepath.Clean(cwd))
	}
	c.sh.mu.RLock()
	defer c.sh.mu.RUnlock()
	for _, d := range c.sh.dirs {
		add(d.resolved)
	}
	for _, d := range c.sh.memory {
		add(d.resolved)
	}
	return out
}
