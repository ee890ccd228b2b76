//go:build linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/cohort-dev/cohort/internal/proc"
)

// Sandbox confines the Bash commands of one session. It owns the session's
// launcher process and private temporary directory. Safe for concurrent
// use; Close may be called more than once.
type Sandbox struct {
	cfg            Config
	tmp            string
	writableExtras []string // TMPDIR, the cache dir and sandbox.allowWrite
	problems       []string

	mu       sync.Mutex
	c        *conn
	startErr error
	started  bool
	closed   bool
	policies map[string]*policyEntry
}

type policyEntry struct {
	ready  chan struct{}
	conn   *policyConn
	policy *Policy
	report *Report
	err    error
}

// ErrClosed is returned by a closed Sandbox.
var ErrClosed = errors.New("sandbox: closed")

// New prepares a sandbox: it makes the private TMPDIR and checks the
// configured roots. The launcher starts with Start or the first command.
func New(cfg Config) (*Sandbox, error) {
	if cfg.Executable == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("sandbox: cannot find the executable to start the launcher from: %w", err)
		}
		cfg.Executable = exe
	}
	if cfg.Unconfined {
		return &Sandbox{cfg: cfg, policies: map[string]*policyEntry{}}, nil
	}
	root := cfg.TempRoot
	if root == "" && cfg.CohortHome != "" && cfg.SessionID != "" {
		// The session's temporary directory (made by the task registry),
		// so that a session killed before Close leaves nothing in /tmp:
		// the next session sweeps it with the rest.
		if fi, err := os.Stat(filepath.Join(cfg.CohortHome, "tmp", cfg.SessionID)); err == nil && fi.IsDir() {
			root = filepath.Join(cfg.CohortHome, "tmp", cfg.SessionID)
		}
	}
	if root == "" {
		root = os.TempDir()
	}
	tmp, err := os.MkdirTemp(root, "cohort-sandbox-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: private temp dir: %w", err)
	}
	if r, err := filepath.EvalSymlinks(tmp); err == nil {
		tmp = r
	}
	s := &Sandbox{cfg: cfg, tmp: tmp, policies: map[string]*policyEntry{}}
	s.writableExtras = append(s.writableExtras, tmp)
	cache := cfg.CacheDir
	if cache == "" {
		cache = os.Getenv("XDG_CACHE_HOME")
	}
	if cache == "" && cfg.Home != "" {
		cache = filepath.Join(cfg.Home, ".cache")
	}
	if cache != "" {
		_ = os.MkdirAll(cache, 0o700) // builds want it
		if r, ok := realDir(cache); ok {
			s.writableExtras = append(s.writableExtras, r)
		}
	}
	for _, w := range cfg.AllowWrite {
		r, ok := realDir(w)
		if !ok {
			s.problems = append(s.problems, fmt.Sprintf("sandbox.allowWrite entry %s does not exist or is not a directory; it is skipped", w))
			continue
		}
		s.writableExtras = append(s.writableExtras, r)
	}
	return s, nil
}

// Problems lists what was wrong with the configuration (each was skipped).
func (s *Sandbox) Problems() []string { return append([]string(nil), s.problems...) }

// TempDir is the private temporary directory, exported as TMPDIR.
func (s *Sandbox) TempDir() string { return s.tmp }

// Env is what a sandboxed command's environment gets on top of Cohort's.
func (s *Sandbox) Env() []string {
	if s.cfg.Unconfined {
		return nil
	}
	return []string{"TMPDIR=" + s.tmp}
}

// Start starts the launcher now rather than at the first command: in new
// user, mount and pid namespaces where the kernel allows, else as a plain
// process. It returns an error only when no launcher can run at all.
func (s *Sandbox) Start() error {
	_, err := s.conn()
	return err
}

func (s *Sandbox) conn() (*conn, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, ErrClosed
	}
	if s.started {
		return s.c, s.startErr
	}
	s.started = true
	if !proc.GroupSignals() {
		s.startErr = errors.New("this kernel cannot signal a process group through a pidfd (Linux 6.9), which sandboxed commands need")
		return nil, s.startErr
	}
	if !s.cfg.without("namespaces") && !s.cfg.Unconfined {
		if c, err := startLauncher(s.cfg.Executable, true); err == nil {
			s.c = c
			return c, nil
		} else {
			s.problems = append(s.problems, fmt.Sprintf("user namespaces are unavailable (%v)", err))
		}
	}
	s.c, s.startErr = startLauncher(s.cfg.Executable, false)
	return s.c, s.startErr
}

// Report sets up the policy of commands run with working directory cwd
// and says what it enforces.
func (s *Sandbox) Report(ctx context.Context, cwd string) (*Report, error) {
	e, err := s.entry(ctx, cwd)
	if err != nil {
		return nil, err
	}
	return e.report, e.err
}

// entry returns cwd's policy, set up in the launcher on first use.
func (s *Sandbox) entry(ctx context.Context, cwd string) (*policyEntry, error) {
	c, err := s.conn()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	e, ok := s.policies[cwd]
	if !ok {
		e = &policyEntry{ready: make(chan struct{})}
		s.policies[cwd] = e
	}
	s.mu.Unlock()
	if ok {
		select {
		case <-e.ready:
			return e, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	e.policy = s.policy(cwd) // runs git: not under s.mu; others wait on ready
	s.hideIn(e.policy, cwd)
	r, err := c.call(ctx, &message{Op: "policy", Policy: e.policy})
	if err != nil {
		s.mu.Lock()
		delete(s.policies, cwd) // the next call tries again
		s.mu.Unlock()
		e.err = err // for those already waiting on this entry
		close(e.ready)
		return nil, err
	}
	if len(r.files) == 1 {
		e.conn, err = newPolicyConn(c, r.files[0])
	}
	closeFiles(r.files)
	if e.conn == nil && r.m.Err == "" {
		r.m.Err = fmt.Sprintf("no connection to the policy thread (%v)", err)
	}
	e.report = r.m.Report
	if e.report == nil {
		e.report = &Report{}
	}
	e.report.Namespaces = c.ns
	e.report.NotEnforced = append(e.report.NotEnforced, c.notes...)
	e.report.NotEnforced = append(e.report.NotEnforced, s.cfg.DenyReadUncovered...)
	if !c.ns && !s.cfg.Unconfined {
		if e.report.Landlock == 0 {
			e.report.NotEnforced = append(e.report.NotEnforced, "commands can see every process on the machine in /proc, and read the environment and memory of the user's other processes and ptrace them: no pid namespace, no Landlock")
			s.shieldCohort(e.report)
		} else {
			e.report.NotEnforced = append(e.report.NotEnforced, "commands can see every process on the machine in /proc (command lines included): no pid namespace; Landlock keeps them from reading the environment or memory of processes outside the sandbox")
		}
	}
	if r.m.Err != "" {
		e.err = errors.New(r.m.Err)
	}
	close(e.ready)
	return e, nil
}

// Launcher returns the proc.Launcher that starts commands for an agent
// whose working directory is cwd.
func (s *Sandbox) Launcher(ctx context.Context, cwd string) (proc.Launcher, error) {
	e, err := s.entry(ctx, cwd)
	if err != nil {
		return nil, err
	}
	if e.err != nil {
		return nil, fmt.Errorf("the sandbox could not be set up: %w", e.err)
	}
	return policyLauncher{s: s, e: e}, nil
}

type policyLauncher struct {
	s *Sandbox
	e *policyEntry
}

func (l policyLauncher) Launch(ctx context.Context, spec proc.LaunchSpec) (proc.Launched, error) {
	return l.e.conn.spawn(ctx, spec)
}

// Writable lists the trees commands of cwd's agent may write, and the
// protected paths inside them.
func (s *Sandbox) Writable(cwd string) (writable, protected []string) {
	s.mu.Lock()
	e, ok := s.policies[cwd]
	s.mu.Unlock()
	if ok {
		select {
		case <-e.ready:
			if e.policy != nil {
				return e.policy.Writable, e.policy.ReadOnly
			}
		default:
		}
	}
	p := s.policy(cwd)
	return p.Writable, p.ReadOnly
}

// Close stops the launcher, and with it every command still running, and
// removes the private temporary directory.
func (s *Sandbox) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	c := s.c
	for _, e := range s.policies {
		select {
		case <-e.ready: // e.conn is set before ready closes
			if e.conn != nil {
				e.conn.close()
			}
		default: // still being set up: closing the launcher ends it
		}
	}
	s.mu.Unlock()
	var err error
	if c != nil {
		err = c.close()
	}
	if s.tmp == "" {
		return err
	}
	return errors.Join(err, os.RemoveAll(s.tmp))
}
