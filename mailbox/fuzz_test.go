package mailbox

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var lineSeeds = []string{
	`{"id":"m1","from":"alice","to":"bob","text":"hi","timestamp":"2026-01-02T03:04:05.006Z"}`,
	`{"id":"m1","from":"alice","to":"bob","text":"{\"type\":\"shutdown_request\",\"request_id\":\"r\"}","timestamp":"2026-01-02T03:04:05Z","type":"shutdown_request","color":"red","summary":"stop"}`,
	`{"id":"m1","from":"alice","to":"bob","text":"hi","timestamp":"2026-01-02T03:04:05+02:00","read":true}`,
	`{"id":"m1","from":"alice","to":"bob","text":"\u0000\ud800","timestamp":"2026-01-02T03:04:05Z"}`,
	`{"id":"m1","from":"alice","to":"bob","text":"hi","timestamp":"2026-01-02T03:04:05Z"`,
	`{"id":null,"from":"alice","to":"../bob","text":"hi","timestamp":"2026-13-02T03:04:05Z"}`,
	`{"id":"m1","id":"m2","from":"a","to":"b","text":"x","timestamp":"0001-01-01T00:00:00Z"}`,
	`[]`, `null`, `"str"`, ``, "\n", "{}\n{}",
}

// FuzzParseLine: any input gives a message or an error, never a panic, and
// an accepted message survives a write/parse round trip unchanged.
func FuzzParseLine(f *testing.F) {
	for _, s := range lineSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		m, err := ParseLine(line)
		if err != nil {
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("ParseLine accepted an invalid message: %v", err)
		}
		enc, err := encodeLine(m)
		if err != nil {
			t.Fatalf("encode accepted message: %v", err)
		}
		back, err := ParseLine(enc)
		if err != nil {
			t.Fatalf("re-parse %q: %v", enc, err)
		}
		// The wire keeps milliseconds only.
		m.Timestamp = m.Timestamp.Truncate(time.Millisecond)
		if !back.Timestamp.Equal(m.Timestamp) {
			t.Fatalf("timestamp %v became %v", m.Timestamp, back.Timestamp)
		}
		back.Timestamp = m.Timestamp
		if diff := cmp.Diff(m, back); diff != "" {
			t.Fatalf("round trip (-want +got):\n%s", diff)
		}
	})
}

// FuzzReadInbox: whatever an inbox file holds, a Reader neither fails nor
// panics, delivers only valid messages addressed to its agent, and still
// delivers a message appended afterwards.
func FuzzReadInbox(f *testing.F) {
	for _, s := range lineSeeds {
		f.Add([]byte(s + "\n" + s))
	}
	f.Add([]byte("garbage\n\n\x00\xff\n" + lineSeeds[0]))
	f.Fuzz(func(t *testing.T, content []byte) {
		if bytes.Contains(content, []byte("final-zz")) {
			t.Skip()
		}
		d, _ := testDir(t, Config{MaxMessageBytes: 1024}, "bob")
		if err := os.WriteFile(d.inboxPath("bob"), content, 0o600); err != nil {
			t.Fatal(err)
		}
		r := openReader(t, d, "bob")
		msgs, err := r.Read(t.Context())
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		for _, m := range msgs {
			if m.Validate() != nil || m.To != "bob" {
				t.Fatalf("delivered a bad message %+v", m)
			}
		}
		if err := r.Ack(t.Context(), ids(msgs)...); err != nil {
			t.Fatalf("Ack: %v", err)
		}
		mustAppend(t, d, Message{ID: "final-zz", From: "alice", To: "bob", Text: "still works"})
		msgs, err = r.Read(t.Context())
		if err != nil {
			t.Fatalf("Read after append: %v", err)
		}
		if len(msgs) == 0 || msgs[len(msgs)-1].ID != "final-zz" {
			t.Fatalf("appended message not delivered after arbitrary content; got %v", ids(msgs))
		}
	})
}
