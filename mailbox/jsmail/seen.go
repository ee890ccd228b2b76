package jsmail

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/internal/atomicfile"
)

// seenLog is the durable record of what an inbox's owner took, kept on
// the owner's machine in Config.StateDir/AGENT.seen. It holds two things.
//
// The ids the owner acknowledged (recorded in its transcript): one line
// "ID SENT STORED SEQ" per id, the signed send time and the server's
// storing time in Unix milliseconds and the stream sequence (a record
// from before the sequence was kept has three fields). It is what refuses
// a replay whatever the server forgot (a stream made anew, a server
// restart): an id in it is never handed over again. It only needs the ids
// a replay could pass the freshness check with, so an entry goes once
// both its times are more than keep (the duplicate window, over twice
// the freshness window) before the latest storing time seen — server
// times only, so this machine's clock does not matter — unless its
// sequence is still above the cursor.
//
// The cursor: "@floor N CREATED", every message of the inbox stored
// below stream sequence N was taken (acknowledged, dead-lettered or
// dropped as a repeat), in the stream made at CREATED (Unix nanoseconds:
// a stream made anew numbers from 1 again); and "@done SEQ", a message
// above the floor taken without an acknowledgement (dead-lettered, a
// repeat). The inbox reads its messages from the stream by sequence from
// there (package doc, "Reading by the owner's cursor").
// Not safe for concurrent use (the Inbox's lock guards it).
type seenLog struct {
	path   string
	f      *os.File
	keep   time.Duration
	ids    map[string]seenEntry
	latest time.Time // the latest storing time seen
	lines  int       // lines in the file, dropped entries included

	floor  uint64          // every message below it was taken
	stream int64           // the stream's creation time the floor counts in (Unix ns)
	done   map[uint64]bool // taken at or above the floor
}

type seenEntry struct {
	sent, stored time.Time
	seq          uint64 // 0 in a record from before sequences were kept
}

func (e seenEntry) last() time.Time {
	if e.sent.After(e.stored) {
		return e.sent
	}
	return e.stored
}

// openSeen reads agent's record from dir (made if missing), drops what
// is past keep and starts a fresh file with the rest.
func openSeen(dir, agent string, keep time.Duration) (*seenLog, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("seen-id record: %w", err)
	}
	s := &seenLog{path: filepath.Join(dir, agent+".seen"), keep: keep, ids: map[string]seenEntry{}, done: map[uint64]bool{}, floor: 1}
	data, err := os.ReadFile(s.path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("seen-id record: %w", err)
	}
	if err := s.parse(data); err != nil {
		return nil, err
	}
	if err := s.compact(); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *seenLog) parse(data []byte) error {
	lines := strings.Split(string(data), "\n")
	// The last piece is empty, or a line torn by a crash mid-write (its
	// Ack never reached the caller, so the message comes again).
	lines = lines[:len(lines)-1]
	for i, line := range lines {
		if err := s.parseLine(line); err != nil {
			return fmt.Errorf("%s:%d: want \"ID SENT-MS STORED-MS SEQ\", \"@floor SEQ CREATED-NS\" or \"@done SEQ\", got %q: this file is the inbox's record of what its owner took; correct the line, or delete the file if no message to this agent was sent in the last %s (a replay of one could be delivered again, and what is still in the stream comes again)",
				s.path, i+1, line, s.keep)
		}
	}
	return nil
}

func (s *seenLog) parseLine(line string) error {
	f := strings.Fields(line)
	num := func(i int) (int64, error) { return strconv.ParseInt(f[i], 10, 64) }
	switch {
	case len(f) == 3 && f[0] == "@floor":
		n, err := num(1)
		if err != nil || n < 1 {
			return errors.New("bad floor")
		}
		created, err := num(2)
		if err != nil {
			return err
		}
		if created != s.stream {
			s.done = map[uint64]bool{}
		}
		s.stream = created
		s.floor = uint64(n)
		return nil
	case len(f) == 2 && f[0] == "@done":
		n, err := num(1)
		if err != nil || n < 1 {
			return errors.New("bad sequence")
		}
		s.done[uint64(n)] = true
		return nil
	case len(f) == 3 || len(f) == 4:
		sent, err := num(1)
		if err != nil {
			return err
		}
		stored, err := num(2)
		if err != nil {
			return err
		}
		var seq int64
		if len(f) == 4 {
			if seq, err = num(3); err != nil || seq < 0 {
				return errors.New("bad sequence")
			}
		}
		s.note(f[0], seenEntry{time.UnixMilli(sent), time.UnixMilli(stored), uint64(seq)})
		return nil
	}
	return errors.New("bad line")
}

// note adds an entry in memory; compact drops those past keep (an id
// kept longer is only refused longer: it was acknowledged).
func (s *seenLog) note(id string, e seenEntry) {
	s.ids[id] = e
	if e.seq > 0 {
		s.done[e.seq] = true
	}
	if e.stored.After(s.latest) {
		s.latest = e.stored
	}
}

// compact drops the entries past keep and below the floor, writes the
// rest to a fresh file (atomically) and opens it for appending.
func (s *seenLog) compact() error {
	for id, e := range s.ids {
		if e.last().Before(s.latest.Add(-s.keep)) && e.seq < s.floor {
			delete(s.ids, id)
		}
	}
	for seq := range s.done {
		if seq < s.floor {
			delete(s.done, seq)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "@floor %d %d\n", s.floor, s.stream)
	for id, e := range s.ids {
		fmt.Fprintf(&b, "%s %d %d %d\n", id, e.sent.UnixMilli(), e.stored.UnixMilli(), e.seq)
	}
	for seq := range s.done {
		fmt.Fprintf(&b, "@done %d\n", seq)
	}
	if err := atomicfile.Write(s.path, []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("seen-id record: %w", err)
	}
	if s.f != nil {
		s.f.Close()
	}
	f, err := os.OpenFile(s.path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("seen-id record: %w", err)
	}
	s.f, s.lines = f, 1+len(s.ids)+len(s.done)
	return nil
}

func (s *seenLog) has(id string) bool {
	_, ok := s.ids[id]
	return ok
}

// taken says whether the message at stream sequence seq was taken.
func (s *seenLog) taken(seq uint64) bool { return seq < s.floor || s.done[seq] }

// inStream sets the stream the cursor counts in: a stream made anew
// (another creation time) numbers from 1, so the cursor starts again
// there (the ids still refuse a replay).
func (s *seenLog) inStream(created time.Time) error {
	if created.UnixNano() == s.stream {
		return nil
	}
	s.stream, s.floor, s.done = created.UnixNano(), 1, map[uint64]bool{}
	for id, e := range s.ids {
		e.seq = 0 // a sequence of the old stream
		s.ids[id] = e
	}
	return s.compact()
}

// add records ids and what else was taken at seqs, with the floor
// (every message below it taken), durably (written and synced) before
// the Ack returns.
func (s *seenLog) add(ids []string, es []seenEntry, seqs []uint64, floor uint64) error {
	var b strings.Builder
	for i, id := range ids {
		fmt.Fprintf(&b, "%s %d %d %d\n", id, es[i].sent.UnixMilli(), es[i].stored.UnixMilli(), es[i].seq)
	}
	for _, seq := range seqs {
		fmt.Fprintf(&b, "@done %d\n", seq)
	}
	floor = max(floor, s.floor)
	fmt.Fprintf(&b, "@floor %d %d\n", floor, s.stream)
	if _, err := s.f.WriteString(b.String()); err != nil {
		return fmt.Errorf("seen-id record %s: %w", s.path, err)
	}
	if err := s.f.Sync(); err != nil {
		return fmt.Errorf("seen-id record %s: %w", s.path, err)
	}
	for i, id := range ids {
		s.note(id, es[i])
	}
	for _, seq := range seqs {
		s.done[seq] = true
	}
	s.floor = floor
	s.lines += len(ids) + len(seqs) + 1
	if s.lines > 2*(len(s.ids)+len(s.done))+256 {
		return s.compact()
	}
	return nil
}

// above counts the messages taken at or above the floor (for Pending).
func (s *seenLog) above() int {
	n := 0
	for seq := range s.done {
		if seq >= s.floor {
			n++
		}
	}
	return n
}

func (s *seenLog) close() {
	if s.f != nil {
		s.f.Close()
	}
}

// recent is a bounded set of acknowledged ids, oldest dropped first.
type recent struct {
	ids  []string
	set  map[string]bool
	next int
}

func newRecent(n int) *recent { return &recent{ids: make([]string, 0, n), set: map[string]bool{}} }

func (r *recent) has(id string) bool { return r.set[id] }

func (r *recent) add(id string) {
	if r.set[id] {
		return
	}
	if len(r.ids) < cap(r.ids) {
		r.ids = append(r.ids, id)
	} else {
		delete(r.set, r.ids[r.next])
		r.ids[r.next] = id
		r.next = (r.next + 1) % len(r.ids)
	}
	r.set[id] = true
}
