package assemble

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/cohort-dev/cohort/team"
	"github.com/cohort-dev/cohort/teammate"
	"github.com/cohort-dev/cohort/tmux"
)

// processBackend returns the tmux backend when teammates should run as
// separate processes: inside tmux with mode auto, or with mode tmux (a
// private tmux server when we are not inside one). Nil means in-process.
func (s *Session) processBackend() teammate.ProcessBackend {
	wanted := s.teammateBackend() == teammate.BackendTmux
	for _, b := range s.Team.Backends {
		wanted = wanted || b == teammate.BackendTmux
	}
	if !wanted {
		return nil
	}
	b := &tmuxBackend{s: s}
	s.closers = append(s.closers, b.removeConfigs)
	return b
}

// tmuxBackend starts teammates as `cohort teammate` processes in tmux panes.
type tmuxBackend struct {
	s    *Session
	once sync.Once
	srv  *tmux.Server
	err  error

	mu    sync.Mutex
	files []string // teammates' configuration files
}

// server opens the user's tmux server (inside tmux) or starts a private one,
// once.
func (b *tmuxBackend) server(ctx context.Context) (*tmux.Server, error) {
	b.once.Do(func() {
		s := b.s
		if _, err := tmux.Available(ctx); err != nil {
			b.err = fmt.Errorf("the tmux teammate backend needs tmux: %w (or run teammates in-process: Config.TeammateMode)", err)
			return
		}
		if tmux.Inside(s.Process.Getenv) {
			b.srv, b.err = tmux.Current(ctx, s.Process.Getenv)
			return
		}
		dir := filepath.Join(s.Process.Paths.CohortHome, "tmux")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			b.err = err
			return
		}
		b.srv, b.err = tmux.StartServer(ctx, tmux.ServerConfig{Socket: filepath.Join(dir, s.id[:8]+".sock"),
			Session: "cohort-" + s.id[:8], Env: s.childEnviron()})
		if b.err == nil {
			srv := b.srv
			s.closers = append(s.closers, func() {
				cctx, cancel := context.WithTimeout(context.Background(), stopWaitCLI)
				defer cancel()
				_ = srv.Close(cctx)
			})
		}
	})
	return b.srv, b.err
}

// Spawn runs `cohort teammate FILE` for m in a new pane. FILE is the
// teammate's configuration (Plan.Team.Configure: what it inherits from
// this session, its place in the team, and the credentials it needs) in a
// file of mode 0600 under Cohort's home, which the teammate reads and
// removes: nothing of it is on a command line. The pane's environment
// carries only HOME and PATH.
func (b *tmuxBackend) Spawn(ctx context.Context, teamName string, m team.Member, siblings string) (string, error) {
	srv, err := b.server(ctx)
	if err != nil {
		return "", err
	}
	s := b.s
	bin := s.Team.Command
	if bin == "" {
		bin = s.Process.Getenv("COHORT_TEAMMATE_BIN")
	}
	if bin == "" {
		if bin, err = os.Executable(); err != nil {
			return "", fmt.Errorf("find the cohort executable: %w", err)
		}
	}
	path, err := b.writeConfig(Membership{Team: teamName, Name: m.Name, LeadSession: s.id, Siblings: siblings})
	if err != nil {
		return "", err
	}
	env := map[string]string{}
	for _, k := range []string{"HOME", "PATH"} {
		if v := s.Process.Getenv(k); v != "" {
			env[k] = v
		}
	}
	pane, err := srv.SplitPane(ctx, tmux.PaneSpec{Argv: []string{bin, "teammate", path}, Env: env, Cwd: m.Cwd,
		Title: fmt.Sprintf("%s · %s", m.Name, teamName), Layout: tmux.Tiled})
	if err != nil {
		_ = os.Remove(path)
		return "", err
	}
	return pane.ID, nil
}

// childVars are the variables of the session's environment a teammate
// process gets in its configuration: the providers' credentials and
// addresses, and whether Claude Code's files are read. Feature flags
// (COHORT_FLAG_*) go too.
var childVars = []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "COHORT_CLAUDE_COMPAT",
	"OPENAI_API_KEY", "OPENAI_BASE_URL"}

// writeConfig writes a teammate's configuration to a new file of mode
// 0600 and returns its path. A file the teammate never read is removed
// when the session closes.
func (b *tmuxBackend) writeConfig(member Membership) (string, error) {
	s := b.s
	spec := ChildSpec{Member: member, Model: s.model.name, Scripted: s.model.name == "scripted",
		Home: s.Process.Paths.CohortHome, Cwd: s.Process.Cwd, Environment: map[string]string{}}
	if !spec.Scripted && s.Model.Spec != "" {
		spec.Model = s.Model.Spec
	}
	for _, k := range childVars {
		if v := s.Process.Getenv(k); v != "" {
			spec.Environment[k] = v
		}
	}
	for _, kv := range s.Process.Environ() {
		if k, v, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "COHORT_FLAG_") {
			spec.Environment[k] = v
		}
	}
	if spec.Scripted {
		// The teammate reaches this process's fake, through every provider.
		spec.Environment["ANTHROPIC_BASE_URL"], spec.Environment["ANTHROPIC_API_KEY"] = s.model.url, s.model.key
		spec.Environment["OPENAI_BASE_URL"], spec.Environment["OPENAI_API_KEY"] = s.model.url+"/v1", s.model.key
	}
	doc, err := s.Team.Configure(spec)
	if err != nil {
		return "", fmt.Errorf("teammate %s: its configuration: %w", member.Name, err)
	}
	dir := filepath.Join(s.Process.Paths.CohortHome, "tmux")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, "teammate-*.json") // mode 0600
	if err != nil {
		return "", err
	}
	_, werr := f.Write(doc)
	if err := errors.Join(werr, f.Close()); err != nil {
		_ = os.Remove(f.Name())
		return "", fmt.Errorf("teammate %s: write its configuration: %w", member.Name, err)
	}
	b.mu.Lock()
	b.files = append(b.files, f.Name())
	b.mu.Unlock()
	return f.Name(), nil
}

// removeConfigs removes the configuration files no teammate read.
func (b *tmuxBackend) removeConfigs() {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, f := range b.files {
		_ = os.Remove(f)
	}
	b.files = nil
}

func (b *tmuxBackend) Alive(ctx context.Context, pane string) bool {
	if b.srv == nil {
		return false
	}
	ok, err := b.srv.Alive(ctx, pane)
	return err == nil && ok
}

func (b *tmuxBackend) Kill(ctx context.Context, pane string) error {
	if b.srv == nil {
		return nil
	}
	return b.srv.Kill(ctx, pane)
}
