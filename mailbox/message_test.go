package mailbox

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestValidateName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"team-lead", true},
		{"a", true},
		{"Alice_2-b", true},
		{"9lives", true},
		{strings.Repeat("x", 64), true},
		{"", false},
		{strings.Repeat("x", 65), false},
		{"../x", false},
		{"a/b", false},
		{"..", false},
		{".hidden", false},
		{"-flag", false},
		{"_x", false},
		{"a b", false},
		{"a.b", false},
		{"alice@team", false},
		{"x\x00", false},
		{"zoë", false},
		{`a\b`, false},
	}
	for _, tt := range tests {
		err := ValidateName(tt.name)
		if (err == nil) != tt.ok {
			t.Errorf("ValidateName(%q) = %v, want ok=%v", tt.name, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidName) {
			t.Errorf("ValidateName(%q) error %v is not ErrInvalidName", tt.name, err)
		}
	}
}

func TestMessageWireFormat(t *testing.T) {
	m := Message{
		ID: "0191a2b3c4d5e6f708192a3b4c5d6e7f", From: "alice", To: "team-lead",
		Text: "ready <now> & done", Timestamp: time.Date(2026, 3, 4, 5, 6, 7, 891_234_567, time.FixedZone("X", 3600)),
		Color: "blue", Summary: "status",
	}
	got, err := m.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"0191a2b3c4d5e6f708192a3b4c5d6e7f","from":"alice","to":"team-lead","text":"ready <now> & done",` +
		`"timestamp":"2026-03-04T04:06:07.891Z","color":"blue","summary":"status"}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("wire format (-want +got):\n%s", diff)
	}
	back, err := ParseLine(append(got, '\n'))
	if err != nil {
		t.Fatal(err)
	}
	m.Timestamp = m.Timestamp.Truncate(time.Millisecond)
	if !back.Timestamp.Equal(m.Timestamp) {
		t.Errorf("timestamp %v, want %v", back.Timestamp, m.Timestamp)
	}
	back.Timestamp = m.Timestamp
	if diff := cmp.Diff(m, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

func TestParseLine(t *testing.T) {
	const ok = `{"id":"m1","from":"alice","to":"bob","text":"hi","timestamp":"2026-01-02T03:04:05.006Z"}`
	tests := []struct {
		name, line string
		wantErr    string // substring; "" = valid
	}{
		{"valid", ok, ""},
		{"valid with newline", ok + "\n", ""},
		{"crlf", ok + "\r\n", ""},
		{"unknown fields ignored", `{"id":"m1","from":"alice","to":"bob","text":"hi","timestamp":"2026-01-02T03:04:05Z","read":false}`, ""},
		{"structured", `{"id":"m1","from":"a","to":"b","text":"{}","timestamp":"2026-01-02T03:04:05Z","type":"idle_notification"}`, ""},
		{"not json", `hello`, "invalid message"},
		{"half a line", ok[:40], "invalid message"},
		{"array", `[1,2]`, "invalid message"},
		{"trailing garbage", ok + `x`, "invalid message"},
		{"missing id", `{"from":"alice","to":"bob","text":"hi","timestamp":"2026-01-02T03:04:05Z"}`, "id"},
		{"bad id", `{"id":"../x","from":"alice","to":"bob","text":"hi","timestamp":"2026-01-02T03:04:05Z"}`, "id"},
		{"missing from", `{"id":"m1","to":"bob","text":"hi","timestamp":"2026-01-02T03:04:05Z"}`, "from is empty"},
		{"bad to", `{"id":"m1","from":"a","to":"../etc","text":"hi","timestamp":"2026-01-02T03:04:05Z"}`, "to:"},
		{"empty text", `{"id":"m1","from":"a","to":"b","text":"","timestamp":"2026-01-02T03:04:05Z"}`, "text is empty"},
		{"missing timestamp", `{"id":"m1","from":"a","to":"b","text":"hi"}`, "timestamp is missing"},
		{"bad timestamp", `{"id":"m1","from":"a","to":"b","text":"hi","timestamp":"yesterday"}`, "RFC 3339"},
		{"number text", `{"id":"m1","from":"a","to":"b","text":5,"timestamp":"2026-01-02T03:04:05Z"}`, "invalid message"},
		{"control in color", `{"id":"m1","from":"a","to":"b","text":"hi","timestamp":"2026-01-02T03:04:05Z","color":"\u001b[31m"}`, "control character"},
		{"bad type", `{"id":"m1","from":"a","to":"b","text":"hi","timestamp":"2026-01-02T03:04:05Z","type":"Bad Type"}`, "type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseLine([]byte(tt.line))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("ParseLine: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("ParseLine error = %v, want one containing %q", err, tt.wantErr)
			}
			if !errors.Is(err, ErrInvalidMessage) {
				t.Errorf("error %v is not ErrInvalidMessage", err)
			}
		})
	}
}

func TestNewID(t *testing.T) {
	t0 := time.UnixMilli(1_700_000_000_000)
	seen := map[string]bool{}
	prev := ""
	for i := range 1000 {
		id := NewID(t0.Add(time.Duration(i) * time.Millisecond))
		if err := ValidateID(id); err != nil {
			t.Fatal(err)
		}
		if len(id) != 32 {
			t.Fatalf("id %q has %d characters, want 32", id, len(id))
		}
		if seen[id] {
			t.Fatalf("duplicate id %q", id)
		}
		seen[id] = true
		if id <= prev {
			t.Fatalf("id %q does not sort after %q", id, prev)
		}
		prev = id
	}
	// Same millisecond: still unique (random part).
	//lint:ignore SA4000 two calls: the random parts differ
	if NewID(t0) == NewID(t0) {
		t.Fatal("two ids in the same millisecond are equal")
	}
	if got, want := NewID(t0)[:12], "018bcfe56800"; got != want {
		t.Errorf("timestamp prefix %q, want %q", got, want)
	}
}
