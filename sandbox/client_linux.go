//go:build linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/cohort-dev/cohort/internal/proc"
)

// conn is Cohort's end of a running launcher.
type conn struct {
	fd   int
	cmd  *exec.Cmd
	ns   bool
	sent sync.Mutex // one Sendmsg at a time keeps ids and fds together

	mu      sync.Mutex
	nextID  uint64
	replies map[uint64]chan reply
	exits   map[int]chan int
	early   map[int]int // exits that came before their waiter registered
	dead    chan struct{}
	deadErr error
	notes   []string      // what the launcher cannot enforce for any policy
	read    chan struct{} // closed when the reader has ended
}

type reply struct {
	m     *message
	files []*os.File
}

// startLauncher starts a launcher process: in new user, mount and pid
// namespaces when ns is set.
func startLauncher(exe string, ns bool) (*conn, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: socket pair: %w", err)
	}
	theirs := os.NewFile(uintptr(fds[1]), "sandbox-launcher")
	defer theirs.Close()
	mode := "plain"
	if ns {
		// The launcher writes its own uid and gid maps after exec (see
		// mapSelf): Cohort may be non-dumpable (shield), and then the
		// /proc files of a child it clones belong to root until that
		// child execs, so a Cohort that is not root could not write them.
		mode = fmt.Sprintf("ns:%d:%d", os.Getuid(), os.Getgid())
	}
	cmd := exec.Command(exe)
	cmd.Args = []string{"cohort-sandbox-launcher"}
	cmd.Env = []string{launcherEnv + "=" + mode} // nothing of ours, credentials least of all
	if raceEnabled {
		cmd.Env = append(cmd.Env, "GORACE="+launcherRaceOptions())
	}
	cmd.ExtraFiles = []*os.File{theirs}
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if ns {
		cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID
		// Unmapped until it maps itself, the launcher is no one's root at
		// exec, so it keeps only these (ambient): what it needs to map
		// itself, mount and drop capabilities, and to reach the paths it
		// binds. Every policy thread drops them all.
		cmd.SysProcAttr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP, unix.CAP_DAC_OVERRIDE, unix.CAP_DAC_READ_SEARCH}
	}
	if err := spawnOnLauncherThread(cmd.Start); err != nil {
		unix.Close(fds[0])
		return nil, err
	}
	c := &conn{fd: fds[0], cmd: cmd, ns: ns, replies: map[uint64]chan reply{}, exits: map[int]chan int{},
		early: map[int]int{}, dead: make(chan struct{}), read: make(chan struct{})}
	hello, err := c.hello()
	if err != nil {
		_ = c.closeFd()
		return nil, err
	}
	c.notes = hello.NotEnforced
	go c.reader()
	return c, nil
}

// helloTimeout bounds the launcher's start (an exec of our binary).
const helloTimeout = 30 * time.Second

// hello reads the launcher's first message: whether it could set itself
// up, and what it cannot enforce for any policy.
func (c *conn) hello() (*Report, error) {
	tv := unix.NsecToTimeval(helloTimeout.Nanoseconds())
	_ = unix.SetsockoptTimeval(c.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	defer func() {
		var zero unix.Timeval
		_ = unix.SetsockoptTimeval(c.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &zero)
	}()
	buf, oob := make([]byte, maxPacket), make([]byte, unix.CmsgSpace(4*maxFiles))
	m, files, err := recv(c.fd, buf, oob)
	closeFiles(files)
	switch {
	case err != nil:
		return nil, fmt.Errorf("sandbox launcher did not start: %w", err)
	case m.Op != "hello":
		return nil, fmt.Errorf("sandbox launcher: first message is %q", m.Op)
	case m.Err != "":
		return nil, fmt.Errorf("sandbox launcher: %s", m.Err)
	}
	if m.Report == nil {
		m.Report = &Report{}
	}
	return m.Report, nil
}

// closeFd ends a launcher that failed to start.
func (c *conn) closeFd() error {
	_ = unix.Shutdown(c.fd, unix.SHUT_RDWR)
	unix.Close(c.fd)
	_ = c.cmd.Process.Kill()
	err := c.cmd.Wait()
	releaseLauncherThread()
	return err
}

// spawnThread starts launchers. PR_SET_PDEATHSIG, which the launcher
// sets, fires when the thread that forked it exits, not the process; so
// launchers are forked from one locked thread that lives while any
// launcher does. The goroutine ends (and its thread with it) when the last
// launcher has been closed, so tests see no goroutine left behind.
var spawnThread struct {
	sync.Mutex
	reqs  chan func()
	users int
}

func spawnOnLauncherThread(start func() error) error {
	spawnThread.Lock()
	if spawnThread.reqs == nil {
		reqs := make(chan func())
		spawnThread.reqs = reqs
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			for f := range reqs {
				f()
			}
		}()
	}
	reqs := spawnThread.reqs
	spawnThread.users++
	spawnThread.Unlock()
	errc := make(chan error, 1)
	reqs <- func() { errc <- start() }
	err := <-errc
	if err != nil {
		releaseLauncherThread()
	}
	return err
}

// releaseLauncherThread is called once for every launcher started; the
// last one ends the thread.
func releaseLauncherThread() {
	spawnThread.Lock()
	defer spawnThread.Unlock()
	if spawnThread.users--; spawnThread.users == 0 {
		close(spawnThread.reqs)
		spawnThread.reqs = nil
	}
}

// reader dispatches replies and exits until the launcher goes away.
func (c *conn) reader() {
	defer close(c.read)
	buf, oob := make([]byte, maxPacket), make([]byte, unix.CmsgSpace(4*maxFiles))
	var err error
	for {
		var m *message
		var files []*os.File
		m, files, err = recv(c.fd, buf, oob)
		if err != nil {
			break
		}
		c.mu.Lock()
		switch m.Op {
		case "reply":
			if ch, ok := c.replies[m.ID]; ok {
				delete(c.replies, m.ID)
				ch <- reply{m, files}
				files = nil
			}
		case "exit":
			if ch, ok := c.exits[m.Pid]; ok {
				delete(c.exits, m.Pid)
				ch <- m.Status
			} else {
				c.early[m.Pid] = m.Status
			}
		}
		c.mu.Unlock()
		closeFiles(files)
	}
	c.mu.Lock()
	c.deadErr = fmt.Errorf("sandbox launcher stopped: %w", err)
	close(c.dead)
	c.mu.Unlock()
}

// call sends a request and waits for its reply.
func (c *conn) call(ctx context.Context, m *message, files ...int) (reply, error) {
	ch := make(chan reply, 1)
	c.mu.Lock()
	select {
	case <-c.dead:
		c.mu.Unlock()
		return reply{}, c.deadErr
	default:
	}
	c.nextID++
	m.ID = c.nextID
	c.replies[m.ID] = ch
	c.mu.Unlock()
	c.sent.Lock()
	err := send(c.fd, m, files...)
	c.sent.Unlock()
	if err != nil {
		c.forget(m.ID)
		return reply{}, fmt.Errorf("sandbox launcher: %w", err)
	}
	select {
	case r := <-ch:
		return r, nil
	case <-c.dead:
		c.forget(m.ID)
		return reply{}, c.deadErr
	case <-ctx.Done():
		// The launcher answers every request; the files of a reply nobody
		// waits for any more are closed when it comes.
		go func() {
			select {
			case r := <-ch:
				closeFiles(r.files)
			case <-c.dead:
			}
		}()
		return reply{}, ctx.Err()
	}
}

func (c *conn) forget(id uint64) {
	c.mu.Lock()
	delete(c.replies, id)
	c.mu.Unlock()
}

// close ends the launcher, which takes every command with it (they are in
// its pid namespace), and reaps it.
func (c *conn) close() error {
	_ = unix.Shutdown(c.fd, unix.SHUT_RDWR)
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(5 * time.Second):
		_ = c.cmd.Process.Kill()
		err = <-done
	}
	<-c.read
	unix.Close(c.fd)
	releaseLauncherThread()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return nil // killed with its commands, as intended
	}
	return err
}

// launched is a command the launcher started (proc.Launched).
type launched struct {
	c     *conn
	pid   int
	pidfd int
	exit  chan int
}

func (l *launched) Pidfd() int { return l.pidfd }

func (l *launched) Wait() (syscall.WaitStatus, error) {
	select {
	case st := <-l.exit:
		return syscall.WaitStatus(st), nil
	case <-l.c.dead:
		// The launcher died, and the command with it (SIGKILL).
		select {
		case st := <-l.exit:
			return syscall.WaitStatus(st), nil
		default:
		}
		return syscall.WaitStatus(uint32(syscall.SIGKILL)), nil
	}
}

// policyConn is Cohort's connection to one policy thread of the
// launcher. One request at a time: the caller that sends reads the reply
// itself, on its own thread, so a spawn wakes nothing else here.
type policyConn struct {
	c  *conn
	mu sync.Mutex
	fd int
}

// spawnTimeout bounds the wait for a spawn's reply (a fork: milliseconds).
const spawnTimeout = 30 * time.Second

func newPolicyConn(c *conn, f *os.File) (*policyConn, error) {
	fd, err := unix.Dup(int(f.Fd()))
	if err != nil {
		return nil, err
	}
	unix.CloseOnExec(fd)
	tv := unix.NsecToTimeval(spawnTimeout.Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &policyConn{c: c, fd: fd}, nil
}

func (p *policyConn) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fd >= 0 {
		unix.Close(p.fd)
		p.fd = -1
	}
}

// spawn starts one command.
func (p *policyConn) spawn(ctx context.Context, spec proc.LaunchSpec) (proc.Launched, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m := &message{Op: "spawn", Path: spec.Path, Args: spec.Args, Env: spec.Env, Dir: spec.Dir, NewSession: spec.NewSession}
	p.mu.Lock()
	if p.fd < 0 {
		p.mu.Unlock()
		return nil, ErrClosed
	}
	err := send(p.fd, m, int(spec.Stdio[0].Fd()), int(spec.Stdio[1].Fd()), int(spec.Stdio[2].Fd()))
	runtime.KeepAlive(spec.Stdio)
	var r *message
	var files []*os.File
	if err == nil {
		var buf [4096]byte
		oob := make([]byte, unix.CmsgSpace(4*maxFiles))
		r, files, err = recv(p.fd, buf[:], oob)
	}
	p.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("sandbox launcher: %w", err)
	}
	if r.Err != "" || len(files) != 1 {
		closeFiles(files)
		if r.Err == "" {
			r.Err = "no pidfd in the reply"
		}
		return nil, errors.New(r.Err)
	}
	pidfd, err := unix.Dup(int(files[0].Fd()))
	files[0].Close()
	if err != nil {
		return nil, err
	}
	unix.CloseOnExec(pidfd)
	c := p.c
	l := &launched{c: c, pid: r.Pid, pidfd: pidfd, exit: make(chan int, 1)}
	c.mu.Lock()
	if st, ok := c.early[l.pid]; ok {
		delete(c.early, l.pid)
		l.exit <- st
	} else {
		c.exits[l.pid] = l.exit
	}
	c.mu.Unlock()
	return l, nil
}
