//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// launcherEnv marks a re-executed Cohort binary as a session's launcher;
// its value is "ns" when the launcher runs in its own namespaces, "plain"
// otherwise. The connection to Cohort is file descriptor 3.
const launcherEnv = "COHORT_SANDBOX_LAUNCHER"

const launcherFd = 3

// init turns this process into the launcher when Cohort started it as
// one. It runs before main (and before a test binary's TestMain), so every
// program that links this package can serve as its own launcher without
// wiring.
func init() {
	if mode := os.Getenv(launcherEnv); mode != "" {
		os.Exit(launcherMain(mode == "ns"))
	}
}

// launcher is the state of the launcher process.
type launcher struct {
	conn int
	ns   bool
	// mu orders a fork, its reply and the reaping of the child: the exit
	// of a command is reported only after the reply that names it.
	mu       sync.Mutex
	children map[int]bool
	policies map[uint64]*policyThread
}

func launcherMain(ns bool) int {
	// Die with the thread of Cohort that started us (a thread that lives
	// as long as Cohort); Go's Pdeathsig cannot be used with a new pid
	// namespace, where getppid is 0 and it would kill us at once. The
	// connection closing is the other way we learn Cohort is gone.
	_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0)
	l := &launcher{conn: launcherFd, ns: ns, children: map[int]bool{}, policies: map[uint64]*policyThread{}}
	if ns {
		if err := l.setUpNamespaces(); err != nil {
			fmt.Fprintf(os.Stderr, "cohort sandbox launcher: %v\n", err)
			return 1
		}
	}
	// The launcher reaps every child; it is pid 1 of its namespace, so
	// orphans come to it too.
	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, syscall.SIGCHLD)
	go l.reap(sigs)
	l.serve()
	if !ns {
		// Without a pid namespace the commands do not die with us: stop
		// their groups.
		l.mu.Lock()
		for pid := range l.children {
			_ = unix.Kill(-pid, unix.SIGKILL)
		}
		l.mu.Unlock()
	}
	return 0
}

// setUpNamespaces makes the mounts private and mounts a /proc of the new
// pid namespace, so commands see no process outside the sandbox.
func (l *launcher) setUpNamespaces() error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc: %w", err)
	}
	return nil
}

func (l *launcher) serve() {
	buf, oob := make([]byte, maxPacket), make([]byte, unix.CmsgSpace(4*maxFiles))
	for {
		m, files, err := recv(l.conn, buf, oob)
		if err != nil {
			return // Cohort closed the connection or exited
		}
		switch m.Op {
		case "policy":
			l.policy(m)
		case "spawn":
			l.spawn(m, files)
		default:
			_ = send(l.conn, &message{Op: "reply", ID: m.ID, Err: "unknown request " + m.Op})
		}
		closeFiles(files)
	}
}

// policyThread is a locked OS thread restricted to one policy, which
// forks that policy's commands.
type policyThread struct {
	reqs chan func()
	err  error
}

func (l *launcher) policy(m *message) {
	t := &policyThread{reqs: make(chan func())}
	ready := make(chan *Report)
	go func() {
		// Locked for good: the thread carries the sandbox, and its
		// restrictions cannot be undone. It ends with the launcher.
		runtime.LockOSThread()
		rep, err := confine(m.Policy, l.ns)
		t.err = err
		ready <- rep
		for f := range t.reqs {
			f()
		}
	}()
	rep := <-ready
	l.policies[m.ID] = t
	reply := &message{Op: "reply", ID: m.ID, Report: rep}
	if t.err != nil {
		reply.Err = t.err.Error()
	}
	_ = send(l.conn, reply)
}

// spawn forks a command on its policy's thread and replies with its pid
// and a pidfd.
func (l *launcher) spawn(m *message, files []*os.File) {
	t := l.policies[m.PolicyID]
	fail := func(format string, args ...any) {
		_ = send(l.conn, &message{Op: "reply", ID: m.ID, Err: fmt.Sprintf(format, args...)})
	}
	switch {
	case t == nil:
		fail("unknown policy %d", m.PolicyID)
		return
	case t.err != nil:
		fail("the sandbox could not be set up: %v", t.err)
		return
	case len(files) != 3:
		fail("spawn needs 3 files, got %d", len(files))
		return
	}
	done := make(chan struct{})
	t.reqs <- func() {
		defer close(done)
		pidfd := -1
		attr := &syscall.ProcAttr{Dir: m.Dir, Env: m.Env, Files: []uintptr{files[0].Fd(), files[1].Fd(), files[2].Fd()},
			Sys: &syscall.SysProcAttr{Setsid: m.NewSession, Setpgid: !m.NewSession, PidFD: &pidfd}}
		l.mu.Lock()
		defer l.mu.Unlock()
		pid, err := syscall.ForkExec(m.Path, append([]string{m.Path}, m.Args...), attr)
		if err != nil {
			fail("start %s: %v", m.Path, err)
			return
		}
		l.children[pid] = true
		if pidfd < 0 {
			_ = send(l.conn, &message{Op: "reply", ID: m.ID, Pid: pid, Err: "no pidfd for the command"})
			return
		}
		_ = send(l.conn, &message{Op: "reply", ID: m.ID, Pid: pid}, pidfd)
		unix.Close(pidfd)
	}
	<-done
}

// reap waits for every child and reports the commands' exits.
func (l *launcher) reap(sigs <-chan os.Signal) {
	for range sigs {
		for {
			var ws unix.WaitStatus
			pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
			if err == unix.EINTR {
				continue
			}
			if pid <= 0 || err != nil {
				break
			}
			l.mu.Lock()
			if l.children[pid] {
				delete(l.children, pid)
				_ = send(l.conn, &message{Op: "exit", Pid: pid, Status: int(ws)})
			}
			l.mu.Unlock()
		}
	}
}
