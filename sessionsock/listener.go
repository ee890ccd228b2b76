package sessionsock

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/cohort-dev/cohort/mailbox"
)

// Defaults for zero Config values.
const (
	// DefaultRecipient is the To of a message that names none: the lead
	// (team.LeadName).
	DefaultRecipient    = "team-lead"
	DefaultMaxMessage   = 1 << 20
	DefaultMaxConns     = 64
	DefaultIdleTimeout  = 2 * time.Minute
	DefaultDedupeWindow = 1024
)

// Config configures Listen. Dir, SessionID and Handler are required.
type Config struct {
	// Dir holds the sockets, normally $COHORT_HOME/sessions. It is created
	// with mode 0700 (and tightened to 0700 if it is looser).
	Dir string
	// SessionID names the socket: Dir/{SessionID}.sock.
	SessionID string
	// Handler delivers one message to the session's lead. It runs on the
	// connection's goroutine, so it is called concurrently for different
	// connections and must be safe for that; its context ends when the
	// Listener closes, and Close waits for it to return. A nil error
	// acknowledges the message; an error is sent back to the sender.
	Handler func(ctx context.Context, m mailbox.Message) error
	// Logger receives connection and message problems; nil discards them.
	Logger *slog.Logger
	// Recipient is the To given to messages that have none (default
	// DefaultRecipient).
	Recipient string
	// MaxMessageBytes bounds one message line (default 1 MiB).
	MaxMessageBytes int
	// MaxConns bounds concurrent connections (default 64); more are
	// refused with an error reply.
	MaxConns int
	// IdleTimeout closes a connection on which no complete message arrived
	// for this long (default 2 minutes).
	IdleTimeout time.Duration
	// DedupeWindow is how many recently delivered ids are remembered, so a
	// re-sent message is acknowledged without being delivered twice
	// (default 1024).
	DedupeWindow int

	// allowUID decides which peer users may send; nil means only our own
	// effective uid. Tests set it.
	allowUID func(uid int) bool
}

// Listener accepts messages on a session socket. Its methods are safe for
// concurrent use; Close may be called more than once.
type Listener struct {
	cfg    Config
	path   string
	ln     *net.UnixListener
	sock   os.FileInfo // the socket file we bound, to remove only that one
	lock   *os.File
	log    *slog.Logger
	seen   *recent
	cancel context.CancelFunc

	wg      sync.WaitGroup
	mu      sync.Mutex
	conns   map[*net.UnixConn]struct{}
	closing bool

	closeOnce sync.Once
	closeErr  error
}

// Listen creates the session socket and starts accepting messages. A
// socket left by a session that died is replaced; one that a live process
// owns (holding the lock beside it, or answering on it) is left alone and
// ErrInUse returned. ctx bounds the setup and passes its values to Handler;
// only Close stops the Listener.
func Listen(ctx context.Context, cfg Config) (*Listener, error) {
	if cfg.Handler == nil {
		return nil, errors.New("sessionsock.Config.Handler is nil")
	}
	path, err := Path(cfg.Dir, cfg.SessionID)
	if err != nil {
		return nil, err
	}
	cfg = withDefaults(cfg)
	if err := mailbox.ValidateName(cfg.Recipient); err != nil {
		return nil, fmt.Errorf("sessionsock.Config.Recipient: %w", err)
	}
	if err := ensureDir(cfg.Dir); err != nil {
		return nil, err
	}
	lock, err := lockFile(path + ".lock")
	if err != nil {
		return nil, err
	}
	ln, sock, err := bind(ctx, path)
	if err != nil {
		return nil, errors.Join(err, unlock(lock))
	}
	hctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	l := &Listener{cfg: cfg, path: path, ln: ln, sock: sock, lock: lock, log: cfg.Logger,
		seen: newRecent(cfg.DedupeWindow), cancel: cancel, conns: make(map[*net.UnixConn]struct{})}
	l.wg.Add(1)
	go l.acceptLoop(hctx)
	return l, nil
}

func withDefaults(cfg Config) Config {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Recipient == "" {
		cfg.Recipient = DefaultRecipient
	}
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = DefaultMaxMessage
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.DedupeWindow <= 0 {
		cfg.DedupeWindow = DefaultDedupeWindow
	}
	if cfg.allowUID == nil {
		uid := os.Geteuid()
		cfg.allowUID = func(peer int) bool { return peer == uid }
	}
	return cfg
}

// ensureDir creates dir with mode 0700, or checks that an existing one is
// ours and tightens it to 0700: the directory is what keeps other users
// from reaching (or planting) sockets.
func ensureDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("session socket directory: %w", err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("session socket directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("session socket directory %s is not a directory", dir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("session socket directory %s belongs to uid %d, not to us (%d): use a COHORT_HOME of your own", dir, st.Uid, os.Geteuid())
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("session socket directory %s is mode %v and cannot be made private: %w", dir, fi.Mode().Perm(), err)
		}
	}
	return nil
}

// staleProbe bounds the connect that tells a live socket from a stale one.
const staleProbe = time.Second

// bind removes a stale socket at path and listens there with mode 0600.
// The caller holds the session lock, so no other Listener races with it.
func bind(ctx context.Context, path string) (*net.UnixListener, os.FileInfo, error) {
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode().Type() != os.ModeSocket {
			return nil, nil, fmt.Errorf("%s exists and is not a socket; move it away", path)
		}
		pctx, cancel := context.WithTimeout(ctx, staleProbe)
		c, err := new(net.Dialer).DialContext(pctx, "unix", path)
		cancel()
		switch {
		case err == nil:
			c.Close()
			return nil, nil, fmt.Errorf("%w: a process that does not hold the session lock answers on %s", ErrInUse, path)
		case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ENOENT):
			if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
				return nil, nil, fmt.Errorf("remove stale session socket: %w", err)
			}
		default:
			return nil, nil, fmt.Errorf("probe session socket %s: %w", path, err)
		}
	}
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, nil, fmt.Errorf("listen on session socket: %w", err)
	}
	ln.SetUnlinkOnClose(false) // Close removes it, after checking it is ours
	fi, err := os.Lstat(path)
	if err == nil {
		err = os.Chmod(path, 0o600) // bind honours the umask; be sure
	}
	if err != nil {
		ln.Close()
		os.Remove(path)
		return nil, nil, fmt.Errorf("session socket %s: %w", path, err)
	}
	return ln, fi, nil
}

// Path returns the socket's path.
func (l *Listener) Path() string { return l.path }

// Close stops accepting, closes every connection, cancels the handlers'
// context, waits for all goroutines and removes the socket and its lock
// file. A message whose handler returned before Close is acknowledged if
// its connection is still writable; others get no acknowledgement, and
// their senders may retry.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() {
		l.mu.Lock()
		l.closing = true
		for c := range l.conns {
			c.Close()
		}
		l.mu.Unlock()
		l.cancel()
		err := l.ln.Close()
		l.wg.Wait()
		if fi, serr := os.Lstat(l.path); serr == nil && os.SameFile(fi, l.sock) {
			err = errors.Join(err, os.Remove(l.path))
		}
		l.closeErr = errors.Join(err, unlock(l.lock))
	})
	return l.closeErr
}

func (l *Listener) acceptLoop(ctx context.Context) {
	defer l.wg.Done()
	for {
		c, err := l.ln.AcceptUnix()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of descriptors or similar: back off instead of spinning.
			l.log.Warn("session socket accept failed", "path", l.path, "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		if !l.track(c) {
			l.refuse(c, "too many connections; retry later")
			continue
		}
		l.wg.Add(1)
		go l.serve(ctx, c)
	}
}

// track registers c; false when closing or at the connection limit.
func (l *Listener) track(c *net.UnixConn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closing || len(l.conns) >= l.cfg.MaxConns {
		return false
	}
	l.conns[c] = struct{}{}
	return true
}

func (l *Listener) untrack(c *net.UnixConn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.conns, c)
	c.Close()
}

// refuse answers c with one error and closes it, without waiting long for
// a peer that does not read.
func (l *Listener) refuse(c *net.UnixConn, msg string) {
	_ = c.SetWriteDeadline(time.Now().Add(time.Second))
	_ = writeReply(c, reply{Error: msg})
	c.Close()
}

// isClosedConn reports errors that only mean the connection is over.
func isClosedConn(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
