//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

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
		ns := strings.HasPrefix(mode, "ns:")
		if ns {
			if err := mapSelf(strings.TrimPrefix(mode, "ns:")); err != nil {
				fmt.Fprintf(os.Stderr, "cohort sandbox launcher: %v\n", err)
				os.Exit(1)
			}
		}
		os.Exit(launcherMain(ns))
	}
}

// mapSelf maps the launcher's user and group ("uid:gid", Cohort's) to
// themselves in the user namespace it was cloned into: setgroups first
// denied, as an unprivileged mapping requires.
func mapSelf(ids string) error {
	uid, gid, ok := strings.Cut(ids, ":")
	if !ok {
		return fmt.Errorf("bad ids %q", ids)
	}
	for _, w := range [][2]string{{"/proc/self/setgroups", "deny"}, {"/proc/self/uid_map", uid + " " + uid + " 1"}, {"/proc/self/gid_map", gid + " " + gid + " 1"}} {
		if err := os.WriteFile(w[0], []byte(w[1]), 0); err != nil {
			return fmt.Errorf("user namespace: %w", err)
		}
	}
	return nil
}

// launcher is the state of the launcher process.
type launcher struct {
	conn int
	ns   bool
	// mu orders a fork, its reply and the reaping of the child: the exit
	// of a command is reported only after the reply that names it.
	mu       sync.Mutex
	cond     *sync.Cond // signalled when a child is added
	children map[int]bool
}

func launcherMain(ns bool) int {
	// Every descriptor beyond the standard streams is closed on exec: the
	// connection to Cohort (fd 3, which exec.Cmd.ExtraFiles leaves
	// inheritable) and whatever Cohort's own parent passed down. Commands
	// get their three streams and nothing else.
	if err := unix.CloseRange(launcherFd, ^uint(0), unix.CLOSE_RANGE_CLOEXEC); err != nil {
		return 1
	}
	l := &launcher{conn: launcherFd, ns: ns, children: map[int]bool{}}
	// Die with the thread of Cohort that started us (a thread that lives
	// as long as Cohort); Go's Pdeathsig cannot be used with a new pid
	// namespace, where getppid is 0 and it would kill us at once. The
	// connection closing is the other way we learn Cohort is gone. In our
	// own pid namespace dying is enough: the kernel kills every command
	// with its init. Without one we are the commands' child subreaper, and
	// the signal is one we catch, to kill what is left under us first.
	if ns {
		_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0)
	} else {
		_ = unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
		died := make(chan os.Signal, 1)
		signal.Notify(died, syscall.SIGTERM)
		_ = unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0, 0, 0)
		go func() {
			<-died
			killDescendants(time.Now().Add(killWait))
			os.Exit(0)
		}()
	}
	l.cond = sync.NewCond(&l.mu)
	hello := &message{Op: "hello", Report: &Report{Namespaces: ns}}
	if ns {
		if err := l.setUpNamespaces(hello.Report); err != nil {
			hello.Err = err.Error()
			_ = send(l.conn, hello) // Cohort falls back to a launcher without namespaces
			return 1
		}
	}
	// Not dumpable from here on (the uid and gid maps are written): a
	// command that got past the seccomp filter's ptrace rule still could
	// not trace the launcher or open its memory, descriptors or
	// environment through /proc (it lacks CAP_SYS_PTRACE). A command's
	// own exec makes it dumpable again.
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	if err := send(l.conn, hello); err != nil {
		return 1
	}
	// The launcher reaps every child; it is pid 1 of its namespace, so
	// orphans come to it too.
	go l.reap()
	l.serve()
	if !ns {
		// Without a pid namespace the commands do not die with us: kill
		// them and everything they left behind.
		killDescendants(time.Now().Add(killWait))
	}
	return 0
}

// setUpNamespaces makes the mounts private and mounts a /proc of the new
// pid namespace, so commands see no process outside the sandbox.
func (l *launcher) setUpNamespaces(rep *Report) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		// A container may hide parts of /proc, and then a new one cannot
		// be mounted: commands still die with the launcher, but see the
		// processes outside.
		rep.NotEnforced = append(rep.NotEnforced, fmt.Sprintf("processes outside the sandbox are visible in /proc (a /proc of the sandbox cannot be mounted here: %v)", err))
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
		default:
			_ = send(l.conn, &message{Op: "reply", ID: m.ID, Err: "unknown request " + m.Op})
		}
		closeFiles(files)
	}
}

// policyThread is a locked OS thread restricted to one policy, which
// forks that policy's commands. It has a connection of its own to Cohort,
// so a spawn request wakes the thread that forks and nothing else.
type policyThread struct {
	conn  int
	err   error
	limit uint64 // Policy.DataLimit
}

func (l *launcher) policy(m *message) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		_ = send(l.conn, &message{Op: "reply", ID: m.ID, Err: "policy connection: " + err.Error()})
		return
	}
	t := &policyThread{conn: fds[0], limit: m.Policy.DataLimit}
	ready := make(chan *Report)
	go func() {
		// Locked for good: the thread carries the sandbox, and its
		// restrictions cannot be undone. It ends with the launcher.
		runtime.LockOSThread()
		rep, err := confine(m.Policy, l.ns)
		t.err = err
		ready <- rep
		l.serveSpawns(t)
	}()
	rep := <-ready
	reply := &message{Op: "reply", ID: m.ID, Report: rep}
	if t.err != nil {
		reply.Err = t.err.Error()
	}
	_ = send(l.conn, reply, fds[1])
	unix.Close(fds[1])
}

// serveSpawns forks the commands asked for on t's connection, on t's
// thread, until Cohort closes it.
func (l *launcher) serveSpawns(t *policyThread) {
	buf, oob := make([]byte, maxPacket), make([]byte, unix.CmsgSpace(4*maxFiles))
	for {
		m, files, err := recv(t.conn, buf, oob)
		if err != nil {
			return
		}
		l.spawn(t, m, files)
		closeFiles(files)
	}
}

// spawn forks a command and replies with its pid and a pidfd. It runs on
// the policy's thread.
func (l *launcher) spawn(t *policyThread, m *message, files []*os.File) {
	fail := func(format string, args ...any) {
		_ = send(t.conn, &message{Op: "reply", ID: m.ID, Err: fmt.Sprintf(format, args...)})
	}
	switch {
	case t.err != nil:
		fail("the sandbox could not be set up: %v", t.err)
		return
	case m.Op != "spawn" || len(files) != 3:
		fail("want a spawn request with 3 files, got %s with %d", m.Op, len(files))
		return
	}
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
	l.cond.Signal()
	if pidfd < 0 {
		_ = unix.Kill(pid, unix.SIGKILL)
		fail("no pidfd for the command")
		return
	}
	if t.limit > 0 {
		// Set once the command runs (ForkExec has no rlimit of its own):
		// what it allocated before counts against the limit all the same.
		// ESRCH: it has exited already and reap, which waits on every
		// child at once while another runs, took it; it allocates nothing
		// more, and its exit is reported once this reply is sent (l.mu).
		err := unix.Prlimit(pid, unix.RLIMIT_DATA, &unix.Rlimit{Cur: t.limit, Max: t.limit}, nil)
		if err != nil && !errors.Is(err, unix.ESRCH) {
			_ = unix.PidfdSendSignal(pidfd, unix.SIGKILL, nil, 0) // not by pid: reap may have taken it
			unix.Close(pidfd)
			fail("limit the command's memory: %v", err)
			return
		}
	}
	_ = send(t.conn, &message{Op: "reply", ID: m.ID, Pid: pid}, pidfd)
	unix.Close(pidfd)
}

// reap waits for every child and reports the commands' exits. It blocks
// in wait4 itself, so an exit wakes it directly; with no child to wait
// for it sleeps until a spawn.
func (l *launcher) reap() {
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, unix.WALL, nil)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.ECHILD:
			l.mu.Lock()
			for len(l.children) == 0 {
				l.cond.Wait()
			}
			l.mu.Unlock()
			continue
		case err != nil:
			return
		}
		l.mu.Lock()
		if l.children[pid] {
			delete(l.children, pid)
			_ = send(l.conn, &message{Op: "exit", Pid: pid, Status: int(ws)})
		}
		l.mu.Unlock()
	}
}
