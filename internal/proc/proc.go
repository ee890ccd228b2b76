//go:build unix

package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Defaults for Command's zero values.
const (
	DefaultGrace = 2 * time.Second
	DefaultDrain = time.Second
)

// Why a process was stopped (Exit.Stopped).
var (
	ErrTimeout = errors.New("process timed out")
	ErrStopped = errors.New("process stopped")
)

// Command describes a process to start. The zero values of the optional
// fields are sensible; a Command may be reused.
type Command struct {
	// Path is the program; a name without a slash is looked up in PATH.
	Path string
	// Args are the arguments, not including the program name.
	Args []string
	// Dir is the working directory; empty means ours.
	Dir string
	// Env is the full environment; nil inherits ours.
	Env []string
	// Stdin feeds the process; nil means /dev/null (never our stdin). A
	// reader that is not an *os.File is copied by a goroutine that Wait
	// waits for, so it must eventually return (a bytes.Reader, a pipe whose
	// writer closes).
	Stdin io.Reader
	// StdinPipe gives the caller a writer to the process's stdin through
	// Process.Stdin, for conversations with long-lived children (it excludes
	// Stdin). Closing it is the first, gentlest stop step.
	StdinPipe bool
	// Stdout and Stderr receive the output; nil discards it. Each is written
	// from one goroutine; if they are the same writer without MergeStderr,
	// that writer must be safe for concurrent use.
	Stdout io.Writer
	Stderr io.Writer
	// MergeStderr sends stderr down stdout's pipe, keeping the interleaving
	// the process produced. Stderr is then ignored.
	MergeStderr bool
	// Timeout stops the process after this long; 0 means no timeout.
	Timeout time.Duration
	// Grace is how long each stop step (closing stdin, SIGTERM) waits before
	// the next one; 0 means DefaultGrace.
	Grace time.Duration
	// Drain is how long Wait keeps reading output after the process group is
	// gone (a process outside the group may hold the pipe); 0 means
	// DefaultDrain.
	Drain time.Duration
	// NewSession starts the process in a new session (setsid) instead of
	// only a new process group: it then has no controlling terminal, so a
	// program that opens /dev/tty to prompt fails at once instead of
	// stopping the group or waiting for a keypress that never comes.
	NewSession bool
	// KeepGroup leaves the other members of the process group running when
	// the leader exits on its own. They are still killed when the process
	// is stopped (timeout, Stop, ctx).
	KeepGroup bool
	// Launcher, when set, starts the process instead of a fork of ours (a
	// sandbox's launcher process forks it). Everything else is the same:
	// the group is stopped and waited for through the leader's pidfd.
	Launcher Launcher
	// DieWithParent has the kernel SIGKILL the process when Cohort dies,
	// however it dies (Linux: PR_SET_PDEATHSIG; elsewhere it does
	// nothing). For helpers that are part of Cohort, such as the workflow
	// host, never for the user's commands. Not with a Launcher.
	DieWithParent bool
}

// Launcher starts a process on our behalf in another process, which reaps
// it. Implementations are safe for concurrent use.
type Launcher interface {
	Launch(ctx context.Context, spec LaunchSpec) (Launched, error)
}

// LaunchSpec is what a Launcher starts: Path with Args (not including the
// program name) in Dir with Env, its standard streams on Stdio. The
// process leads a new session when NewSession is set, else a new process
// group. The Launcher duplicates the files; the caller closes its own.
type LaunchSpec struct {
	Path       string
	Args, Env  []string
	Dir        string
	Stdio      [3]*os.File
	NewSession bool
}

// Launched is a process a Launcher started.
type Launched interface {
	// Pidfd returns a pidfd of the process; the caller owns it from then
	// on and closes it. It is called once.
	Pidfd() int
	// Wait blocks until the process has exited and been reaped, and
	// returns its status.
	Wait() (syscall.WaitStatus, error)
}

// GroupSignals reports whether this kernel can signal a process group
// through its leader's pidfd (Linux 6.9), which processes started by a
// Launcher need: they are not our children, and their group is stopped
// after the launcher has reaped the leader.
func GroupSignals() bool { return pidfdGroups() }

// Exit describes how a process ended.
type Exit struct {
	// Code is the exit status, or -1 when a signal killed the process.
	Code int
	// Signal is the signal that killed the process, 0 if it exited.
	Signal syscall.Signal
	// Stopped says why we stopped the process: nil if it ended by itself,
	// ErrTimeout, ErrStopped, or the cause of the context ending.
	Stopped error
}

// Success reports whether the process exited 0 by itself.
func (e Exit) Success() bool { return e.Code == 0 && e.Stopped == nil }

func (e Exit) String() string {
	var s string
	if e.Signal != 0 {
		s = "killed by signal " + e.Signal.String()
	} else {
		s = "exit code " + strconv.Itoa(e.Code)
	}
	if e.Stopped != nil {
		s += " (stopped: " + e.Stopped.Error() + ")"
	}
	return s
}

// Process is a started command. Its methods are safe for concurrent use.
//
// A Process owns the goroutines that watch it; they all end, and the whole
// process group is gone and reaped, by the time Wait returns. They end on
// their own when the process ends, so a caller that loses interest can call
// Stop and need not call Wait, but should.
type Process struct {
	cmd       *exec.Cmd
	launched  Launched // instead of cmd, for a process a Launcher started
	status    syscall.WaitStatus
	stdio     [3]*os.File // the child's ends of its streams (nil: /dev/null)
	pid       int
	leader    leaderRef // signals the group by identity, where the kernel can
	grace     time.Duration
	drain     time.Duration
	keepGroup bool

	stopCh   chan struct{}
	stopOnce sync.Once
	exited   chan struct{} // closed when the leader has exited
	reaped   bool          // set before exited closes: the waiter reaped it
	reapErr  error
	done     chan struct{} // closed when everything is over
	exit     Exit
	err      error

	stdinW     *os.File // our end of the stdin pipe, if we own one
	stdinPipe  bool     // stdinW is handed to the caller (Command.StdinPipe)
	stdinOnce  sync.Once
	stdinDone  chan struct{} // closed when the stdin copier ends
	outR       []*os.File    // our ends of the output pipes
	readers    sync.WaitGroup
	readerDone chan struct{}
}

// Start starts c in a new process group. When ctx ends, or c.Timeout
// passes, the process is stopped. The returned Process must be waited for
// with Wait to learn the outcome.
func Start(ctx context.Context, c Command) (*Process, error) {
	if c.Path == "" {
		return nil, errors.New("proc: empty command path")
	}
	cmd := exec.Command(c.Path, c.Args...)
	cmd.Dir = c.Dir
	cmd.Env = c.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: !c.NewSession, Setsid: c.NewSession}
	if c.DieWithParent {
		dieWithParent(cmd.SysProcAttr)
	}
	p := &Process{
		cmd:        cmd,
		grace:      orDefault(c.Grace, DefaultGrace),
		drain:      orDefault(c.Drain, DefaultDrain),
		keepGroup:  c.KeepGroup,
		stdinPipe:  c.StdinPipe,
		stopCh:     make(chan struct{}),
		exited:     make(chan struct{}),
		done:       make(chan struct{}),
		stdinDone:  make(chan struct{}),
		readerDone: make(chan struct{}),
	}
	childEnds, copies, err := p.pipes(c)
	if err != nil {
		closeAll(childEnds)
		closeAll(p.outR)
		return nil, fmt.Errorf("start %s: %w", c.Path, err)
	}
	if err := p.start(ctx, c); err != nil {
		closeAll(childEnds)
		closeAll(p.outR)
		if p.stdinW != nil {
			p.stdinW.Close()
		}
		return nil, fmt.Errorf("start %s: %w", c.Path, err)
	}
	closeAll(childEnds)

	for i, r := range p.outR {
		p.readers.Add(1)
		go p.copyOut(r, copies[i])
	}
	go func() { p.readers.Wait(); close(p.readerDone) }()
	if p.stdinW != nil && !p.stdinPipe {
		go p.copyIn(c.Stdin)
	} else {
		close(p.stdinDone)
	}
	go p.waitLeader()
	go p.supervise(ctx, c.Timeout)
	return p, nil
}

// start starts the process with its streams from p.stdio, by fork or
// through the Launcher, and opens the leader's pidfd.
func (p *Process) start(ctx context.Context, c Command) error {
	if c.Launcher == nil {
		// A nil *os.File must not become a non-nil io.Reader or Writer.
		if p.stdio[0] != nil {
			p.cmd.Stdin = p.stdio[0]
		}
		if p.stdio[1] != nil {
			p.cmd.Stdout = p.stdio[1]
		}
		if p.stdio[2] != nil {
			p.cmd.Stderr = p.stdio[2]
		}
		if err := p.cmd.Start(); err != nil {
			return err
		}
		p.pid = p.cmd.Process.Pid
		p.leader = openLeader(p.pid) // before anything can reap it
		return nil
	}
	if !pidfdGroups() {
		return errors.New("a launched process needs pidfd process-group signals (Linux 6.9)")
	}
	spec := LaunchSpec{Path: c.Path, Args: c.Args, Env: c.Env, Dir: c.Dir, Stdio: p.stdio, NewSession: c.NewSession}
	var null *os.File
	for i, f := range spec.Stdio {
		if f != nil {
			continue
		}
		if null == nil {
			var err error
			if null, err = os.OpenFile(os.DevNull, os.O_RDWR, 0); err != nil {
				return err
			}
			defer null.Close()
		}
		spec.Stdio[i] = null
	}
	l, err := c.Launcher.Launch(ctx, spec)
	if err != nil {
		return err
	}
	p.launched = l
	p.leader = leaderRef{fd: l.Pidfd()}
	return nil
}

// Pid returns the process id, which is also its process group id; 0 for
// a process a Launcher started (its number belongs to another pid
// namespace).
func (p *Process) Pid() int { return p.pid }

// Stop asks for the process to be stopped (close stdin → SIGTERM → SIGKILL,
// to the whole group). It returns at once; Wait reports the outcome with
// Exit.Stopped set to ErrStopped. Stopping an ended process does nothing.
func (p *Process) Stop() { p.stopOnce.Do(func() { close(p.stopCh) }) }

// Done is closed when the process group is gone and Wait would not block.
func (p *Process) Done() <-chan struct{} { return p.done }

// Wait blocks until the process and its group have ended and been reaped
// and the output has been delivered. It may be called any number of times.
// The error is non-nil only if the process could not be observed.
func (p *Process) Wait() (Exit, error) {
	<-p.done
	return p.exit, p.err
}

func (p *Process) waitLeader() {
	defer close(p.exited)
	if p.launched != nil {
		p.status, p.reapErr = p.launched.Wait()
		p.reaped = true
		return
	}
	if err := waitExited(p.pid); err != nil {
		// No way to wait without reaping: reap now, then clean up the group
		// with a best-effort liveness check.
		p.reapErr = p.cmd.Wait()
		p.reaped = true
	}
}

func (p *Process) supervise(ctx context.Context, timeout time.Duration) {
	defer close(p.done)
	var timer <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timer = t.C
	}
	var stopped error
	select {
	case <-p.exited:
	case <-ctx.Done():
		stopped = context.Cause(ctx)
	case <-timer:
		stopped = ErrTimeout
	case <-p.stopCh:
		stopped = ErrStopped
	}
	if stopped != nil {
		p.terminate()
	}
	if p.leader.ok() && !p.reaped {
		// The group is signalled through the pidfd from here on, so the
		// zombie need not hold the number: reap it, and the group check
		// below sees only the other members.
		p.reapErr = p.cmd.Wait()
		p.reaped = true
	}
	if stopped != nil || !p.keepGroup {
		p.cleanGroup()
	}
	p.leader.close()
	if !p.reaped {
		p.reapErr = p.cmd.Wait()
	}
	p.closeStdin()
	<-p.stdinDone
	p.drainOutput()
	if p.launched != nil {
		p.exit, p.err = exitOfStatus(p.status, p.reapErr)
	} else {
		p.exit, p.err = exitOf(p.cmd.ProcessState, p.reapErr)
	}
	p.exit.Stopped = stopped
}

// terminate runs the stop sequence on the leader and its group until the
// leader has exited.
func (p *Process) terminate() {
	if p.stdinW != nil {
		p.closeStdin()
		if p.waitExit(p.grace) {
			return
		}
	}
	p.signalGroup(syscall.SIGTERM)
	if p.waitExit(p.grace) {
		return
	}
	p.signalGroup(syscall.SIGKILL)
	<-p.exited // SIGKILL cannot be ignored
}

func (p *Process) waitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// pollEvery is how often cleanGroup looks at the group while it waits.
const pollEvery = 20 * time.Millisecond

// cleanGroup stops the members of the group that are still running after
// the leader exited: SIGTERM, then SIGKILL after the grace period.
func (p *Process) cleanGroup() {
	if !p.groupAlive() {
		return
	}
	p.signalGroup(syscall.SIGTERM)
	if p.pollGroupGone(p.grace) {
		return
	}
	p.signalGroup(syscall.SIGKILL)
	// Killed processes vanish at once unless stuck in the kernel; do not
	// wait for those forever.
	p.pollGroupGone(max(p.grace, time.Second))
}

func (p *Process) pollGroupGone(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for p.groupAlive() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pollEvery)
	}
	return true
}

// groupAlive reports whether a member of the process's group other than a
// zombie is running. With a pidfd and the leader reaped, an empty group —
// the common case — is one system call; otherwise /proc is read.
func (p *Process) groupAlive() bool {
	if p.launched != nil {
		// Not our children and maybe in another pid namespace: only the
		// pidfd can tell. The launcher reaps orphans at once.
		return p.leader.signalGroup(0) == nil
	}
	if p.leader.ok() && p.reaped {
		if err := p.leader.signalGroup(0); errors.Is(err, syscall.ESRCH) {
			return false
		}
		// Members exist, so the number is still the group's (the kernel
		// does not hand out a number a group uses). If they exit while
		// /proc is read and the number goes to a new group, that group may
		// look alive once, but signals go through the pidfd and cannot
		// reach it, and the next check sees ESRCH.
	}
	return groupAlive(p.pid)
}

// signalGroup sends sig to every member of the group.
func (p *Process) signalGroup(sig syscall.Signal) {
	if p.leader.ok() {
		_ = p.leader.signalGroup(sig)
		return
	}
	_ = syscall.Kill(-p.pid, sig)
}

func exitOf(ps *os.ProcessState, waitErr error) (Exit, error) {
	if ps == nil {
		if waitErr == nil {
			waitErr = errors.New("no process state")
		}
		return Exit{Code: -1}, fmt.Errorf("wait: %w", waitErr)
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return Exit{Code: -1, Signal: ws.Signal()}, nil
	}
	return Exit{Code: ps.ExitCode()}, nil
}

func exitOfStatus(ws syscall.WaitStatus, waitErr error) (Exit, error) {
	switch {
	case waitErr != nil:
		return Exit{Code: -1}, fmt.Errorf("wait: %w", waitErr)
	case ws.Signaled():
		return Exit{Code: -1, Signal: ws.Signal()}, nil
	}
	return Exit{Code: ws.ExitStatus()}, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

func closeAll(files []*os.File) {
	for _, f := range files {
		if f != nil {
			f.Close()
		}
	}
}
