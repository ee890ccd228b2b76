package cohort

import (
	"context"
	"fmt"
	"io"

	"github.com/cohort-dev/cohort/flags"
	"github.com/cohort-dev/cohort/internal/proc"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/sandbox"
	"github.com/cohort-dev/cohort/transcript"
)

// ListAgents writes the agent definitions a session with cfg would have:
// where each comes from and which one wins (cohort agents).
func ListAgents(ctx context.Context, cfg Config, w io.Writer) error {
	b, err := loadBase(ctx, cfg.invocation(), cfg.options())
	if err != nil {
		return err
	}
	s := &Session{base: b, cfg: cfg, teamsOn: b.flags.Bool(flags.AgentTeams)}
	return b.catalog(ctx, s.toolNames()).Render(w)
}

// ListFlags writes the feature flags a session with cfg would have, with
// their values and the source that set each (cohort flags).
func ListFlags(ctx context.Context, cfg Config, w io.Writer) error {
	b, err := loadBase(ctx, cfg.invocation(), cfg.options())
	if err != nil {
		return err
	}
	return b.flags.Render(w)
}

// ScriptedModel is the in-process fake API of a session on a scripted
// model (Config.Model "scripted:FILE"), with every request it was sent;
// nil on a real model.
func (s *Session) ScriptedModel() *fakeapi.Server { return s.model.fake }

// Doctor writes what the Bash sandbox enforces on this machine for a
// session with cfg: it starts a launcher and sets up the policy such a
// session would get (cohort doctor).
func Doctor(ctx context.Context, cfg Config, w io.Writer) error {
	b, err := loadBase(ctx, cfg.invocation(), cfg.options())
	if err != nil {
		return err
	}
	s := &Session{base: b, cfg: cfg, id: "doctor"}
	if err := s.permissions(); err != nil {
		return err
	}
	conf := s.sandboxConfig()
	for _, p := range conf.problems {
		fmt.Fprintf(w, "settings problem: %s\n", p)
	}
	fmt.Fprintf(w, "Bash sandbox for %s\n", b.cwd)
	if on, err := s.sandboxOn(conf); err != nil {
		return err
	} else if !on {
		fmt.Fprintf(w, "  the sandbox is OFF (settings %s or --sandbox off): nothing below applies\n", conf.enabledSrc)
	}
	fmt.Fprintf(w, "  pidfd process-group signals (Linux 6.9): %v\n", yesNo(proc.GroupSignals()))
	sb, err := sandbox.New(s.sandboxCfg(ctx, conf))
	if err != nil {
		fmt.Fprintf(w, "  NOT available: %v\n", err)
		return nil
	}
	defer sb.Close()
	rep, err := sb.Report(ctx, b.cwd)
	for _, p := range sb.Problems() {
		fmt.Fprintf(w, "  note: %s\n", p)
	}
	if err != nil {
		fmt.Fprintf(w, "  NOT available: %v\n", err)
		return nil
	}
	fmt.Fprintf(w, "  Landlock ABI: %d\n", rep.Landlock)
	fmt.Fprintf(w, "  user, mount and pid namespaces: %s\n", yesNo(rep.Namespaces))
	fmt.Fprintf(w, "  private TMPDIR: a new directory under %s per session\n", dirOf(sb.TempDir()))
	writable, protected := sb.Writable(b.cwd)
	for _, p := range writable {
		fmt.Fprintf(w, "  writable: %s\n", p)
	}
	for _, p := range protected {
		fmt.Fprintf(w, "  read-only inside them: %s\n", p)
	}
	fmt.Fprint(w, rep.Describe())
	return nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func dirOf(p string) string {
	for i := len(p) - 1; i > 0; i-- {
		if p[i] == '/' {
			return p[:i]
		}
	}
	return p
}

// SessionSummary is one session of a project as Sessions lists it: id,
// start and last change, the first prompt, the cost of all its agents.
type SessionSummary = transcript.Summary

// Sessions lists the sessions of cfg's project (its transcripts under
// Home), the most recently updated first (cohort sessions). Their cost is
// priced with the session's price table (defaults and the settings'
// "prices").
func Sessions(ctx context.Context, cfg Config) ([]SessionSummary, error) {
	b, err := loadBase(ctx, cfg.invocation(), cfg.options())
	if err != nil {
		return nil, err
	}
	prices, err := b.prices()
	if err != nil {
		return nil, err
	}
	return transcript.List(b.projectDir, prices)
}
