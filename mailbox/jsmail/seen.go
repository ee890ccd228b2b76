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

	"github.com/nats-io/nats.go/jetstream"
)

// seenLog is the durable record of the ids an inbox's owner acknowledged
// (recorded in its transcript), kept on the owner's machine in
// Config.StateDir/AGENT.seen: one line "ID SENT STORED" per id, the
// signed send time and the server's storing time in Unix milliseconds.
// It is what refuses a replay whatever the server forgot (a stream made
// anew, a server restart): an id in it is never handed over again. It
// only needs the ids a replay could pass the freshness check with, so an
// entry goes once both its times are more than keep (the duplicate
// window, over twice the freshness window) before the latest storing time
// seen — server times only, so this machine's clock does not matter.
// Not safe for concurrent use (the Inbox's lock guards it).
type seenLog struct {
	path   string
	f      *os.File
	keep   time.Duration
	ids    map[string]seenEntry
	latest time.Time // the latest storing time seen
	lines  int       // lines in the file, dropped entries included
}

type seenEntry struct{ sent, stored time.Time }

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
	s := &seenLog{path: filepath.Join(dir, agent+".seen"), keep: keep, ids: map[string]seenEntry{}}
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
	// Ack never reached the server, so the message comes again).
	lines = lines[:len(lines)-1]
	for i, line := range lines {
		f := strings.Fields(line)
		var sent, stored int64
		var err error
		if len(f) == 3 {
			if sent, err = strconv.ParseInt(f[1], 10, 64); err == nil {
				stored, err = strconv.ParseInt(f[2], 10, 64)
			}
		}
		if len(f) != 3 || err != nil {
			return fmt.Errorf("%s:%d: want \"ID SENT-MS STORED-MS\", got %q: this file is the inbox's record of the message ids its owner acknowledged; correct the line, or delete the file if no message to this agent was sent in the last %s (a replay of one could be delivered again)",
				s.path, i+1, line, s.keep)
		}
		s.note(f[0], seenEntry{time.UnixMilli(sent), time.UnixMilli(stored)})
	}
	return nil
}

// note adds an entry in memory; compact drops those past keep (an id
// kept longer is only refused longer: it was acknowledged).
func (s *seenLog) note(id string, e seenEntry) {
	s.ids[id] = e
	if e.stored.After(s.latest) {
		s.latest = e.stored
	}
}

// compact drops the entries past keep, writes the rest to a fresh file
// (atomically) and opens it for appending.
func (s *seenLog) compact() error {
	for id, e := range s.ids {
		if e.last().Before(s.latest.Add(-s.keep)) {
			delete(s.ids, id)
		}
	}
	var b strings.Builder
	for id, e := range s.ids {
		fmt.Fprintf(&b, "%s %d %d\n", id, e.sent.UnixMilli(), e.stored.UnixMilli())
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
	s.f, s.lines = f, len(s.ids)
	return nil
}

func (s *seenLog) has(id string) bool {
	_, ok := s.ids[id]
	return ok
}

// add records ids durably (written and synced) before their Ack goes to
// the server.
func (s *seenLog) add(ids []string, es []seenEntry) error {
	if len(ids) == 0 {
		return nil
	}
	var b strings.Builder
	for i, id := range ids {
		fmt.Fprintf(&b, "%s %d %d\n", id, es[i].sent.UnixMilli(), es[i].stored.UnixMilli())
	}
	if _, err := s.f.WriteString(b.String()); err != nil {
		return fmt.Errorf("seen-id record %s: %w", s.path, err)
	}
	if err := s.f.Sync(); err != nil {
		return fmt.Errorf("seen-id record %s: %w", s.path, err)
	}
	for i, id := range ids {
		s.note(id, es[i])
	}
	s.lines += len(ids)
	if s.lines > 2*len(s.ids)+256 {
		return s.compact()
	}
	return nil
}

func (s *seenLog) close() {
	if s.f != nil {
		s.f.Close()
	}
}

// record writes the ids to the seen-id record before their Ack goes to
// the server: an id acknowledged is never handed over again, whatever
// the server forgets.
func (in *Inbox) record(ids []string, msgs []jetstream.Msg) error {
	es := make([]seenEntry, len(msgs))
	for i, msg := range msgs {
		if meta, err := msg.Metadata(); err == nil {
			es[i].stored = meta.Timestamp
		}
		es[i].sent, _ = time.Parse(time.RFC3339Nano, msg.Headers().Get(HeaderSent))
	}
	in.seenMu.Lock()
	defer in.seenMu.Unlock()
	return in.seen.add(ids, es)
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
