package mailbox

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/cohort-dev/cohort/internal/clip"
	"github.com/cohort-dev/cohort/internal/lazyre"
)

// Sentinel errors callers branch on. Returned errors wrap them with context.
var (
	// ErrUnknownRecipient: the agent has no inbox (never registered, or
	// removed). Appends never create inboxes.
	ErrUnknownRecipient = errors.New("unknown recipient")
	// ErrInvalidName: an agent name does not match the allowed pattern.
	ErrInvalidName = errors.New("invalid agent name")
	// ErrInvalidMessage: a message is missing a field or has a bad value.
	ErrInvalidMessage = errors.New("invalid message")
	// ErrReaderBusy: another live Reader (in this or another process) owns
	// the inbox.
	ErrReaderBusy = errors.New("inbox already has a reader")
	// ErrNotDelivered: Ack named an id this Reader never returned.
	ErrNotDelivered = errors.New("message not delivered by this reader")
	// ErrClosed: the Reader or Watcher was closed.
	ErrClosed = errors.New("closed")
	// ErrDeaf: an Inbox can no longer receive (its transport lost what
	// it reads from and could not make it again); it gave up the inbox,
	// which must be opened anew (its owner respawned).
	ErrDeaf = errors.New("the inbox can no longer receive")
)

// Type names a structured message. The zero value is plain text.
type Type string

// Message is one line of an inbox. Structured messages carry their JSON
// payload in Text and name it in Type (see Payload).
type Message struct {
	ID        string    // unique per message; assigned by Append when empty
	From      string    // sender's agent name
	To        string    // recipient's agent name (the inbox)
	Text      string    // plain text, or the JSON payload of a structured message
	Timestamp time.Time // assigned by Append when zero; stored in UTC with ms
	Color     string    // sender's display color, optional
	Summary   string    // short preview for UIs, optional
	Type      Type      // empty for plain text
}

// wireMessage is the on-disk form; field names match Claude Code's.
type wireMessage struct {
	ID        string `json:"id"`
	From      string `json:"from"`
	To        string `json:"to"`
	Text      string `json:"text"`
	Timestamp string `json:"timestamp"`
	Color     string `json:"color,omitempty"`
	Summary   string `json:"summary,omitempty"`
	Type      Type   `json:"type,omitempty"`
}

// timestampLayout is RFC 3339 with exactly three fractional digits, the form
// JavaScript's Date.toISOString produces.
const timestampLayout = "2006-01-02T15:04:05.000Z07:00"

// MarshalJSON encodes m in the inbox line format (without the newline).
func (m Message) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m.wire()); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func (m Message) wire() wireMessage {
	ts := ""
	if !m.Timestamp.IsZero() {
		ts = m.Timestamp.UTC().Format(timestampLayout)
	}
	return wireMessage{ID: m.ID, From: m.From, To: m.To, Text: m.Text, Timestamp: ts,
		Color: m.Color, Summary: m.Summary, Type: m.Type}
}

// UnmarshalJSON decodes the inbox line format. It checks syntax and the
// timestamp only; ParseLine also validates the fields.
func (m *Message) UnmarshalJSON(data []byte) error {
	var w wireMessage
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	var ts time.Time
	if w.Timestamp != "" {
		t, err := time.Parse(time.RFC3339Nano, w.Timestamp)
		if err != nil {
			return fmt.Errorf("timestamp %q is not RFC 3339", w.Timestamp)
		}
		ts = t
	}
	*m = Message{ID: w.ID, From: w.From, To: w.To, Text: w.Text, Timestamp: ts,
		Color: w.Color, Summary: w.Summary, Type: w.Type}
	return nil
}

// ParseLine decodes and validates one inbox line (a trailing newline is
// allowed). Unknown JSON fields are ignored so newer writers can add some.
func ParseLine(line []byte) (Message, error) {
	line = bytes.TrimSuffix(line, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	var m Message
	if err := json.Unmarshal(line, &m); err != nil {
		return Message{}, fmt.Errorf("%w: %v", ErrInvalidMessage, err)
	}
	if err := m.Validate(); err != nil {
		return Message{}, err
	}
	return m, nil
}

// Field limits. Summary and color are shown in UIs and attributes.
const (
	maxIDLen      = 128
	maxFromLen    = 256
	maxColorLen   = 64
	maxSummaryLen = 4096
)

var (
	namePattern = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)
	idPattern   = lazyre.New(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`)
	typePattern = lazyre.New(`^[a-z][a-z0-9_]{0,63}$`)
)

// ValidateName reports whether name may name an inbox: 1 to 64 ASCII
// letters, digits, '_' or '-', starting with a letter or digit. This refuses
// path separators, "..", and empty names.
func ValidateName(name string) error {
	if !namePattern.MatchString(name) {
		return fmt.Errorf("%w %q: use 1-64 letters, digits, '_' or '-', starting with a letter or digit", ErrInvalidName, clip.Runes(name, 80))
	}
	return nil
}

// ValidateID reports whether id may be used as a message id: 1 to 128
// ASCII letters, digits, '.', '_', ':' or '-', starting with a letter or
// digit.
func ValidateID(id string) error {
	if !idPattern.MatchString(id) {
		return fmt.Errorf("%w: id %q: use 1-128 letters, digits, '.', '_', ':' or '-'", ErrInvalidMessage, clip.String(id, 40))
	}
	return nil
}

// Validate checks every field of m. Append and ParseLine call it.
func (m Message) Validate() error {
	if err := ValidateID(m.ID); err != nil {
		return err
	}
	if err := ValidateName(m.To); err != nil {
		return fmt.Errorf("%w: to: %w", ErrInvalidMessage, err)
	}
	if err := checkText("from", m.From, maxFromLen, false); err != nil {
		return err
	}
	if m.From == "" {
		return fmt.Errorf("%w: from is empty", ErrInvalidMessage)
	}
	if m.Text == "" {
		return fmt.Errorf("%w: text is empty", ErrInvalidMessage)
	}
	if !utf8.ValidString(m.Text) {
		return fmt.Errorf("%w: text is not valid UTF-8", ErrInvalidMessage)
	}
	if m.Timestamp.IsZero() {
		return fmt.Errorf("%w: timestamp is missing", ErrInvalidMessage)
	}
	if err := checkText("color", m.Color, maxColorLen, false); err != nil {
		return err
	}
	if err := checkText("summary", m.Summary, maxSummaryLen, true); err != nil {
		return err
	}
	if m.Type != "" && !typePattern.MatchString(string(m.Type)) {
		return fmt.Errorf("%w: type %q: use lower-case letters, digits and '_'", ErrInvalidMessage, clip.String(string(m.Type), 40))
	}
	return nil
}

// checkText refuses invalid UTF-8, over-long values and control characters
// (other than newline and tab when multiline).
func checkText(field, s string, max int, multiline bool) error {
	if len(s) > max {
		return fmt.Errorf("%w: %s is %d bytes, the limit is %d", ErrInvalidMessage, field, len(s), max)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%w: %s is not valid UTF-8", ErrInvalidMessage, field)
	}
	for _, r := range s {
		if unicode.IsControl(r) && !(multiline && (r == '\n' || r == '\t')) {
			return fmt.Errorf("%w: %s contains control character %U", ErrInvalidMessage, field, r)
		}
	}
	return nil
}

// NewID returns a fresh message id for time now: a 48-bit millisecond
// timestamp and 80 random bits as 32 hex digits. Ids from one clock sort by
// creation time; uniqueness across processes comes from the random part.
func NewID(now time.Time) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(now.UnixMilli())<<16)
	rand.Read(b[6:]) // never fails (crypto/rand panics rather than return an error)
	return hex.EncodeToString(b[:])
}

// encodeLine returns m's inbox line including the trailing newline.
func encodeLine(m Message) ([]byte, error) {
	b, err := m.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidMessage, err)
	}
	return append(b, '\n'), nil
}
