package mailbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/internal/atomicfile"
)

// Config configures a Dir. Only Path is required.
type Config struct {
	// Path is the mailbox directory; OpenDir creates it (mode 0700).
	Path string
	// Now is the clock for timestamps and ids (default time.Now).
	Now func() time.Time
	// NewID returns a fresh message id (default NewID(Now())). It must return
	// ids that pass ValidateID and are unique across processes.
	NewID func() string
	// Sync fsyncs the inbox after every append, so an acknowledged message
	// also survives power loss. Without it, it survives any process crash.
	Sync bool
	// LockTimeout bounds every lock wait whose context has a later deadline
	// or none (default 10 s).
	LockTimeout time.Duration
	// MaxMessageBytes bounds one encoded line (default 4 MiB). Appends over
	// it fail; a reader skips and reports longer lines.
	MaxMessageBytes int
	// CompactBytes is the size of the acknowledged prefix past which a
	// Reader's Ack compacts the inbox (default 1 MiB; negative disables).
	CompactBytes int64
	// DedupeWindow is how many recently acknowledged ids a Reader remembers,
	// across restarts, to drop re-sent messages (default 1024).
	DedupeWindow int
	// PollInterval is the stat-polling period of Watch, used alone when
	// fsnotify is unavailable and as a safety net otherwise (default 250 ms).
	PollInterval time.Duration
	// NoFSNotify disables fsnotify, leaving polling alone (for filesystems
	// where inotify misses writes from other machines, and for tests).
	NoFSNotify bool
	// OnProblem receives reports of skipped lines and recovered
	// inconsistencies. It is called with the Reader's lock held, so it must
	// not call back into the Reader. Default: log at warning level.
	OnProblem func(Problem)
	// Logger receives watcher diagnostics (default slog.Default()).
	Logger *slog.Logger
}

// Problem reports something a Reader skipped or repaired. Delivery goes on.
type Problem struct {
	Agent  string // inbox owner
	Path   string // file concerned
	Line   int    // 1-based line number, 0 when the problem concerns the whole file
	Reason string
}

func (p Problem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", p.Path, p.Line, p.Reason)
	}
	return p.Path + ": " + p.Reason
}

// Dir is a mailbox directory: the file-backed Transport. It is safe for
// concurrent use by any number of goroutines and processes.
type Dir struct {
	cfg Config
}

var _ Transport = (*Dir)(nil)

// OpenDir opens (creating if needed) the mailbox directory cfg.Path.
func OpenDir(cfg Config) (*Dir, error) {
	if cfg.Path == "" {
		return nil, errors.New("mailbox: Config.Path is empty")
	}
	if err := os.MkdirAll(cfg.Path, 0o700); err != nil {
		return nil, fmt.Errorf("mailbox: create directory: %w", err)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.NewID == nil {
		now := cfg.Now
		cfg.NewID = func() string { return NewID(now()) }
	}
	if cfg.LockTimeout <= 0 {
		cfg.LockTimeout = 10 * time.Second
	}
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = 4 << 20
	}
	if cfg.CompactBytes == 0 {
		cfg.CompactBytes = 1 << 20
	}
	if cfg.DedupeWindow <= 0 {
		cfg.DedupeWindow = 1024
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = 250 * time.Millisecond
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.OnProblem == nil {
		log := cfg.Logger
		cfg.OnProblem = func(p Problem) { log.Warn("mailbox: " + p.String()) }
	}
	return &Dir{cfg: cfg}, nil
}

// Path returns the mailbox directory.
func (d *Dir) Path() string { return d.cfg.Path }

func (d *Dir) inboxPath(agent string) string  { return filepath.Join(d.cfg.Path, agent+".jsonl") }
func (d *Dir) lockFile(agent string) string   { return filepath.Join(d.cfg.Path, agent+".lock") }
func (d *Dir) cursorPath(agent string) string { return filepath.Join(d.cfg.Path, agent+".cursor") }
func (d *Dir) readerLock(agent string) string { return filepath.Join(d.cfg.Path, agent+".reader.lock") }

// Register creates agent's inbox if it does not exist. It is idempotent and
// never truncates an existing inbox.
func (d *Dir) Register(ctx context.Context, agent string) error {
	if err := ValidateName(agent); err != nil {
		return fmt.Errorf("mailbox register: %w", err)
	}
	lk, err := lockPath(ctx, d.lockFile(agent), true, d.cfg.LockTimeout)
	if err != nil {
		return fmt.Errorf("mailbox register %s: %w", agent, err)
	}
	defer lk.Unlock()
	f, err := os.OpenFile(d.inboxPath(agent), os.O_RDONLY|os.O_CREATE|openFlags, 0o600)
	if err != nil {
		return fmt.Errorf("mailbox register %s: %w", agent, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("mailbox register %s: %w", agent, err)
	}
	if err := atomicfile.SyncDir(d.cfg.Path); err != nil {
		return fmt.Errorf("mailbox register %s: %w", agent, err)
	}
	return nil
}

// Remove deletes agent's inbox and cursor; later appends to agent fail with
// ErrUnknownRecipient. The lock files stay so that every process keeps
// locking the same inode if the agent registers again.
func (d *Dir) Remove(ctx context.Context, agent string) error {
	if err := ValidateName(agent); err != nil {
		return fmt.Errorf("mailbox remove: %w", err)
	}
	lk, err := lockPath(ctx, d.lockFile(agent), false, d.cfg.LockTimeout)
	if errors.Is(err, errNoLockFile) {
		return fmt.Errorf("mailbox remove %s: %w", agent, ErrUnknownRecipient)
	}
	if err != nil {
		return fmt.Errorf("mailbox remove %s: %w", agent, err)
	}
	defer lk.Unlock()
	for _, p := range []string{d.inboxPath(agent), d.cursorPath(agent)} {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("mailbox remove %s: %w", agent, err)
		}
	}
	return atomicfile.SyncDir(d.cfg.Path)
}

// Registered reports whether agent has an inbox.
func (d *Dir) Registered(agent string) (bool, error) {
	if err := ValidateName(agent); err != nil {
		return false, err
	}
	_, err := os.Stat(d.inboxPath(agent))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// Agents lists the registered agents in name order.
func (d *Dir) Agents() ([]string, error) {
	entries, err := os.ReadDir(d.cfg.Path)
	if err != nil {
		return nil, fmt.Errorf("mailbox: list %s: %w", d.cfg.Path, err)
	}
	var out []string
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if ok && e.Type().IsRegular() && ValidateName(name) == nil {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Append adds m to the inbox of m.To and returns it with its id and
// timestamp filled in. When Append returns nil the message is durable
// against the crash of any process (and power loss with Config.Sync). An
// agent without an inbox gives ErrUnknownRecipient. A caller that retries a
// failed Append with the same m.ID gets at most one delivery.
func (d *Dir) Append(ctx context.Context, m Message) (Message, error) {
	if err := ValidateName(m.To); err != nil {
		return Message{}, fmt.Errorf("mailbox append: %w", err)
	}
	if m.ID == "" {
		m.ID = d.cfg.NewID()
	}
	if m.Timestamp.IsZero() {
		m.Timestamp = d.cfg.Now()
	}
	m.Timestamp = m.Timestamp.UTC().Truncate(time.Millisecond)
	if err := m.Validate(); err != nil {
		return Message{}, fmt.Errorf("mailbox append to %s: %w", m.To, err)
	}
	line, err := encodeLine(m)
	if err != nil {
		return Message{}, fmt.Errorf("mailbox append to %s: %w", m.To, err)
	}
	if len(line) > d.cfg.MaxMessageBytes {
		return Message{}, fmt.Errorf("mailbox append to %s: %w: encoded message is %d bytes, the limit is %d",
			m.To, ErrInvalidMessage, len(line), d.cfg.MaxMessageBytes)
	}
	if err := d.appendLine(ctx, m.To, line); err != nil {
		return Message{}, fmt.Errorf("mailbox append to %s: %w", m.To, err)
	}
	return m, nil
}

// appendLine writes one encoded line under the inbox lock. It opens the
// inbox only after locking (compaction may have replaced it), terminates a
// torn final line first, and writes the line with a single write(2).
func (d *Dir) appendLine(ctx context.Context, agent string, line []byte) error {
	lk, err := lockPath(ctx, d.lockFile(agent), false, d.cfg.LockTimeout)
	if errors.Is(err, errNoLockFile) {
		return ErrUnknownRecipient
	}
	if err != nil {
		return err
	}
	defer lk.Unlock()
	f, err := os.OpenFile(d.inboxPath(agent), os.O_RDWR|os.O_APPEND|openFlags, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return ErrUnknownRecipient
	}
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	if size > 0 {
		var last [1]byte
		if _, err := f.ReadAt(last[:], size-1); err != nil {
			return fmt.Errorf("read last byte: %w", err)
		}
		if last[0] != '\n' {
			// A writer died mid-line: end that line so ours starts fresh.
			line = append([]byte{'\n'}, line...)
		}
	}
	if _, err := f.Write(line); err != nil {
		// Take back a partial write (disk full) so no torn line is left.
		_ = f.Truncate(size)
		return err
	}
	if d.cfg.Sync {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	return f.Close()
}
