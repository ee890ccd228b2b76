package tmux

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/internal/clip"
	"github.com/cohort-dev/cohort/internal/lazyre"
	"github.com/cohort-dev/cohort/internal/proc"
)

// Sentinel errors callers branch on. Returned errors wrap them with context.
var (
	// ErrNotInstalled: no tmux executable was found.
	ErrNotInstalled = errors.New("tmux is not installed")
	// ErrTooOld: the tmux found is older than 2.0.
	ErrTooOld = errors.New("tmux is too old")
	// ErrNotInside: $TMUX is not set, so there is no current server.
	ErrNotInside = errors.New("not running inside tmux")
	// ErrNoServer: no tmux server answers on the socket.
	ErrNoServer = errors.New("no tmux server running")
	// ErrNoPane: the pane does not exist (never did, or was killed).
	ErrNoPane = errors.New("no such tmux pane")
	// ErrServerExists: StartServer found a server already running on its
	// socket; it never adopts (and so never kills) a server it did not start.
	ErrServerExists = errors.New("a tmux server is already running on this socket")
	// ErrClosed: the Server was closed.
	ErrClosed = errors.New("tmux server handle is closed")
)

// Defaults for zero configuration values.
const (
	DefaultSession = "cohort"
	DefaultWidth   = 200
	DefaultHeight  = 50
	DefaultTimeout = 10 * time.Second
	DefaultGrace   = 2 * time.Second
)

// maxSocketPath is the longest socket path bind(2) accepts on Linux
// (sun_path is 108 bytes including the terminating NUL); macOS allows 103.
const maxSocketPath = 107

// Server is a handle on one tmux server: the user's own (Current) or a
// private one started for a headless run (StartServer). Its methods are
// safe for concurrent use; each runs one short-lived tmux client, and the
// tmux server serialises the commands. Close may be called more than once.
type Server struct {
	bin     string   // tmux executable
	socket  string   // absolute socket path, passed with -S to every call
	env     []string // environment of every tmux client
	version Version
	feat    features
	timeout time.Duration
	grace   time.Duration

	// defaultTarget is what SplitPane splits and NewWindow places a window
	// after when PaneSpec.Target is empty: the pane we run in ($TMUX_PANE)
	// or the private session ("=name:").
	defaultTarget string

	private   bool
	serverPID int // the private server's pid

	closeOnce sync.Once
	closeErr  error
	closed    chan struct{}
}

// ServerConfig configures StartServer.
type ServerConfig struct {
	// Socket is the path of the private server's socket (required; at most
	// 107 bytes). Keep it in a directory only we can write, such as
	// t.TempDir() or $COHORT_HOME/tmux/.
	Socket string
	// Session names the server's one session (default "cohort").
	Session string
	// Width and Height are the size of the detached session's window
	// (default 200×50), which the panes share.
	Width, Height int
	// Bin is the tmux executable (default "tmux", looked up in PATH).
	Bin string
	// Env is the server's environment, which every pane inherits; nil
	// means ours. TMUX and TMUX_PANE are always removed from it.
	Env []string
	// Timeout bounds each tmux command whose context has no deadline
	// (default 10 s).
	Timeout time.Duration
	// Grace is how long Kill and Close wait after SIGTERM before they
	// SIGKILL a pane's processes (default 2 s).
	Grace time.Duration
}

// Available finds tmux on PATH and checks that it is 2.0 or newer.
func Available(ctx context.Context) (Version, error) {
	_, v, err := detect(ctx, "", DefaultTimeout)
	return v, err
}

// Inside reports whether we run inside tmux ($TMUX is set). getenv is
// os.Getenv outside tests.
func Inside(getenv func(string) string) bool { return getenv("TMUX") != "" }

// detect resolves the tmux executable and reads its version.
func detect(ctx context.Context, bin string, timeout time.Duration) (string, Version, error) {
	if bin == "" {
		bin = "tmux"
	}
	path, err := exec.LookPath(bin)
	if err != nil {
		return "", Version{}, fmt.Errorf("%w: %v; install tmux 2.0 or newer, or use the in-process backend", ErrNotInstalled, err)
	}
	out, err := runTmux(ctx, path, cleanEnv(nil), timeout, []string{"-V"})
	if err != nil {
		return "", Version{}, err
	}
	v, err := ParseVersion(out)
	if err != nil {
		return "", Version{}, fmt.Errorf("%s: %w", path, err)
	}
	if !v.AtLeast(minVersion.Major, minVersion.Minor) {
		return "", Version{}, fmt.Errorf("%w: %s is version %s; Cohort needs %s or newer", ErrTooOld, path, v, minVersion)
	}
	return path, v, nil
}

// Current returns a handle on the tmux server we run inside, found through
// $TMUX ("socket,pid,session"); panes are split from $TMUX_PANE by default.
// Close on it does nothing: the user's server is not ours to stop.
func Current(ctx context.Context, getenv func(string) string) (*Server, error) {
	tmuxVar := getenv("TMUX")
	if tmuxVar == "" {
		return nil, fmt.Errorf("%w: $TMUX is not set; start Cohort inside tmux or use the in-process backend", ErrNotInside)
	}
	socket, err := parseTMUX(tmuxVar)
	if err != nil {
		return nil, err
	}
	pane := getenv("TMUX_PANE")
	if pane != "" {
		if err := checkPaneID(pane); err != nil {
			return nil, fmt.Errorf("$TMUX_PANE: %w", err)
		}
	}
	bin, v, err := detect(ctx, "", DefaultTimeout)
	if err != nil {
		return nil, err
	}
	return &Server{bin: bin, socket: socket, env: cleanEnv(nil), version: v, feat: featuresOf(v),
		timeout: DefaultTimeout, grace: DefaultGrace, defaultTarget: pane, closed: make(chan struct{})}, nil
}

// parseTMUX extracts the socket path from $TMUX. The path may itself
// contain commas, so the pid and session index are cut from the right.
func parseTMUX(v string) (string, error) {
	rest, idx, ok1 := cutLast(v, ",")
	socket, pid, ok2 := cutLast(rest, ",")
	_, err1 := strconv.Atoi(idx)
	_, err2 := strconv.Atoi(pid)
	if !ok1 || !ok2 || err1 != nil || err2 != nil || !filepath.IsAbs(socket) {
		return "", fmt.Errorf("$TMUX is %q, not \"<socket path>,<pid>,<session>\"", clip.String(v, 120))
	}
	return socket, nil
}

func cutLast(s, delim string) (before, after string, ok bool) {
	i := strings.LastIndex(s, delim)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(delim):], true
}

var sessionNamePattern = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// StartServer starts a private tmux server on cfg.Socket with one detached
// session, for headless runs and tests. It refuses a socket on which a
// server already runs (ErrServerExists). The server reads no configuration
// file (-f /dev/null), so a user's ~/.tmux.conf cannot change how panes
// behave. Close kills it; if the calling process dies first, a keeper in
// the session's first pane kills it within about a second.
func StartServer(ctx context.Context, cfg ServerConfig) (*Server, error) {
	if cfg.Session == "" {
		cfg.Session = DefaultSession
	}
	if cfg.Width <= 0 {
		cfg.Width = DefaultWidth
	}
	if cfg.Height <= 0 {
		cfg.Height = DefaultHeight
	}
	s, err := newPrivate(ctx, cfg)
	if err != nil {
		return nil, err
	}
	switch _, err := s.run(ctx, "list-sessions"); {
	case err == nil:
		return nil, fmt.Errorf("%w: %s; pick another socket or stop it with `tmux -S %s kill-server`", ErrServerExists, s.socket, s.socket)
	case !errors.Is(err, ErrNoServer):
		return nil, err
	}
	out, err := runTmux(ctx, s.bin, s.env, s.timeout, []string{"-f", "/dev/null", "-S", s.socket,
		"new-session", "-d", "-s", cfg.Session, "-x", strconv.Itoa(cfg.Width), "-y", strconv.Itoa(cfg.Height),
		"--", "/bin/sh", "-c", keeperScript, "cohort-tmux-keeper", strconv.Itoa(os.Getpid()), s.bin, s.socket,
		sep, "display-message", "-p", "#{pid}"})
	if err != nil {
		return nil, fmt.Errorf("start tmux server on %s: %w", s.socket, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil || pid <= 0 {
		_, _ = s.run(context.WithoutCancel(ctx), "kill-server")
		return nil, fmt.Errorf("start tmux server on %s: it reported pid %q", s.socket, clip.String(out, 40))
	}
	s.serverPID = pid
	return s, nil
}

// keeperScript is the private session's first pane: it waits for the
// process that started the server ($1), then gives the other panes'
// programs up to keeperGrace seconds to end on their own (a teammate
// whose lead is gone records why and leaves), and then kills the server
// ($2 -S $3 kill-server). Close kills the server first when that process
// ends well; the keeper is for when it does not (SIGKILL, a crash), when
// nothing of ours is left to do it and the server, a daemon, would
// otherwise run on with every teammate pane in it. It polls once a
// second: a pidfd is not something a shell can wait on.
const keeperScript = `while kill -0 "$1" 2>/dev/null; do sleep 1; done
i=0
while [ "$i" -lt 10 ] && [ "$("$2" -S "$3" list-panes -a -F '#{pane_dead}' 2>/dev/null | grep -c '^0')" -gt 1 ]; do sleep 1; i=$((i+1)); done
exec "$2" -S "$3" kill-server`

// newPrivate validates cfg and finds tmux.
func newPrivate(ctx context.Context, cfg ServerConfig) (*Server, error) {
	if cfg.Socket == "" {
		return nil, errors.New("tmux.ServerConfig.Socket is empty: give the private server a socket path")
	}
	socket, err := filepath.Abs(cfg.Socket)
	if err != nil {
		return nil, fmt.Errorf("tmux socket %s: %w", cfg.Socket, err)
	}
	if len(socket) > maxSocketPath {
		return nil, fmt.Errorf("tmux socket path %s is %d bytes; Unix sockets allow at most %d: use a shorter directory", socket, len(socket), maxSocketPath)
	}
	if !sessionNamePattern.MatchString(cfg.Session) {
		return nil, fmt.Errorf("tmux session name %q: use 1-64 letters, digits, '_' or '-'", clip.String(cfg.Session, 70))
	}
	if err := os.MkdirAll(filepath.Dir(socket), 0o700); err != nil {
		return nil, fmt.Errorf("tmux socket directory: %w", err)
	}
	timeout := orDefault(cfg.Timeout, DefaultTimeout)
	bin, v, err := detect(ctx, cfg.Bin, timeout)
	if err != nil {
		return nil, err
	}
	return &Server{bin: bin, socket: socket, env: cleanEnv(cfg.Env), version: v, feat: featuresOf(v),
		timeout: timeout, grace: orDefault(cfg.Grace, DefaultGrace), defaultTarget: "=" + cfg.Session + ":",
		private: true, closed: make(chan struct{})}, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// cleanEnv returns env (nil: ours) without the variables that point a tmux
// client at the server it runs in: every call names its socket instead.
func cleanEnv(env []string) []string {
	if env == nil {
		env = os.Environ()
	}
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if strings.HasPrefix(kv, "TMUX=") || strings.HasPrefix(kv, "TMUX_PANE=") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// Socket returns the path of the server's socket: `tmux -S <path> attach`
// shows a private server's panes.
func (s *Server) Socket() string { return s.socket }

// Version returns the version of the tmux executable.
func (s *Server) Version() Version { return s.version }

// Private reports whether we started the server (StartServer).
func (s *Server) Private() bool { return s.private }

// Close releases the handle. For a private server it stops every pane's
// processes (SIGHUP from tmux, then SIGTERM and SIGKILL from us to those
// that ignore it), kills the server and waits until it is gone. For the
// user's server it only marks the handle closed. Later calls return the
// first call's result.
func (s *Server) Close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		if s.private {
			s.closeErr = s.killServer(ctx)
		}
		close(s.closed)
	})
	return s.closeErr
}

func (s *Server) killServer(ctx context.Context) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, s.timeout+2*s.grace)
		defer cancel()
	}
	panes, err := s.listPanes(ctx)
	if err != nil && !errors.Is(err, ErrNoServer) {
		return fmt.Errorf("close tmux server %s: %w", s.socket, err)
	}
	if _, err := s.run(ctx, "kill-server"); err != nil && !errors.Is(err, ErrNoServer) {
		return fmt.Errorf("close tmux server %s: %w", s.socket, err)
	}
	var errs []error
	for _, p := range panes {
		if !p.Dead {
			errs = append(errs, stopSession(ctx, p.PID, s.grace))
		}
	}
	if err := waitGone(ctx, s.serverPID, s.grace); err != nil {
		errs = append(errs, fmt.Errorf("tmux server pid %d: %w", s.serverPID, err))
	}
	if err := os.Remove(s.socket); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close tmux server %s: %w", s.socket, err)
	}
	return nil
}

// run runs one tmux client against the server. args may chain several
// tmux commands with sep arguments.
func (s *Server) run(ctx context.Context, args ...string) (string, error) {
	select {
	case <-s.closed:
		return "", ErrClosed
	default:
	}
	return runTmux(ctx, s.bin, s.env, s.timeout, append([]string{"-S", s.socket}, args...))
}

// Output limits of one tmux client.
const (
	maxStdout = 4 << 20
	maxStderr = 16 << 10
)

// runTmux runs bin with args, bounded by ctx or, when ctx has no deadline,
// by timeout. It returns stdout; a failure carries tmux's stderr.
func runTmux(ctx context.Context, bin string, env []string, timeout time.Duration, args []string) (string, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	argv := make([]string, len(args))
	for i, a := range args {
		argv[i] = escapeArg(a)
	}
	stdout, stderr := proc.NewCapture(maxStdout), proc.NewCapture(maxStderr)
	exit, err := proc.Run(ctx, proc.Command{Path: bin, Args: argv, Env: env, Stdout: stdout, Stderr: stderr,
		NewSession: true, Grace: 500 * time.Millisecond, Drain: 200 * time.Millisecond})
	if err == nil && !exit.Success() {
		err = errors.New(exit.String())
		if exit.Stopped != nil {
			err = fmt.Errorf("%s: %w", exit, exit.Stopped)
		}
	}
	if err != nil {
		return "", &CommandError{Args: args, Stderr: strings.TrimSpace(stderr.String()), Err: err}
	}
	return stdout.String(), nil
}

// sep separates the commands of a chain in the arguments we build. It
// cannot collide with a caller's argument, which may not contain NUL.
const sep = "\x00;"

// escapeArg turns sep into tmux's separator and protects every other
// argument from being taken for one: tmux ends a command at any argument
// ending in ';' (so "a;" would run what follows as a tmux command) unless
// the ';' is preceded by a backslash, which it then drops.
func escapeArg(a string) string {
	switch {
	case a == sep:
		return ";"
	case strings.HasSuffix(a, ";"):
		return a[:len(a)-1] + `\;`
	}
	return a
}

// CommandError is a tmux command that failed. Stderr holds tmux's message.
type CommandError struct {
	Args   []string // arguments after the executable name
	Stderr string
	Err    error // what went wrong with the process (exit status, deadline)
}

func (e *CommandError) Error() string {
	msg := e.Stderr
	if msg == "" {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("tmux %s: %s", redact(e.Args), msg)
}

// Unwrap returns the process error and, when tmux's message says so,
// ErrNoServer or ErrNoPane.
func (e *CommandError) Unwrap() []error {
	errs := []error{e.Err}
	switch {
	case strings.Contains(e.Stderr, "no server running"),
		strings.Contains(e.Stderr, "error connecting to") && strings.Contains(e.Stderr, "No such file or directory"),
		strings.Contains(e.Stderr, "error connecting to") && strings.Contains(e.Stderr, "Connection refused"),
		strings.Contains(e.Stderr, "server exited unexpectedly"):
		errs = append(errs, ErrNoServer)
	case strings.Contains(e.Stderr, "can't find pane"), strings.Contains(e.Stderr, "can't find window"):
		errs = append(errs, ErrNoPane)
	}
	return errs
}

// redact renders args for an error message with the values of -e
// arguments (environment variables, perhaps credentials) left out, and
// long argument lists cut.
func redact(args []string) string {
	var b strings.Builder
	for i, a := range args {
		if i > 0 {
			b.WriteByte(' ')
		}
		if a == sep {
			a = ";"
		}
		if i > 0 && args[i-1] == "-e" {
			k, _, _ := strings.Cut(a, "=")
			a = k + "=…"
		}
		if a == "--" && i+1 < len(args) {
			// A command line may carry secrets too (and the env prefix
			// of old tmux does): name the program only.
			fmt.Fprintf(&b, "-- %s …", clip.String(args[i+1], 80))
			break
		}
		if b.Len() > 300 {
			b.WriteString("…")
			break
		}
		b.WriteString(clip.String(a, 80))
	}
	return b.String()
}
