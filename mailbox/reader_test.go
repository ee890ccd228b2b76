package mailbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func send(t testing.TB, d *Dir, to string, textsAndIDs ...string) {
	t.Helper()
	for _, s := range textsAndIDs {
		id, text, ok := strings.Cut(s, "=")
		if !ok {
			id, text = "", s
		}
		mustAppend(t, d, Message{ID: id, From: "alice", To: to, Text: text})
	}
}

func read(t testing.TB, r *Reader) []Message {
	t.Helper()
	msgs, err := r.Read(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

func TestReadAckDelivery(t *testing.T) {
	d, pr := testDir(t, Config{}, "bob")
	r := openReader(t, d, "bob")
	if got := read(t, r); len(got) != 0 {
		t.Fatalf("empty inbox gave %v", got)
	}
	send(t, d, "bob", "one", "two")
	got := read(t, r)
	if diff := cmp.Diff([]string{"one", "two"}, texts(got)); diff != "" {
		t.Fatalf("first read (-want +got):\n%s", diff)
	}
	// A second Read returns only what is new, acknowledged or not.
	send(t, d, "bob", "three")
	got2 := read(t, r)
	if diff := cmp.Diff([]string{"three"}, texts(got2)); diff != "" {
		t.Fatalf("second read (-want +got):\n%s", diff)
	}
	if err := r.Ack(t.Context(), ids(got)...); err != nil {
		t.Fatal(err)
	}
	if err := r.Ack(t.Context(), ids(got)...); err != nil {
		t.Fatalf("acknowledging twice: %v", err)
	}
	if got := read(t, r); len(got) != 0 {
		t.Fatalf("read after ack gave %v", texts(got))
	}
	if len(pr.all()) != 0 {
		t.Errorf("unexpected problems: %v", pr.all())
	}
	err := r.Ack(t.Context(), "never-sent")
	if !errors.Is(err, ErrNotDelivered) || !strings.Contains(err.Error(), "never-sent") {
		t.Errorf("Ack of unknown id = %v, want ErrNotDelivered naming it", err)
	}
}

func TestStates(t *testing.T) {
	d, _ := testDir(t, Config{}, "bob")
	r := openReader(t, d, "bob")
	m := mustAppend(t, d, Message{From: "alice", To: "bob", Text: "decide"})
	if s := r.State(m.ID); s != StatePending {
		t.Errorf("before Read: %s, want pending", s)
	}
	read(t, r)
	if s := r.State(m.ID); s != StateProcessing {
		t.Errorf("after Read: %s, want processing", s)
	}
	if err := r.Ack(t.Context(), m.ID); err != nil {
		t.Fatal(err)
	}
	if s := r.State(m.ID); s != StateProcessed {
		t.Errorf("after Ack: %s, want processed", s)
	}
	r.Close()
	r2 := openReader(t, d, "bob")
	if s := r2.State(m.ID); s != StateProcessed {
		t.Errorf("after restart: %s, want processed", s)
	}
}

func TestDedupeResentIDs(t *testing.T) {
	d, _ := testDir(t, Config{}, "bob")
	r := openReader(t, d, "bob")
	send(t, d, "bob", "m1=first", "m1=resent while processing")
	got := read(t, r)
	if diff := cmp.Diff([]string{"first"}, texts(got)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if err := r.Ack(t.Context(), "m1"); err != nil {
		t.Fatal(err)
	}
	send(t, d, "bob", "m1=resent after ack", "m2=fresh")
	got = read(t, r)
	if diff := cmp.Diff([]string{"fresh"}, texts(got)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if err := r.Ack(t.Context(), "m2"); err != nil {
		t.Fatal(err)
	}
	r.Close()
	// After a restart the window still holds both ids.
	r2 := openReader(t, d, "bob")
	send(t, d, "bob", "m1=resent after restart", "m2=again", "m3=new")
	if diff := cmp.Diff([]string{"new"}, texts(read(t, r2))); diff != "" {
		t.Fatalf("after restart (-want +got):\n%s", diff)
	}
}

func TestRestartRedeliversOnlyUnacked(t *testing.T) {
	d, _ := testDir(t, Config{}, "bob")
	r := openReader(t, d, "bob")
	send(t, d, "bob", "a=A", "b=B", "c=C", "d=D")
	if got := ids(read(t, r)); len(got) != 4 {
		t.Fatalf("read %v", got)
	}
	// Out of order: b and d acknowledged, a and c not.
	if err := r.Ack(t.Context(), "b", "d"); err != nil {
		t.Fatal(err)
	}
	r.Close() // as if the process died: a and c were never acknowledged

	r2 := openReader(t, d, "bob")
	got := read(t, r2)
	if diff := cmp.Diff([]string{"a", "c"}, ids(got)); diff != "" {
		t.Fatalf("redelivered (-want +got):\n%s", diff)
	}
	if got := read(t, r2); len(got) != 0 {
		t.Fatalf("redelivered twice: %v", ids(got))
	}
	if err := r2.Ack(t.Context(), "a", "c"); err != nil {
		t.Fatal(err)
	}
	r2.Close()
	r3 := openReader(t, d, "bob")
	if got := read(t, r3); len(got) != 0 {
		t.Fatalf("acknowledged messages delivered again: %v", ids(got))
	}
	c, _, err := loadCursor(d.cursorPath("bob"))
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(d.inboxPath("bob"))
	if c.Offset != st.Size() || len(c.Ahead) != 0 {
		t.Errorf("cursor offset %d ahead %v; want the whole file (%d) consumed and nothing ahead", c.Offset, c.Ahead, st.Size())
	}
}

func TestSecondReaderRefused(t *testing.T) {
	d, _ := testDir(t, Config{}, "bob")
	r := openReader(t, d, "bob")
	if _, err := d.OpenReader("bob"); !errors.Is(err, ErrReaderBusy) {
		t.Fatalf("second OpenReader = %v, want ErrReaderBusy", err)
	}
	r.Close()
	if _, err := r.Read(t.Context()); !errors.Is(err, ErrClosed) {
		t.Errorf("Read after Close = %v, want ErrClosed", err)
	}
	r2 := openReader(t, d, "bob")
	r2.Close()
	if _, err := d.OpenReader("nobody"); !errors.Is(err, ErrUnknownRecipient) {
		t.Errorf("OpenReader of unknown agent = %v, want ErrUnknownRecipient", err)
	}
}

func TestCorruptLineSkippedAndReported(t *testing.T) {
	d, pr := testDir(t, Config{}, "bob")
	send(t, d, "bob", "m1=before")
	f, err := os.OpenFile(d.inboxPath("bob"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("this is not json\n")
	f.WriteString(`{"id":"m9","from":"alice","to":"carol","text":"wrong inbox","timestamp":"2026-01-01T00:00:00Z"}` + "\n")
	f.WriteString("\n")
	f.Close()
	send(t, d, "bob", "m2=after")

	r := openReader(t, d, "bob")
	got := read(t, r)
	if diff := cmp.Diff([]string{"before", "after"}, texts(got)); diff != "" {
		t.Fatalf("delivered (-want +got):\n%s", diff)
	}
	probs := pr.lines()
	if len(probs) != 2 {
		t.Fatalf("problems %v, want 2 line reports", probs)
	}
	if probs[0].Line != 2 || !strings.Contains(probs[0].Reason, "unreadable") {
		t.Errorf("first report %v, want line 2 unreadable", probs[0])
	}
	if probs[1].Line != 3 || !strings.Contains(probs[1].Reason, `addressed to "carol"`) {
		t.Errorf("second report %v, want line 3 misaddressed", probs[1])
	}
	want := fmt.Sprintf("%s:2: ", d.inboxPath("bob"))
	if !strings.HasPrefix(probs[0].String(), want) {
		t.Errorf("report %q does not start with %q", probs[0].String(), want)
	}
	// Skipped lines do not hold up the cursor, and are not reported again.
	if err := r.Ack(t.Context(), ids(got)...); err != nil {
		t.Fatal(err)
	}
	r.Close()
	r2 := openReader(t, d, "bob")
	if got := read(t, r2); len(got) != 0 {
		t.Fatalf("redelivered %v", texts(got))
	}
	if n := len(pr.lines()); n != 2 {
		t.Errorf("%d line reports after restart, want still 2", n)
	}
}

func TestTornLineNotConsumedUntilCompleted(t *testing.T) {
	d, pr := testDir(t, Config{}, "bob")
	send(t, d, "bob", "m1=whole")
	full, err := encodeLine(Message{ID: "m2", From: "alice", To: "bob", Text: "slow writer", Timestamp: fixedClock()})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(d.inboxPath("bob"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	f.Write(full[:20])

	r := openReader(t, d, "bob")
	if diff := cmp.Diff([]string{"whole"}, texts(read(t, r))); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if got := read(t, r); len(got) != 0 {
		t.Fatalf("half a line delivered: %v", got)
	}
	// The writer finishes its line (a slow write, not a dead writer).
	f.Write(full[20:])
	if diff := cmp.Diff([]string{"slow writer"}, texts(read(t, r))); diff != "" {
		t.Fatalf("completed line (-want +got):\n%s", diff)
	}
	if len(pr.all()) != 0 {
		t.Errorf("problems for a slow writer: %v", pr.all())
	}
}

func TestTornLineOfDeadWriterSkippedOnNextAppend(t *testing.T) {
	d, pr := testDir(t, Config{}, "bob")
	send(t, d, "bob", "m1=whole")
	full, _ := encodeLine(Message{ID: "dead", From: "alice", To: "bob", Text: "never finished", Timestamp: fixedClock()})
	f, err := os.OpenFile(d.inboxPath("bob"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(full[:len(full)/2])
	f.Close()

	r := openReader(t, d, "bob")
	first := read(t, r)
	if err := r.Ack(t.Context(), ids(first)...); err != nil {
		t.Fatal(err)
	}
	send(t, d, "bob", "m3=next")
	if diff := cmp.Diff([]string{"next"}, texts(read(t, r))); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	probs := pr.lines()
	if len(probs) != 1 || probs[0].Line != 2 {
		t.Fatalf("problems %v, want one report for line 2", probs)
	}
}

func TestOversizedLineSkipped(t *testing.T) {
	d, pr := testDir(t, Config{MaxMessageBytes: 256}, "bob")
	big := fmt.Sprintf(`{"id":"big","from":"a","to":"bob","text":%q,"timestamp":"2026-01-01T00:00:00Z"}`+"\n", strings.Repeat("x", 100_000))
	if err := os.WriteFile(d.inboxPath("bob"), []byte(big), 0o600); err != nil {
		t.Fatal(err)
	}
	send(t, d, "bob", "small")
	r := openReader(t, d, "bob")
	if diff := cmp.Diff([]string{"small"}, texts(read(t, r))); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if probs := pr.lines(); len(probs) != 1 || !strings.Contains(probs[0].Reason, "longer than 256") {
		t.Fatalf("problems %v, want one oversized-line report", probs)
	}
}

func TestLineNumbersSurviveRestart(t *testing.T) {
	d, pr := testDir(t, Config{}, "bob")
	send(t, d, "bob", "1", "2", "3")
	r := openReader(t, d, "bob")
	if err := r.Ack(t.Context(), ids(read(t, r))...); err != nil {
		t.Fatal(err)
	}
	r.Close()
	f, _ := os.OpenFile(d.inboxPath("bob"), os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString("garbage\n")
	f.Close()
	r2 := openReader(t, d, "bob")
	read(t, r2)
	if probs := pr.lines(); len(probs) != 1 || probs[0].Line != 4 {
		t.Fatalf("problems %v, want line 4", probs)
	}
}

func TestCorruptCursorIsAClearError(t *testing.T) {
	d, _ := testDir(t, Config{}, "bob")
	if err := os.WriteFile(d.cursorPath("bob"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := d.OpenReader("bob")
	if err == nil || !strings.Contains(err.Error(), "bob.cursor") || !strings.Contains(err.Error(), "delete it") {
		t.Fatalf("OpenReader with corrupt cursor = %v, want an error naming the file and the fix", err)
	}
	// The reader lock was released: fixing the cursor makes the inbox usable.
	os.Remove(d.cursorPath("bob"))
	openReader(t, d, "bob")
}

func TestCursorWritesLeaveNoTemporaries(t *testing.T) {
	d, _ := testDir(t, Config{}, "bob")
	// A crashed reader's leftovers are cleared when the next one opens.
	os.WriteFile(filepath.Join(d.Path(), "bob.cursor.123.tmp"), []byte("x"), 0o600)
	os.WriteFile(filepath.Join(d.Path(), "bob.jsonl.compact"), []byte("x"), 0o600)
	r := openReader(t, d, "bob")
	for i := range 5 {
		send(t, d, "bob", fmt.Sprint(i))
		if err := r.Ack(t.Context(), ids(read(t, r))...); err != nil {
			t.Fatal(err)
		}
	}
	entries, _ := os.ReadDir(d.Path())
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{"bob.cursor", "bob.jsonl", "bob.lock", "bob.reader.lock"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("directory (-want +got):\n%s", diff)
	}
}
