package cohort

import (
	"cmp"
	"context"
	"time"

	"github.com/cohort-dev/cohort/internal/assemble"
	"github.com/cohort-dev/cohort/teammate"
	"github.com/cohort-dev/cohort/transcript"
)

// Inspection is what a session with a Config would have, found without
// starting one: its agent definitions, feature flags, sandbox, MCP
// servers, memory, sessions, saved workflows and teams (cohort agents,
// flags, doctor, mcp list, memory, sessions, workflow list, teams). It
// returns data; a front end formats it.
type Inspection struct {
	plan *assemble.Plan
}

// Inspect resolves cfg as New would — its directory, Cohort's home, the
// settings and the flags — without opening anything or writing under
// Home. Problems in the settings files are warnings on cfg.Stderr.
func Inspect(ctx context.Context, cfg Config) (*Inspection, error) {
	p := cfg.plan()
	if err := assemble.Resolve(ctx, p); err != nil {
		return nil, configError(err)
	}
	return &Inspection{plan: p}, nil
}

// Rewind rewinds a session's files with no session running (cohort rewind).
func (i *Inspection) Rewind(ctx context.Context, r RewindRequest) (*RewindReport, error) {
	return assemble.Rewind(ctx, i.plan, r)
}

// PruneCheckpoints removes what the checkpoints' retention setting does not keep.
func (i *Inspection) PruneCheckpoints(ctx context.Context) (string, error) {
	return assemble.PruneCheckpoints(ctx, i.plan)
}

// AgentDefinition is one agent definition as it loads: where it comes from
// and whether it is the one in force for its name.
type AgentDefinition struct {
	Name string
	// Source is where it is defined: built-in, user, project or cli.
	Source string
	// Model is its model ("" inherits the caller's).
	Model string
	// File is the file it comes from: "" for a built-in, "--agents" for one
	// of Config.Agents.
	File string
	// Active is whether it is the one in force; OverriddenBy is then
	// empty, else the file (or source) of the one in force.
	Active       bool
	OverriddenBy string
}

// Agents returns every agent definition, sorted by name with the one in
// force first; definitions that do not load are warnings on Stderr.
func (i *Inspection) Agents(ctx context.Context) []AgentDefinition {
	cat := i.plan.LoadCatalog(ctx, i.plan.KnownTools())
	var out []AgentDefinition
	for _, e := range cat.All() {
		d := e.Definition
		a := AgentDefinition{Name: d.Name, Source: d.Source.Level.String(), Model: d.Model, File: d.Source.Path, Active: e.Active}
		if !e.Active {
			a.OverriddenBy = cmp.Or(e.OverriddenBy.Path, e.OverriddenBy.Level.String())
		}
		out = append(out, a)
	}
	return out
}

// Flag is a feature flag: its value and where it was set ("default", a
// settings file, an environment variable, the Config), its default and
// what it does.
type Flag struct {
	Name, Value, Source, Default, Description string
}

// Flags returns every feature flag, sorted by name.
func (i *Inspection) Flags() []Flag {
	var out []Flag
	for _, v := range i.plan.Settings.Set.List() {
		out = append(out, Flag{Name: v.Name, Value: v.String(), Source: v.Source, Default: v.DefaultValue(), Description: v.Description})
	}
	return out
}

// SandboxReport is what the Bash sandbox enforces on this machine for the
// session (cohort doctor).
type SandboxReport struct {
	// Dir is the session's directory.
	Dir string
	// Problems are the settings' sandbox entries that do not apply.
	Problems []string
	// Off is whether the sandbox is off (OffSource: the settings file
	// that says so, when one does).
	Off       bool
	OffSource string
	// GroupSignals is whether the kernel signals process groups through
	// pidfds (Linux 6.9).
	GroupSignals bool
	// Unavailable says why the sandbox cannot run here ("" when it can);
	// nothing below is set then. Notes are what it said while starting.
	Unavailable string
	Notes       []string
	// Landlock is the Landlock ABI; Namespaces whether user, mount and
	// pid namespaces are available.
	Landlock   int
	Namespaces bool
	// TempDir is where each session's private TMPDIR is made.
	TempDir string
	// Writable are the directories Bash may write; Protected the paths
	// inside them that stay read-only.
	Writable, Protected []string
	// Enforcement is what is enforced and what is not, one line each.
	Enforcement string
}

// Sandbox starts a launcher and sets up the policy the session would get,
// and reports what it enforces.
func (i *Inspection) Sandbox(ctx context.Context) (*SandboxReport, error) {
	c, err := assemble.CheckSandbox(ctx, i.plan)
	if err != nil {
		return nil, configError(err)
	}
	r := &SandboxReport{Dir: i.plan.Process.Cwd, Problems: c.Problems, Off: c.Off, OffSource: c.OffSource,
		GroupSignals: c.GroupSignals, Unavailable: c.Unavailable, Notes: c.Notes, TempDir: c.TempDir,
		Writable: c.Writable, Protected: c.Protected}
	if c.Report != nil {
		r.Landlock, r.Namespaces, r.Enforcement = c.Report.Landlock, c.Report.Namespaces, c.Report.Describe()
	}
	return r, nil
}

// MCPServers connects to every MCP server the session would have and
// returns its state, where it is configured, its tools and why it failed
// (empty: none is configured).
func (i *Inspection) MCPServers(ctx context.Context) []MCPServer {
	return mcpServers(i.plan.MCPServers(ctx))
}

// ApproveMCP records that the user approved the project's MCP servers
// names (cohort mcp approve) and returns the file it wrote.
func ApproveMCP(ctx context.Context, cfg Config, names []string) (string, error) {
	i, err := Inspect(ctx, cfg)
	if err != nil {
		return "", err
	}
	path, err := i.plan.ApproveMCP(ctx, names)
	return path, configError(err)
}

// Memory is where the session keeps the project's memory, when it was last
// consolidated, and its index as agents see it.
type Memory struct {
	Dir string
	// LastConsolidated is zero when it never was.
	LastConsolidated time.Time
	// Index is the index file's path; Found whether it exists. Lines,
	// Bytes and Content are what it holds, Truncated whether agents see
	// it cut to the limits.
	Index        string
	Found        bool
	Lines, Bytes int
	Truncated    bool
	Content      string
}

// Memory reads the project's memory directory and its index.
func (i *Inspection) Memory() (*Memory, error) {
	c, err := i.plan.CheckMemory()
	if err != nil {
		return nil, err
	}
	return &Memory{Dir: c.Dir, LastConsolidated: c.LastConsolidated, Index: c.Index.Path, Found: c.Found,
		Lines: c.Index.Lines, Bytes: c.Index.Bytes, Truncated: c.Index.Truncated, Content: c.Index.Content}, nil
}

// SessionSummary is one session of a project as Sessions lists it: id,
// start and last change, the first prompt, the cost of all its agents.
type SessionSummary = transcript.Summary

// Sessions lists the project's sessions (their transcripts under Home),
// the most recently updated first. Their cost is priced with the
// session's price table (defaults and the settings' "prices").
func (i *Inspection) Sessions() ([]SessionSummary, error) {
	list, err := i.plan.Sessions()
	return list, configError(err)
}

// Workflows lists the saved workflows the session would find
// (.claude/workflows and .cohort/workflows below its directory, the
// project root and the home directory), with why any fails to load. It
// asks the cohort-workflow program, which loads them.
func (i *Inspection) Workflows(ctx context.Context) ([]SavedWorkflow, error) {
	saved, err := i.plan.SavedWorkflows(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]SavedWorkflow, 0, len(saved))
	for _, sv := range saved {
		w := SavedWorkflow{Name: sv.Name, Path: sv.Path, Err: sv.Error}
		if sv.Meta != nil {
			w.Description = sv.Meta.Description
		}
		out = append(out, w)
	}
	return out, nil
}

// TeamState is one team under $COHORT_HOME/teams as `cohort teams` lists
// it: who leads it (a running session, or nobody: orphaned), its members
// and whether their processes still run.
type TeamState = teammate.TeamState

// Teams lists every team under Home, sorted by name; a team whose file
// cannot be read is listed with its Problem, never skipped.
func (i *Inspection) Teams() ([]TeamState, error) { return i.plan.Teams() }

// RemoveTeam removes an orphaned team (one no running session leads); with
// force, also while some of its teammates still run.
func RemoveTeam(ctx context.Context, cfg Config, name string, force bool) error {
	i, err := Inspect(ctx, cfg)
	if err != nil {
		return err
	}
	return i.plan.RemoveTeam(ctx, name, force)
}

// PruneTeams removes every orphaned team whose teammates have all stopped
// and returns their names.
func PruneTeams(ctx context.Context, cfg Config) ([]string, error) {
	i, err := Inspect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return i.plan.PruneTeams(ctx)
}
