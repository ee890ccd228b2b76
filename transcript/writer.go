package transcript

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Writer appends entries to a transcript file. Safe for concurrent use.
type Writer struct {
	mu        sync.Mutex
	f         *os.File
	path      string
	sessionID string
	agentID   string
	sidechain bool
	cwd       string
	last      string // uuid of the previous entry
	now       func() time.Time
}

// WriterConfig describes the transcript being written.
type WriterConfig struct {
	Path      string
	SessionID string
	AgentID   string
	Sidechain bool
	Cwd       string
	Now       func() time.Time
}

// Create opens (creating or appending to) the transcript at cfg.Path with
// mode 0600, creating parent directories with mode 0700.
func Create(cfg WriterConfig) (*Writer, error) {
	if err := os.MkdirAll(filepath.Dir(cfg.Path), 0o700); err != nil {
		return nil, fmt.Errorf("session: create transcript dir: %w", err)
	}
	f, err := os.OpenFile(cfg.Path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("session: open transcript: %w", err)
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	w := &Writer{f: f, path: cfg.Path, sessionID: cfg.SessionID, agentID: cfg.AgentID,
		sidechain: cfg.Sidechain, cwd: cfg.Cwd, now: now}
	if fi, err := f.Stat(); err != nil || fi.Size() > 0 { // a new file has no last entry to read
		if last, err := lastUUID(cfg.Path); err == nil {
			w.last = last
		}
	}
	return w, nil
}

// Path returns the transcript's file path.
func (w *Writer) Path() string { return w.path }

// Append stamps e (uuid, parent, session, agent, time) and writes it as one
// line.
func (w *Writer) Append(e Entry) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return fmt.Errorf("session: append to closed transcript %s", w.path)
	}
	if e.UUID == "" {
		e.UUID = NewID()
	}
	e.ParentUUID = w.last
	e.SessionID = w.sessionID
	if e.AgentID == "" {
		e.AgentID = w.agentID
	}
	e.IsSidechain = w.sidechain
	if e.Timestamp.IsZero() {
		e.Timestamp = w.now().UTC()
	}
	if e.Cwd == "" {
		e.Cwd = w.cwd
	}
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("session: encode entry: %w", err)
	}
	line = append(line, '\n')
	if _, err := w.f.Write(line); err != nil {
		return fmt.Errorf("session: write %s: %w", w.path, err)
	}
	w.last = e.UUID
	return nil
}

// Close closes the file. Further appends fail.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}

// NewID returns a random UUID (version 4) string.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// ValidID reports whether id has a UUID's form (8-4-4-4-12 hex digits), as
// session ids do: an id given from outside (--session-id) names a file.
func ValidID(id string) bool {
	if len(id) != 36 {
		return false
	}
	for i, c := range id {
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// Fork copies the lead transcript of session from into a new session to,
// byte for byte (so a resume of either rebuilds the same prefix), and
// refuses to overwrite one that exists.
func Fork(projectDir, from, to string) error {
	data, err := os.ReadFile(Path(projectDir, from))
	if err != nil {
		return fmt.Errorf("session: fork %s: %w", from, err)
	}
	f, err := os.OpenFile(Path(projectDir, to), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("session: fork %s into %s: %w", from, to, err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("session: fork %s into %s: %w", from, to, err)
	}
	return f.Close()
}
