package assemble

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/dream"
	"github.com/cohort-dev/cohort/internal/proc"
	"github.com/cohort-dev/cohort/mcp"
	"github.com/cohort-dev/cohort/memory"
	"github.com/cohort-dev/cohort/sandbox"
	"github.com/cohort-dev/cohort/team"
	"github.com/cohort-dev/cohort/teammate"
	"github.com/cohort-dev/cohort/transcript"
)

// What a resolved plan's session would have, found without opening one:
// the listings of cohort agents, flags, doctor, mcp list, memory, sessions
// and teams.

// SandboxCheck is what the Bash sandbox enforces on this machine for the
// plan's session (cohort doctor).
type SandboxCheck struct {
	Problems     []string // in the settings' sandbox blocks
	Off          bool
	OffSource    string // the settings file that turned it off, if one did
	GroupSignals bool   // pidfd process-group signals (Linux 6.9)
	// Unavailable says why the sandbox cannot run here ("" when it can);
	// Notes are what it said while starting.
	Unavailable string
	Notes       []string
	Report      *sandbox.Report
	TempDir     string // where each session's private TMPDIR is made
	Writable    []string
	Protected   []string // read-only inside the writable directories
}

// CheckSandbox starts a launcher and sets up the policy the plan's session
// would get, and says what it enforces.
func CheckSandbox(ctx context.Context, p *Plan) (*SandboxCheck, error) {
	checker, err := p.newChecker()
	if err != nil {
		return nil, err
	}
	conf := p.sandboxConfig()
	on, err := p.sandboxOn(conf)
	if err != nil {
		return nil, err
	}
	c := &SandboxCheck{Problems: conf.problems, Off: !on, OffSource: conf.enabledSrc, GroupSignals: proc.GroupSignals()}
	cfg, _ := p.sandboxCfg(ctx, conf, checker, "doctor", "")
	sb, err := sandbox.New(cfg)
	if err != nil {
		c.Unavailable = err.Error()
		return c, nil
	}
	defer sb.Close()
	rep, err := sb.Report(ctx, p.Process.Cwd)
	c.Notes = sb.Problems()
	if err != nil {
		c.Unavailable = err.Error()
		return c, nil
	}
	c.Report, c.TempDir = rep, filepath.Dir(sb.TempDir())
	c.Writable, c.Protected = sb.Writable(p.Process.Cwd)
	return c, nil
}

// MCPServers connects to every server the plan's session would have and
// returns their states and tools.
func (p *Plan) MCPServers(ctx context.Context) []mcp.Status {
	specs := p.mcpSpecs()
	if len(specs) == 0 {
		return nil
	}
	o := p.mcpOptions()
	o.Warn = nil // the listing says it all
	sb := p.listSandbox(ctx)
	if sb != nil {
		defer sb.Close()
	}
	o.Launch, o.Confined = serverLaunch(sb, nil), sb != nil
	set := mcp.StartAll(ctx, specs, o)
	defer set.Close()
	return set.Statuses()
}

// listSandbox is the sandbox the servers a listing starts run in, as a
// session's would (nil when the session would have none): listing runs
// what the servers' definitions name, on files the model may have written.
func (p *Plan) listSandbox(ctx context.Context) *sandbox.Sandbox {
	checker, err := p.newChecker()
	if err != nil {
		return nil
	}
	conf := p.sandboxConfig()
	if on, err := p.sandboxOn(conf); err != nil || !on {
		return nil
	}
	cfg, _ := p.sandboxCfg(ctx, conf, checker, "mcp-list", "")
	sb, err := sandbox.New(cfg)
	if err != nil {
		return nil
	}
	return sb
}

// ApproveMCP records that the user approved the project's MCP servers
// names, as they are defined now (a changed definition asks again), and
// returns where.
func (p *Plan) ApproveMCP(ctx context.Context, names []string) (string, error) {
	known := map[string]mcp.Spec{}
	for _, s := range p.mcpSpecs() {
		if s.Scope == mcp.ScopeProject {
			known[s.Name] = s
		}
	}
	var specs []mcp.Spec
	for _, n := range names {
		s, ok := known[n]
		if !ok {
			return "", fieldErr("MCPConfig", "%q is not a project MCP server (.mcp.json); the project servers are: %s", n, strings.Join(slices.Sorted(maps.Keys(known)), ", "))
		}
		specs = append(specs, s)
	}
	return mcp.Approve(ctx, p.Process.ProjectRoot, specs)
}

// MemoryCheck is where the plan's session keeps the project's memory and
// its index as an agent would see it (cohort memory).
type MemoryCheck struct {
	Dir              string
	LastConsolidated time.Time // zero: never
	Index            memory.Index
	Found            bool // the index exists
}

// CheckMemory reads the project's memory directory (links resolved) and
// its index.
func (p *Plan) CheckMemory() (*MemoryCheck, error) {
	dir := memory.ProjectDir(p.Process.ProjectDir)
	if _, err := os.Lstat(dir); err == nil {
		if dir, err = memory.Prepare(p.Process.Paths.CohortHome, dir); err != nil {
			return nil, err
		}
	}
	c := &MemoryCheck{Dir: dir}
	if last, err := dream.LastConsolidated(dir); err == nil {
		c.LastConsolidated = last
	}
	ix, ok, err := memory.LoadIndex(dir, nil)
	if err != nil {
		return nil, err
	}
	c.Index, c.Found = ix, ok
	return c, nil
}

// Sessions lists the project's sessions, the most recently updated first,
// priced with the session's price table.
func (p *Plan) Sessions() ([]transcript.Summary, error) {
	prices, err := p.prices()
	if err != nil {
		return nil, err
	}
	return transcript.List(p.Process.ProjectDir, prices)
}

// teamStore is the store of the teams under Cohort's home.
func (p *Plan) teamStore() (*team.Store, error) {
	return team.NewStore(team.HomeConfig(p.Process.Paths.CohortHome))
}

// Teams lists every team under Cohort's home (teammate.Teams).
func (p *Plan) Teams() ([]teammate.TeamState, error) {
	store, err := p.teamStore()
	if err != nil {
		return nil, err
	}
	defer store.Close()
	return teammate.Teams(store)
}

// RemoveTeam removes an orphaned team (teammate.RemoveTeam).
func (p *Plan) RemoveTeam(ctx context.Context, name string, force bool) error {
	store, err := p.teamStore()
	if err != nil {
		return err
	}
	defer store.Close()
	return teammate.RemoveTeam(ctx, store, name, force)
}

// PruneTeams removes the orphaned teams whose teammates have all stopped
// (teammate.Prune).
func (p *Plan) PruneTeams(ctx context.Context) ([]string, error) {
	store, err := p.teamStore()
	if err != nil {
		return nil, err
	}
	defer store.Close()
	return teammate.Prune(ctx, store)
}
