package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/bgsession"
	"github.com/cohort-dev/cohort/internal/tui"
)

// agentsView is cohort agents on a terminal: the live view of the
// machine's sessions (tui.RunSessions). Enter attaches to the chosen one
// here — the terminal UI on a running session, or an ended one reopened
// from its transcript — and the view comes back when the UI ends; n
// starts a background session with the view's defaults (the session
// flags and directory cohort agents was given); x stops one.
type agentsView struct {
	inv   *Invocation
	o     *options
	reg   *bgsession.Registry
	all   bool
	dir   string   // --cwd's filter ("" for none)
	home  string   // where new sessions start
	flags []string // what new sessions are started with
}

func runAgentsView(ctx context.Context, inv *Invocation, o *options, all bool, filter string, in, out *os.File) error {
	reg, err := registry(inv)
	if err != nil {
		return err
	}
	v := &agentsView{inv: inv, o: o, reg: reg, all: all, dir: filter, home: o.config(inv).Dir, flags: sessionFlags(o.bg.set)}
	defaults := "in " + v.home
	if len(v.flags) > 0 {
		defaults += " · " + strings.Join(v.flags, " ")
	}
	opts := tui.SessionsOptions{List: v.list, Stop: v.stop, Dispatch: v.dispatch, Defaults: clipRunes(defaults, 80),
		Environ: inv.Environ()}
	for {
		id, err := tui.RunSessions(ctx, opts, in, out)
		if err != nil || id == "" || ctx.Err() != nil {
			return err
		}
		opts.Selected, opts.Notice = id, ""
		if err := v.attach(ctx, id); err != nil {
			opts.Notice = "attach " + id + ": " + err.Error()
		}
	}
}

// list reads the registry: the live sessions (all of them with --all),
// those under --cwd's directory when it was given.
func (v *agentsView) list(ctx context.Context) ([]tui.SessionRow, []string, error) {
	recs, errs := v.reg.Sessions(ctx, v.all)
	recs = sessionsUnder(recs, v.dir)
	rows := make([]tui.SessionRow, 0, len(recs))
	for _, r := range recs {
		var active time.Time
		if r.UpdatedAt != 0 {
			active = time.UnixMilli(r.UpdatedAt)
		}
		rows = append(rows, tui.SessionRow{ID: r.ID, Name: r.Name, State: r.State, Status: r.Status, Detail: r.Detail,
			Dir: sessionDir(r), CostUSD: r.CostUSD, Agents: r.Agents, Active: active, Alive: r.Alive})
	}
	var warnings []string
	for _, e := range errs {
		warnings = append(warnings, e.Error())
	}
	return rows, warnings, nil
}

func (v *agentsView) record(ctx context.Context, id string) (bgsession.Record, error) {
	rec, err := v.reg.Read(id)
	if err != nil {
		return rec, err
	}
	return v.reg.Check(ctx, rec), nil
}

func (v *agentsView) stop(ctx context.Context, id string) error {
	rec, err := v.record(ctx, id)
	if err != nil {
		return err
	}
	if err := v.reg.Stop(ctx, rec, false); err != nil {
		if errors.Is(err, bgsession.ErrNotRunning) {
			return fmt.Errorf("it is not running (%s)", rec.State)
		}
		return err
	}
	return nil
}

// dispatch starts a background session on prompt, as cohort --bg would
// with the view's flags.
func (v *agentsView) dispatch(_ context.Context, prompt string) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("cannot find the cohort binary: %w", err)
	}
	id := bgsession.NewID()
	args := append([]string{"--bg-run=" + id, "--cwd", v.home}, v.flags...)
	args = append(args, "--", prompt)
	rec, err := v.reg.Start(id, bgsession.StartSpec{Exe: exe, Args: args, Env: v.inv.Environ(), Dir: v.home,
		Name: cmpName("", prompt, id), Intent: prompt, Flags: v.flags})
	return rec.ID, err
}

// attach opens the session id in this terminal until its UI ends.
func (v *agentsView) attach(ctx context.Context, id string) error {
	rec, err := v.record(ctx, id)
	if err != nil {
		return err
	}
	if rec.Alive {
		return attachLive(ctx, v.inv, v.o, v.reg, rec)
	}
	if rec.SessionID == "" {
		return fmt.Errorf("it ended before it opened a conversation (%s); see cohort logs %s", rec.Detail, rec.ID)
	}
	o := *v.o
	o.cfg.Resume, o.cfg.Continue, o.cfg.Dir = rec.SessionID, false, sessionDir(rec)
	return runInteractive(ctx, v.inv, &o, nil)
}
