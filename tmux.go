package cohort

import (
	"context"
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
	for _, b := range s.backendOverrides() {
		wanted = wanted || b == teammate.BackendTmux
	}
	if !wanted {
		return nil
	}
	return &tmuxBackend{s: s}
}

// tmuxBackend starts teammates as `cohort teammate` processes in tmux panes.
type tmuxBackend struct {
	s    *Session
	once sync.Once
	srv  *tmux.Server
	err  error
}

// server opens the user's tmux server (inside tmux) or starts a private one,
// once.
func (b *tmuxBackend) server(ctx context.Context) (*tmux.Server, error) {
	b.once.Do(func() {
		s := b.s
		if _, err := tmux.Available(ctx); err != nil {
			b.err = fmt.Errorf("the tmux teammate backend needs tmux: %w (or use --teammate-mode in-process)", err)
			return
		}
		if tmux.Inside(s.inv.Getenv) {
			b.srv, b.err = tmux.Current(ctx, s.inv.Getenv)
			return
		}
		dir := filepath.Join(s.env.CohortHome, "tmux")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			b.err = err
			return
		}
		b.srv, b.err = tmux.StartServer(ctx, tmux.ServerConfig{Socket: filepath.Join(dir, s.id[:8]+".sock"),
			Session: "cohort-" + s.id[:8], Env: s.inv.Environ()})
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

// Spawn runs `cohort teammate` for m in a new pane.
func (b *tmuxBackend) Spawn(ctx context.Context, teamName string, m team.Member, siblings string) (string, error) {
	srv, err := b.server(ctx)
	if err != nil {
		return "", err
	}
	s := b.s
	bin := s.inv.Getenv("COHORT_TEAMMATE_BIN")
	if bin == "" {
		if bin, err = os.Executable(); err != nil {
			return "", fmt.Errorf("find the cohort executable: %w", err)
		}
	}
	argv := []string{bin, "teammate", "--team", teamName, "--name", m.Name, "--session", s.id}
	if siblings != "" {
		argv = append(argv, "--siblings", siblings)
	}
	argv = append(argv, s.childFlags()...)
	env := map[string]string{}
	for _, k := range append([]string{"HOME", "COHORT_HOME", "PATH", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL", "COHORT_CLAUDE_COMPAT"}, providerEnv...) {
		if v := s.inv.Getenv(k); v != "" {
			env[k] = v
		}
	}
	env["COHORT_HOME"] = s.env.CohortHome
	if s.model.name == "scripted" {
		env["ANTHROPIC_BASE_URL"], env["ANTHROPIC_API_KEY"] = s.model.url, s.model.key
		env["OPENAI_BASE_URL"], env["OPENAI_API_KEY"] = s.model.url+"/v1", s.model.key
	}
	for _, kv := range s.inv.Environ() {
		if strings.HasPrefix(kv, "COHORT_FLAG_") {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
	}
	pane, err := srv.SplitPane(ctx, tmux.PaneSpec{Argv: argv, Env: env, Cwd: m.Cwd,
		Title: fmt.Sprintf("%s · %s", m.Name, teamName), Layout: tmux.Tiled})
	if err != nil {
		return "", err
	}
	return pane.ID, nil
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

// childFlags are the lead's settings a teammate process must share.
func (s *Session) childFlags() []string {
	var out []string
	model := s.model.name
	if s.o.model != "" && !strings.HasPrefix(s.o.model, scriptedPrefix) {
		model = s.o.model
	}
	out = append(out, "--model", model, "--cwd", s.cwd)
	out = append(out, s.providerFlags()...)
	if s.o.permissionMode != "" {
		out = append(out, "--permission-mode", s.o.permissionMode)
	}
	for _, a := range s.o.allowedTools {
		out = append(out, "--allowedTools", a)
	}
	for _, d := range s.o.disallowedTools {
		out = append(out, "--disallowedTools", d)
	}
	for _, f := range s.o.flags {
		out = append(out, "--flag", f)
	}
	for _, d := range s.o.addDirs {
		out = append(out, "--add-dir", d)
	}
	if s.o.toolPool != nil {
		out = append(out, "--tools", strings.Join(s.o.toolPool, ","))
	}
	if s.o.settingSources != nil {
		out = append(out, "--setting-sources", strings.Join(s.o.settingSources, ","))
	}
	if s.o.fallbackModel != "" {
		out = append(out, "--fallback-model", s.o.fallbackModel)
	}
	if s.o.verbose {
		out = append(out, "--verbose")
	}
	return out
}
