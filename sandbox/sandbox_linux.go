//go:build linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/cohort-dev/cohort/internal/proc"
)

// Sandbox confines the Bash commands of one session. It owns the session's
// launcher process and private temporary directory. Safe for concurrent
// use; Close may be called more than once.
type Sandbox struct {
	cfg            Config
	tmp            string
	pool           string   // every session's TMPDIRs, when tmp is among them (unreadable)
	writableExtras []string // TMPDIR, the cache dir and sandbox.allowWrite
	problems       []string
	shieldNote     *Report // an unconfined sandbox: what keeps its commands out of Cohort

	mu       sync.Mutex
	c        *conn
	startErr error
	started  bool
	closed   bool
	policies map[string]*policyEntry
	retired  []*policyEntry // replaced by a rebuilt policy; closed with the rest
	// allowed are the directories AllowWrite added; gen counts the calls,
	// so that a writing policy set up before the last one is set up again.
	allowed []string
	gen     int
}

type policyEntry struct {
	ready  chan struct{}
	conn   *policyConn
	policy *Policy
	report *Report
	err    error
	frozen string // frozenPrint of policy when it was built
	// watched is watchedPrint when the policy was built.
	watched string
	// gen is the Sandbox's gen when the entry was made.
	gen int
}

// watchPrint lists the entries of the DenyReadWatch directory, whose
// Read denials a policy hides; "" when there is none.
func (s *Sandbox) watchPrint() string {
	if s.cfg.DenyReadWatch == "" || s.cfg.DenyReadIn == nil {
		return ""
	}
	entries, _ := os.ReadDir(s.cfg.DenyReadWatch)
	var b strings.Builder
	for _, e := range entries {
		b.WriteString(e.Name() + "\x00")
	}
	return b.String()
}

// watchedPrint is what a policy of profile prof is set up again for when
// it changes: the ancestors' entries of what Cohort's own programs cannot
// read (readPrint) for a helper's, DenyReadWatch's for the rest.
func (s *Sandbox) watchedPrint(prof Profile) string {
	if prof == helper {
		return s.readPrint()
	}
	return s.watchPrint()
}

// frozenPrint lists the directories at the top of a policy's frozen
// roots, which the policy's Landlock rules were made for; "" when none is
// frozen.
func frozenPrint(p *Policy) string {
	var b strings.Builder
	for _, w := range append(append([]string(nil), p.FrozenDirs...), p.FrozenAll...) {
		entries, _ := os.ReadDir(w)
		b.WriteString(w)
		for _, e := range entries {
			if e.IsDir() || e.Type()&os.ModeSymlink != 0 {
				b.WriteString("\x00" + e.Name())
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

// frozenReport says, for a report, which roots take no new directories
// and why.
func frozenReport(p *Policy) []string {
	var out []string
	for _, w := range p.Why {
		out = append(out, "no new directories or links at the top of "+w+" (create the missing settings directory yourself to lift this)")
	}
	return out
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
		s := &Sandbox{cfg: cfg, policies: map[string]*policyEntry{}}
		s.shieldNote = s.shieldFromUnconfined()
		return s, nil
	}
	root := cfg.TempRoot
	pool := ""
	if root == "" && cfg.CohortHome != "" && cfg.SessionID != "" {
		// The session's temporary directory (made by the task registry),
		// so that a session killed before Close leaves nothing in /tmp:
		// the next session sweeps it with the rest.
		if fi, err := os.Stat(filepath.Join(cfg.CohortHome, "tmp", cfg.SessionID)); err == nil && fi.IsDir() {
			root = filepath.Join(cfg.CohortHome, "tmp", cfg.SessionID)
			pool, _ = filepath.EvalSymlinks(filepath.Join(cfg.CohortHome, "tmp"))
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
	s := &Sandbox{cfg: cfg, tmp: tmp, pool: pool, policies: map[string]*policyEntry{}}
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

// Report sets up the writing policy of commands run with working
// directory cwd and says what it enforces.
func (s *Sandbox) Report(ctx context.Context, cwd string) (*Report, error) {
	return s.ReportFor(ctx, cwd, Writing)
}

// ReportFor is Report for a profile.
func (s *Sandbox) ReportFor(ctx context.Context, cwd string, prof Profile) (*Report, error) {
	e, err := s.entry(ctx, cwd, prof)
	if err != nil {
		return nil, err
	}
	return e.report, e.err
}

// policyKey names a policy: the read-only and the writing profile one per
// agent's working directory (the read-only rules are the same for every
// directory, but what is hidden depends on it: Config.DenyReadIn), a
// helper's one per set of writable directories.
func policyKey(cwd string, prof Profile) string {
	switch prof {
	case Writing:
		return "w:" + cwd
	case helper:
		return "h:" + cwd
	case granting:
		return "g:" + cwd
	}
	return "r:" + cwd
}

// Helper returns the launcher for one of Cohort's own programs that works
// on state a model may have written (git, package internal/safegit): it
// reads what the read-only profile reads, writes only the given
// directories (none: read-only) and its private TMPDIR, and has no
// network and no Unix sockets. An unconfined sandbox confines nothing.
func (s *Sandbox) Helper(ctx context.Context, writable []string) (proc.Launcher, error) {
	var dirs []string
	for _, w := range writable {
		r, ok := realDir(w)
		if !ok {
			return nil, fmt.Errorf("the directory %s a helper would write does not exist", w)
		}
		addOnce(&dirs, r)
	}
	slices.Sort(dirs)
	return s.Launcher(ctx, strings.Join(dirs, "\x00"), helper)
}

// entry returns the policy of cwd's commands in profile prof, set up in
// the launcher on first use.
func (s *Sandbox) entry(ctx context.Context, cwd string, prof Profile) (*policyEntry, error) {
	c, err := s.conn()
	if err != nil {
		return nil, err
	}
	key := policyKey(cwd, prof)
	s.mu.Lock()
	e, ok := s.policies[key]
	if !ok {
		e = &policyEntry{ready: make(chan struct{}), gen: s.gen}
		s.policies[key] = e
	}
	stale := (prof == Writing || prof == granting) && e.gen != s.gen
	s.mu.Unlock()
	if ok {
		select {
		case <-e.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if !stale && (e.err != nil || (e.frozen == "" || frozenPrint(e.policy) == e.frozen) && s.watchedPrint(prof) == e.watched) {
			return e, nil
		}
		// A directory appeared at the top of a frozen root (made by
		// Cohort's file tools or the user): it needs a rule of its own,
		// and a settings directory that now exists is bound read-only.
		// Or a worktree came or went, whose copies of denied files the
		// policy hides. Or the user let commands write more (AllowWrite).
		s.mu.Lock()
		if s.policies[key] == e {
			s.retired = append(s.retired, e)
			delete(s.policies, key)
		}
		s.mu.Unlock()
		return s.entry(ctx, cwd, prof)
	}
	if prof == helper {
		e.watched = s.watchedPrint(prof) // before Readable is listed
	}
	e.policy = s.policyFor(cwd, prof) // reads the file system: not under s.mu; others wait on ready
	if prof != helper {
		// Cohort's own git must see the tree as it is: a hidden file
		// would be a deleted one to it.
		e.watched = s.watchPrint() // before the denials it stands for are read
		dir := cwd
		if prof == granting {
			dir, _ = grantedKey(cwd)
		}
		s.hideIn(e.policy, dir)
	}
	e.frozen = frozenPrint(e.policy)
	r, err := c.call(ctx, &message{Op: "policy", Policy: e.policy})
	if err != nil {
		s.mu.Lock()
		delete(s.policies, key) // the next call tries again
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
	e.report.Enforced = append(e.report.Enforced, frozenReport(e.policy)...)
	e.report.NotEnforced = append(e.report.NotEnforced, e.policy.Notes...)
	if s.shieldNote != nil {
		e.report.Enforced = append(e.report.Enforced, s.shieldNote.Enforced...)
		e.report.NotEnforced = append(e.report.NotEnforced, s.shieldNote.NotEnforced...)
	}
	if r.m.Err != "" {
		e.err = errors.New(r.m.Err)
	}
	close(e.ready)
	return e, nil
}

// AllowWrite lets commands of the writing profile write in dirs, existing
// directories, for the rest of the session, as sandbox.allowWrite does
// (the user allowed them in a prompt). Writing policies set up before are
// set up again at their next command; commands already running keep what
// they started with. "/" is refused, and an unconfined sandbox has
// nothing to open.
func (s *Sandbox) AllowWrite(dirs ...string) error {
	var add []string
	for _, d := range dirs {
		r, ok := realDir(d)
		switch {
		case !ok:
			return fmt.Errorf("sandbox: %s is not a directory, so commands cannot be let write in it", d)
		case r == "/":
			return errors.New("sandbox: commands cannot be let write the whole file system")
		}
		add = append(add, r)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range add {
		addOnce(&s.allowed, r)
	}
	s.gen++
	return nil
}

// allowedDirs are the directories AllowWrite added.
func (s *Sandbox) allowedDirs() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.allowed)
}

// Launcher returns the proc.Launcher that starts commands for an agent
// whose working directory is cwd, in profile prof (an unconfined sandbox
// ignores it).
func (s *Sandbox) Launcher(ctx context.Context, cwd string, prof Profile) (proc.Launcher, error) {
	e, err := s.entry(ctx, cwd, prof)
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

// Writable lists the trees commands of cwd's agent may write in the
// writing profile, and the protected paths inside them.
func (s *Sandbox) Writable(cwd string) (writable, protected []string) {
	return s.WritableFor(cwd, Writing)
}

// ExplainFor is Explain with the policy of cwd's commands in profile
// prof, which also says why a root takes no new directories.
func (s *Sandbox) ExplainFor(output, cwd string, prof Profile) string {
	return explain(output, cwd, s.cachedPolicy(cwd, prof))
}

// cachedPolicy is the policy cwd's commands run with, when it is set up;
// else it is built now.
func (s *Sandbox) cachedPolicy(cwd string, prof Profile) *Policy {
	s.mu.Lock()
	e, ok := s.policies[policyKey(cwd, prof)]
	s.mu.Unlock()
	if ok {
		select {
		case <-e.ready:
			if e.policy != nil {
				return e.policy
			}
		default:
		}
	}
	return s.policyFor(cwd, prof)
}

// WritableFor is Writable for a profile.
func (s *Sandbox) WritableFor(cwd string, prof Profile) (writable, protected []string) {
	p := s.cachedPolicy(cwd, prof)
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
	for _, e := range append(slices.Collect(maps.Values(s.policies)), s.retired...) {
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
