package assemble

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/flags"
	"github.com/cohort-dev/cohort/internal/configtrust"
	"github.com/cohort-dev/cohort/internal/ownread"
	"github.com/cohort-dev/cohort/settings"
	"github.com/cohort-dev/cohort/transcript"
	"github.com/cohort-dev/cohort/worktree"
)

// FieldError is a plan that cannot work: Field names the Config field the
// value came from, and the message says what is wrong and what to do
// (naming Config fields as Config.Name). Package cohort returns it as its
// ConfigError.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Err: fmt.Errorf(format, args...)}
}

// Resolve completes p from the process, the settings files and the
// feature flags: the working directory and Cohort's paths, the settings
// and the flags. It writes nothing; problems in the files are warnings on
// Stderr, and what cannot work is a *FieldError. ResolveSession then
// chooses the session's id, for a plan that is to be opened.
func Resolve(ctx context.Context, p *Plan) error {
	p.defaults()
	if err := p.resolvePaths(ctx); err != nil {
		return err
	}
	p.Settings.Loaded = settings.Load(p.Process.Paths)
	if err := p.addSettings(p.Settings.Layers); err != nil {
		return err
	}
	for _, prob := range p.Settings.Loaded.Problems {
		fmt.Fprintf(p.Process.Stderr, "cohort: warning: %v\n", prob)
	}
	set, err := p.resolveFlags()
	if err != nil {
		return &FieldError{Field: "Flags", Err: err}
	}
	p.Settings.Set = set
	return nil
}

// ResolveSession chooses the session's id: a teammate's lead's, the one to
// resume or continue (or its fork's), or a new one. It writes nothing.
func ResolveSession(p *Plan) error {
	sp := &p.Session
	switch {
	case sp.Teammate != nil:
		sp.ID = sp.Teammate.LeadSession
	case sp.Resume != "":
		sp.ID = sp.Resume
	case sp.Continue:
		id, err := transcript.Latest(p.Process.ProjectDir)
		if err != nil {
			return fieldErr("Continue", "Config.Continue: no earlier session in this project (%s)", p.Process.ProjectDir)
		}
		sp.ID = id
	default:
		sp.ID = sp.NewID
		if sp.ID != "" {
			if _, err := os.Stat(transcript.Path(p.Process.ProjectDir, sp.ID)); err == nil {
				return fieldErr("SessionID", "session %s exists already in this project; resume it (Config.Resume) or choose another id", sp.ID)
			}
		}
	}
	if sp.Fork && (sp.Resume != "" || sp.Continue) {
		sp.ForkFrom, sp.ID = sp.ID, sp.NewID
	}
	if sp.ID == "" {
		sp.ID = transcript.NewID()
	}
	return nil
}

// defaults fills in the process's functions: the environment with Env
// over it, and os's where the plan has none.
func (p *Plan) defaults() {
	pr := &p.Process
	if pr.Getenv == nil {
		pr.Getenv = os.Getenv
	}
	if pr.Environ == nil {
		pr.Environ = os.Environ
	}
	if pr.Getwd == nil {
		pr.Getwd = os.Getwd
	}
	if pr.Stderr == nil {
		pr.Stderr = os.Stderr
	}
	if len(pr.Env) == 0 {
		return
	}
	over, getenv, environ := maps.Clone(pr.Env), pr.Getenv, pr.Environ
	pr.Getenv = func(k string) string {
		if v, ok := over[k]; ok {
			return v
		}
		return getenv(k)
	}
	pr.Environ = func() []string { return overlay(environ(), over) }
}

// overlay is environ with the variables of over set (replacing theirs).
func overlay(environ []string, over map[string]string) []string {
	out := make([]string, 0, len(environ)+len(over))
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if _, ok := over[k]; !ok {
			out = append(out, kv)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(over)) {
		out = append(out, k+"="+over[k])
	}
	return out
}

// childEnviron is the environment of the programs the session starts
// (hooks, MCP servers, git, a private tmux server): the process's, with
// COHORT_HOME set to the session's home when the program chose one, so
// that a cohort they run finds the same state.
func (p *Plan) childEnviron() []string {
	if p.Process.Home == "" {
		return p.Process.Environ()
	}
	return overlay(p.Process.Environ(), map[string]string{"COHORT_HOME": p.Process.Paths.CohortHome})
}

// resolvePaths finds the working directory, the homes and the project.
func (p *Plan) resolvePaths(ctx context.Context) error {
	pr := &p.Process
	cwd := pr.Dir
	if cwd == "" {
		wd, err := pr.Getwd()
		if err != nil {
			return fmt.Errorf("working directory: %w", err)
		}
		cwd = wd
	}
	cwd, err := filepath.Abs(cwd)
	if err != nil {
		return err
	}
	if fi, err := os.Stat(cwd); err != nil || !fi.IsDir() {
		return fieldErr("Dir", "%s is not a directory; give the project directory (Config.Dir)", cwd)
	}
	getenv := pr.Getenv
	if pr.Home != "" {
		getenv = func(k string) string { // the program chose the home: the process's is not read
			if k == "COHORT_HOME" {
				return ""
			}
			return pr.Getenv(k)
		}
	}
	env, err := settings.NewEnv(getenv, cwd)
	if err != nil {
		return fieldErr("Home", "%v", err)
	}
	if pr.Home != "" {
		if !filepath.IsAbs(pr.Home) {
			return fieldErr("Home", "Config.Home %q is not an absolute path", pr.Home)
		}
		env.CohortHome = filepath.Clean(pr.Home)
	}
	env.Trust = configtrust.Open(configtrust.At(env.CohortHome, getenv))
	if p.Settings.Sources != nil {
		env.Scopes = []settings.Scope{}
		for _, src := range p.Settings.Sources {
			env.Scopes = append(env.Scopes, settings.Scope(src))
		}
	}
	pr.Cwd, pr.Paths, pr.ProjectRoot = cwd, env, cwd
	if pr.InGit = worktree.MayBeRepository(cwd); pr.InGit {
		if root, err := worktree.RepoRoot(ctx, cwd); err == nil {
			pr.ProjectRoot = root
		}
	}
	pr.ProjectDir = transcript.ProjectDir(env.CohortHome, worktree.ProjectSlug(pr.ProjectRoot))
	return nil
}

// addSettings adds the settings layers over the files: JSON text, or a
// settings file's path.
func (p *Plan) addSettings(layers []string) error {
	for i, l := range layers {
		t := strings.TrimSpace(l)
		label, root, data := fmt.Sprintf("Config.Settings[%d]", i), p.Process.Cwd, []byte(t)
		if !strings.HasPrefix(t, "{") {
			path := t
			if !filepath.IsAbs(path) {
				path = filepath.Join(p.Process.Cwd, path)
			}
			var err error
			if data, err = ownread.Config(path, 0); err != nil {
				return fieldErr("Settings", "settings layer %d: %v (give a JSON object or the path of a settings file)", i, err)
			}
			label, root = path, filepath.Dir(path)
		}
		if src := p.Settings.Loaded.Add(settings.ScopeCLI, label, root, data); src.Broken {
			prob := p.Settings.Loaded.Problems[len(p.Settings.Loaded.Problems)-1]
			return fieldErr("Settings", "settings layer %d: %v", i, prob)
		}
	}
	return nil
}

// resolveFlags resolves the feature flags from the settings' "flags", the
// environment and the plan's.
func (p *Plan) resolveFlags() (*flags.Set, error) {
	var fs []flags.Settings
	for _, sec := range p.Settings.Loaded.Section("flags") {
		var m map[string]any
		if err := json.Unmarshal(sec.Value, &m); err != nil {
			return nil, fmt.Errorf("%s:%d: \"flags\" must be an object of flag names to values: %v", sec.Source.Path, sec.Line, err)
		}
		fs = append(fs, flags.Settings{Path: sec.Source.Path, Flags: m})
	}
	return flags.Resolve(flags.Config{Settings: fs, Environ: p.Process.Environ(), CLI: p.Settings.Flags})
}

// settingString returns the highest-precedence string value of key.
func (p *Plan) settingString(key string) string {
	secs := p.Settings.Loaded.Section(key)
	for i := len(secs) - 1; i >= 0; i-- {
		var s string
		if json.Unmarshal(secs[i].Value, &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// settingBool returns the highest-precedence boolean value of key.
func (p *Plan) settingBool(key string) bool {
	secs := p.Settings.Loaded.Section(key)
	for i := len(secs) - 1; i >= 0; i-- {
		var v bool
		if json.Unmarshal(secs[i].Value, &v) == nil {
			return v
		}
	}
	return false
}

// LoadCatalog loads the agent definitions into p.Agents.Catalog; problems
// are warnings on Stderr. known are the tool names definitions may name.
func (p *Plan) LoadCatalog(ctx context.Context, known []string) *agentdef.Catalog {
	pr := &p.Process
	cat, warns, errs := agentdef.Load(ctx, agentdef.LoadConfig{
		Cwd: pr.Cwd, ProjectRoot: pr.ProjectRoot, CohortHome: pr.Paths.CohortHome, Home: pr.Paths.Home,
		ClaudeCompat: pr.Paths.ClaudeCompat, CLIJSON: p.Agents.Definitions, KnownTools: known, Flags: p.Settings.Set,
		Trust: pr.Paths.Trust,
	})
	for _, w := range warns {
		fmt.Fprintf(pr.Stderr, "cohort: warning: %v\n", w)
	}
	for _, e := range errs {
		fmt.Fprintf(pr.Stderr, "cohort: error: %v (the other agent definitions still load)\n", e)
	}
	p.Agents.Catalog = cat
	return cat
}

// KnownTools are the tool names agent definitions may name: Cohort's and
// the plan's.
func (p *Plan) KnownTools() []string {
	known := slices.Clone(agentdef.CohortTools)
	for _, t := range p.Tools.Extra {
		known = append(known, t.Def().Name)
	}
	return known
}
