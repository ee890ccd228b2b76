package cli

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/bgsession"
	"github.com/cohort-dev/cohort/bgsession/attach"
)

// bgOptions are the flags of background sessions (package bgsession).
type bgOptions struct {
	bg       bool
	worktree string
	name     string
	// run is the hidden flag a background session is re-executed with:
	// its id in the registry.
	run string
	// set is the parsed command line, whose session flags a background
	// session is started with (sessionFlags).
	set *pflag.FlagSet
}

func (b *bgOptions) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.BoolVar(&b.bg, "bg", false, "start the session in the background, detached from this terminal; prints its id (see cohort agents)")
	f.StringVarP(&b.worktree, "worktree", "w", "", "with --bg: run the session in a new git worktree of this name (default: its id)")
	f.Lookup("worktree").NoOptDefVal = "-"
	f.StringVarP(&b.name, "name", "n", "", "with --bg: the session's name in cohort agents (default: the prompt's first words)")
	f.StringVar(&b.run, "bg-run", "", "")
	_ = f.MarkHidden("bg-run")
}

// check refuses --bg's own flags without --bg (print mode, the terminal
// UI): they name and place a background session, and a session that is
// not one would run with them silently unused. (relay10: `cohort -p -n
// reviewer2` was taken, and a model sent to "reviewer2" found no such
// session.) The re-executed session (--bg-run) keeps them.
func (b *bgOptions) check() error {
	if b.bg || b.run != "" {
		return nil
	}
	switch {
	case b.name != "":
		return usageErr("-n/--name %q is the name of a background session in cohort agents and needs --bg; "+
			"without --bg the session has no name (other sessions reach it by its session id or uds: address). "+
			"Add --bg, or drop -n", b.name)
	case b.worktree != "":
		return usageErr("-w/--worktree starts a background session in a new git worktree and needs --bg; add --bg, or drop -w")
	}
	return nil
}

// registry opens the background sessions' registry under COHORT_HOME.
func registry(inv *Invocation) (*bgsession.Registry, error) {
	return bgsession.Open(cohortHome(inv))
}

// cohortHome is $COHORT_HOME, by default ~/.cohort ("" without HOME).
func cohortHome(inv *Invocation) string {
	home := inv.Getenv("COHORT_HOME")
	if home == "" {
		if h := inv.Getenv("HOME"); h != "" {
			home = filepath.Join(h, ".cohort")
		}
	}
	return home
}

// startBackground is cohort --bg: the same command line re-executed
// detached, with --bg-run ID in place of --bg.
func startBackground(inv *Invocation, o *options, args []string) error {
	if o.print || o.inputFormat != "text" {
		return usageErr("--bg starts a session of its own; it cannot be used with -p or --input-format")
	}
	reg, err := registry(inv)
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("--bg: cannot find the cohort binary: %w", err)
	}
	id := bgsession.NewID()
	child := []string{"--bg-run=" + id}
	for _, a := range inv.Args {
		if a != "--bg" {
			child = append(child, a)
		}
	}
	prompt := promptArg(inv, args)
	cfg := o.config(inv)
	rec, err := reg.Start(id, bgsession.StartSpec{Exe: exe, Args: child, Env: inv.Environ(), Dir: cfg.Dir,
		Name: cmpName(o.bg.name, prompt, id), Intent: prompt, Flags: sessionFlags(o.bg.set)})
	if err != nil {
		return err
	}
	fmt.Fprintf(inv.Stdout, "backgrounded · %s\n", rec.ID)
	fmt.Fprintf(inv.Stderr, "  cohort agents             list sessions\n  cohort attach %s    open in this terminal\n  cohort logs %s      show recent output\n  cohort stop %s      stop this session\n", rec.ID, rec.ID, rec.ID)
	return nil
}

// cmpName is a session's name: --name, else the prompt's first words,
// else its id.
func cmpName(name, prompt, id string) string {
	if name != "" {
		return name
	}
	words := strings.Fields(prompt)
	if len(words) > 6 {
		words = words[:6]
	}
	if s := strings.Join(words, " "); s != "" {
		return clipRunes(s, 40)
	}
	return id
}

// bgRun is the background session's side: it keeps its record, runs its
// prompt with the output in its log, and lives until it is stopped.
type bgRun struct {
	reg *bgsession.Registry
	id  string
	ctl *attach.Server
	mu  sync.Mutex // orders record writes
}

func (b *bgRun) update(f func(*bgsession.Record)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.reg.Update(b.id, f); err != nil {
		fmt.Fprintf(os.Stderr, "cohort: warning: session record: %v\n", err)
	}
}

// canUseTool waits: a background session's permission prompt is
// answered by someone who attaches (package attach), never approved on
// its own. It shows as waiting in cohort agents until then; ctx ending
// (stop) refuses it.
func (b *bgRun) canUseTool(ctx context.Context, req cohort.PermissionRequest) (cohort.Decision, error) {
	b.update(func(r *bgsession.Record) {
		r.Status, r.State, r.Detail = bgsession.StatusWaiting, bgsession.StateBlocked, "waiting for permission: "+req.Tool
	})
	d, err := b.ctl.CanUseTool(ctx, req)
	if err == nil {
		b.update(func(r *bgsession.Record) {
			if b.ctl.Waiting() == 0 {
				r.Status, r.State, r.Detail = bgsession.StatusBusy, bgsession.StateWorking, ""
			}
		})
	}
	return d, err
}

// observe keeps the record's status, agents and cost from the session's
// events.
func (b *bgRun) observe(ev cohort.Event) {
	switch {
	case ev.Subtype == cohort.SubtypeInit:
		b.update(func(r *bgsession.Record) { r.Status, r.State = bgsession.StatusBusy, bgsession.StateWorking })
	case ev.Subtype == cohort.SubtypeTaskStarted:
		b.update(func(r *bgsession.Record) { r.Agents++ })
	case ev.Type == cohort.EventResult:
		b.update(func(r *bgsession.Record) {
			r.Status, r.State, r.CostUSD = bgsession.StatusIdle, bgsession.StateDone, ev.TotalCostUSD
			r.Detail = clipRunes(firstLine(ev.Result), 120)
			if ev.IsError {
				r.State = bgsession.StateFailed
			}
		})
	}
}

// runBackground is the re-executed session of cohort --bg.
func runBackground(ctx context.Context, inv *Invocation, o *options, args []string) error {
	if f, ok := inv.Stdin.(*os.File); ok {
		if err := bgsession.WaitHandOver(f); err != nil {
			return err
		}
	}
	reg, err := registry(inv)
	if err != nil {
		return err
	}
	b := &bgRun{reg: reg, id: o.bg.run, ctl: attach.NewServer()}
	fail := func(err error) error {
		b.update(func(r *bgsession.Record) { r.State, r.Status, r.Detail = bgsession.StateFailed, "", err.Error() })
		return err
	}
	b.update(func(r *bgsession.Record) { r.PID, r.ProcStart = os.Getpid(), bgsession.ProcStart(os.Getpid()) })
	cfg := o.config(inv)
	if o.bg.worktree != "" {
		slug := o.bg.worktree
		if slug == "-" {
			slug = "bg-" + b.id
		}
		path, err := bgsession.CreateWorktree(ctx, cfg.Dir, slug, b.id, inv.Environ())
		if err != nil {
			return fail(err)
		}
		cfg.Dir = path
		b.update(func(r *bgsession.Record) { r.Worktree = path })
	}
	cfg.CanUseTool = b.canUseTool
	cfg.Wake = func(run iter.Seq2[cohort.Event, error]) { b.wake(inv, run) }
	s, err := cohort.New(ctx, cfg)
	if err != nil {
		return fail(err)
	}
	defer s.Close()
	if err := b.ctl.Serve(reg.ControlPath(b.id), s, b.observe); err != nil {
		return fail(err)
	}
	defer b.ctl.Close() // before the session closes: its client runs use it
	b.update(func(r *bgsession.Record) { r.SessionID = s.ID() })
	if prompt := promptArg(inv, args); prompt != "" {
		if err := b.run(ctx, inv, s, prompt); err != nil && ctx.Err() == nil {
			return fail(err)
		}
	} else {
		b.update(func(r *bgsession.Record) { r.Status, r.State = bgsession.StatusIdle, bgsession.StateDone })
	}
	<-ctx.Done()
	b.update(func(r *bgsession.Record) { r.Status, r.State = "", bgsession.StateStopped })
	return nil
}

// wake shows a turn the session started itself (a message from another
// session reached its idle lead, cohort.Config.Wake) as run shows a
// prompt's, the record busy while it runs. A Run that began first reads
// the message instead (ErrBusy): nothing to show.
func (b *bgRun) wake(inv *Invocation, run iter.Seq2[cohort.Event, error]) {
	out := newPrinter(inv.Stdout, inv.Stderr, "text", true)
	started := false
	for ev, err := range run {
		if err != nil {
			if !errors.Is(err, cohort.ErrBusy) && !errors.Is(err, cohort.ErrClosed) {
				fmt.Fprintf(inv.Stderr, "cohort: the turn a message started: %v\n", err)
			}
			return
		}
		if ev.Type == cohort.EventResult && ev.NumTurns == 0 && !ev.IsError {
			return // a Run read the message between the wake and this Run
		}
		if !started {
			started = true
			b.update(func(r *bgsession.Record) { r.Status, r.State = bgsession.StatusBusy, bgsession.StateWorking })
		}
		out.event(ev)
		b.observe(ev)
	}
}

// run runs one prompt, its events in the log as print mode's verbose text.
func (b *bgRun) run(ctx context.Context, inv *Invocation, s *cohort.Session, prompt string) error {
	out := newPrinter(inv.Stdout, inv.Stderr, "text", true)
	for ev, err := range s.Run(ctx, prompt) {
		if err != nil {
			return err
		}
		out.event(ev)
		b.observe(ev)
	}
	return nil
}
