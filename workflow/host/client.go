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

// exchange starts the host, sends first and serves it until its "done".
func exchange(ctx context.Context, cfg Config, first Message, sp Spawner, onEvent func(Event)) (Message, error) {
	path := cfg.Path
	if path == "" {
		var err error
		if path, err = Find(); err != nil {
			return Message{}, err
		}
	}
	grace := cfg.Grace
	if grace <= 0 {
		grace = 2 * time.Second
	}
	hostCtx, stopHost := context.WithCancel(context.WithoutCancel(ctx))
	defer stopHost()
	pr, pw := io.Pipe()
	stderr := proc.NewCapture(16 << 10)
	p, err := proc.Start(hostCtx, proc.Command{Path: path, Args: []string{"serve"}, Env: cfg.Env,
		StdinPipe: true, Stdout: pw, Stderr: stderr, Grace: grace, DieWithParent: true})
	if err != nil {
		return Message{}, fmt.Errorf("start the workflow host: %w", err)
	}
	var owned sync.WaitGroup
	owned.Go(func() { <-p.Done(); pw.Close() })
	msgs, quit := make(chan received), make(chan struct{})
	owned.Go(func() {
		rd := newReader(pr, "the workflow host")
		for {
			m, err := rd.next()
			select {
			case msgs <- received{m, err}:
			case <-quit:
				pr.CloseWithError(io.EOF)
				return
			}
			if err != nil {
				pr.CloseWithError(io.EOF) // unblocks proc's copy of the rest
				return
			}
		}
	})
	spawnCtx, stopSpawns := context.WithCancel(ctx)
	var agents sync.WaitGroup
	defer func() {
		stopSpawns()
		agents.Wait()
		close(quit)
		_ = p.Stdin().Close()
		select {
		case <-p.Done():
		case <-time.After(grace):
			p.Stop()
			<-p.Done()
		}
		owned.Wait()
	}()
	w := &writer{w: p.Stdin()}
	if err := w.send(first); err != nil {
		return Message{}, hostDied(p, stderr, fmt.Sprintf("could not be sent the request (%v)", err))
	}
	for {
		var r received
		select {
		case r = <-msgs:
		case <-ctx.Done():
			p.Stop()
			return Message{}, fmt.Errorf("workflow host stopped: %w", context.Cause(ctx))
		}
		if errors.Is(r.err, io.EOF) {
			<-p.Done()
			return Message{}, hostDied(p, stderr, "exited before it answered")
		}
		if r.err != nil {
			p.Stop()
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
			p.Stop()
			return Message{}, fmt.Errorf("%w: the workflow host sent a %q message, which %s requests do not get", ErrProtocol, m.Type, first.Type)
		}
	}
}

// hostDied describes a host that went away, with its exit and stderr.
func hostDied(p *proc.Process, stderr *proc.Capture, what string) error {
	exit, _ := p.Wait()
	msg := fmt.Sprintf("the workflow host %s (%s)", what, exit)
	if tail := strings.TrimSpace(stderr.String()); tail != "" {
		msg += "; its stderr: " + tail
	}
	return errors.New(msg)
}
