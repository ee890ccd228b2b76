package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/internal/proc"
)

// BinaryName is the host program's name.
const BinaryName = "cohort-workflow"

// InstallHint is the command that installs the host program.
const InstallHint = "go install github.com/cohort-dev/cohort/cmd/cohort-workflow@latest (or go install github.com/cohort-dev/cohort/cmd/... for both programs)"

// ErrNoHost is returned when cohort-workflow cannot be found.
var ErrNoHost = errors.New("the workflow host program " + BinaryName + " is not installed")

// Config says how to start the host. The zero value finds it with Find.
type Config struct {
	Path string   // the cohort-workflow binary; empty means Find
	Env  []string // its environment; nil inherits ours
	// Grace is how long each stop step waits (internal/proc); 0 means 2 s.
	Grace time.Duration
}

// Find returns the host program: next to the running executable, else on
// PATH. The error says how to install it.
func Find() (string, error) {
	exe, err := os.Executable()
	if err == nil {
		p := filepath.Join(filepath.Dir(exe), BinaryName)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	if p, err := exec.LookPath(BinaryName); err == nil {
		return p, nil
	}
	where := "on PATH"
	if exe != "" {
		where = "next to " + exe + " or on PATH"
	}
	return "", fmt.Errorf("%w: workflows run in it, and it is not %s; install it with %s", ErrNoHost, where, InstallHint)
}

// Run runs one script in a host process: every agent() call is given to
// sp, every event to onEvent (from one goroutine; nil drops them). It
// returns when the script has finished, failed or ctx ended; by then the
// host has exited and every Spawn has returned. A script's own failure is
// an error with the partial Result (what was spent).
func Run(ctx context.Context, cfg Config, req RunRequest, sp Spawner, onEvent func(Event)) (Result, error) {
	if sp == nil {
		return Result{}, errors.New("workflow host: Run needs a Spawner")
	}
	done, err := exchange(ctx, cfg, Message{Type: TypeRun, Run: &req}, sp, onEvent)
	if err != nil {
		return Result{}, err
	}
	var res Result
	if done.Result != nil {
		res = *done.Result
	}
	if done.Error != "" {
		return res, errors.New(done.Error)
	}
	if done.Result == nil {
		return res, fmt.Errorf("%w: the host's done message has no result", ErrProtocol)
	}
	return res, nil
}

// Check loads a script in a host process and returns its meta; nothing in
// the script runs.
func Check(ctx context.Context, cfg Config, req CheckRequest) (Checked, error) {
	done, err := exchange(ctx, cfg, Message{Type: TypeCheck, Check: &req}, nil, nil)
	switch {
	case err != nil:
		return Checked{}, err
	case done.Error != "":
		return Checked{}, errors.New(done.Error)
	case done.Checked == nil:
		return Checked{}, fmt.Errorf("%w: the host's done message has no meta", ErrProtocol)
	}
	return *done.Checked, nil
}

// List returns the saved workflows below roots, with why any fails to load.
func List(ctx context.Context, cfg Config, roots ...string) ([]Saved, error) {
	done, err := exchange(ctx, cfg, Message{Type: TypeList, List: &ListRequest{Roots: roots}}, nil, nil)
	if err != nil {
		return nil, err
	}
	if done.Error != "" {
		return nil, errors.New(done.Error)
	}
	return done.Saved, nil
}

type received struct {
	m   Message
	err error
}

// process is a running host: its messages arrive on msgs from a reading
// goroutine it owns.
type process struct {
	p      *proc.Process
	stderr *proc.Capture
	grace  time.Duration
	msgs   chan received
	quit   chan struct{}
	owned  sync.WaitGroup
}

// Locate returns the host program cfg starts: Path when it is an
// executable file, else (Path empty) what Find finds. The error says what
// is missing and how to install it.
func (cfg Config) Locate() (string, error) {
	if cfg.Path == "" {
		return Find()
	}
	if fi, err := os.Stat(cfg.Path); err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%w: %s is not an executable file; install it with %s", ErrNoHost, cfg.Path, InstallHint)
	}
	return cfg.Path, nil
}

// startHost starts cohort-workflow serve in its own process group, to die
// with us.
func startHost(ctx context.Context, cfg Config) (*process, error) {
	path, err := cfg.Locate()
	if err != nil {
		return nil, err
	}
	h := &process{stderr: proc.NewCapture(16 << 10), grace: cfg.Grace, msgs: make(chan received), quit: make(chan struct{})}
	if h.grace <= 0 {
		h.grace = 2 * time.Second
	}
	pr, pw := io.Pipe()
	// The host's life is ours to end (stop), not ctx's: a cancelled run
	// still closes its input first.
	p, err := proc.Start(context.WithoutCancel(ctx), proc.Command{Path: path, Args: []string{"serve"}, Env: cfg.Env,
		StdinPipe: true, Stdout: pw, Stderr: h.stderr, Grace: h.grace, DieWithParent: true})
	if err != nil {
		return nil, fmt.Errorf("start the workflow host: %w", err)
	}
	h.p = p
	h.owned.Go(func() { <-p.Done(); pw.Close() })
	h.owned.Go(func() {
		rd := newReader(pr, "the workflow host")
		for {
			m, err := rd.next()
			select {
			case h.msgs <- received{m, err}:
			case <-h.quit:
				pr.CloseWithError(io.EOF)
				return
			}
			if err != nil {
				pr.CloseWithError(io.EOF) // unblocks proc's copy of the rest
				return
			}
		}
	})
	return h, nil
}

// stop closes the host's input, gives it the grace period to exit, stops
// it (SIGTERM, then SIGKILL to its group) if it has not, and waits for it
// and the goroutines reading it.
func (h *process) stop() {
	close(h.quit)
	_ = h.p.Stdin().Close()
	select {
	case <-h.p.Done():
	case <-time.After(h.grace):
		h.p.Stop()
		<-h.p.Done()
	}
	h.owned.Wait()
}

// exchange starts the host, sends first and serves it until its "done".
func exchange(ctx context.Context, cfg Config, first Message, sp Spawner, onEvent func(Event)) (Message, error) {
	h, err := startHost(ctx, cfg)
	if err != nil {
		return Message{}, err
	}
	spawnCtx, stopSpawns := context.WithCancel(ctx)
	var agents sync.WaitGroup
	defer func() {
		stopSpawns()
		agents.Wait()
		h.stop()
	}()
	w := &writer{w: h.p.Stdin()}
	if err := w.send(first); err != nil {
		h.p.Stop() // so that hostDied's wait is bounded
		return Message{}, hostDied(h, fmt.Sprintf("could not be sent the request (%v)", err))
	}
	for {
		var r received
		select {
		case r = <-h.msgs:
		case <-ctx.Done():
			h.p.Stop()
			return Message{}, fmt.Errorf("workflow host stopped: %w", context.Cause(ctx))
		}
		if errors.Is(r.err, io.EOF) { // only once the process is gone
			return Message{}, hostDied(h, "exited before it answered")
		}
		if r.err != nil {
			h.p.Stop()
			return Message{}, r.err
		}
		m := r.m
		switch {
		case m.Type == TypeDone:
			return m, nil
		case m.Type == TypeEvent:
			if onEvent != nil {
				onEvent(*m.Event)
			}
		case m.Type == TypeAgent && sp != nil:
			agents.Go(func() {
				res, err := sp.Spawn(spawnCtx, *m.Agent)
				ans := Message{Type: TypeAnswer, ID: m.ID, Answer: &res}
				if err != nil {
					ans.Error = err.Error()
				}
				_ = w.send(ans) // a dead host is reported by the read side
			})
		default:
			h.p.Stop()
			return Message{}, fmt.Errorf("%w: the workflow host sent a %q message, which %s requests do not get", ErrProtocol, m.Type, first.Type)
		}
	}
}

// hostDied describes a host that went away, with its exit and stderr.
func hostDied(h *process, what string) error {
	exit, _ := h.p.Wait()
	msg := fmt.Sprintf("the workflow host %s (%s)", what, exit)
	if tail := strings.TrimSpace(h.stderr.String()); tail != "" {
		msg += "; its stderr: " + tail
	}
	return errors.New(msg)
}
