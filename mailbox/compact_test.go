package mailbox

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sync/errgroup"
)

func inboxLines(t testing.TB, d *Dir, agent string) []string {
	t.Helper()
	data, err := os.ReadFile(d.inboxPath(agent))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

func TestCompactKeepsUnacknowledged(t *testing.T) {
	d, pr := testDir(t, Config{CompactBytes: -1}, "bob")
	for i := range 10 {
		send(t, d, "bob", fmt.Sprintf("m%d=text %d", i, i))
	}
	r := openReader(t, d, "bob")
	read(t, r)
	// m0..m5 and m8 handled; m6, m7, m9 still being processed.
	if err := r.Ack(t.Context(), "m0", "m1", "m2", "m3", "m4", "m5", "m8"); err != nil {
		t.Fatal(err)
	}
	if err := r.Compact(t.Context()); err != nil {
		t.Fatal(err)
	}
	lines := inboxLines(t, d, "bob")
	if len(lines) != 4 || !strings.Contains(lines[0], `"m6"`) || !strings.Contains(lines[3], `"m9"`) {
		t.Fatalf("compacted inbox %q, want m6..m9", lines)
	}
	send(t, d, "bob", "m10=after compaction")
	if diff := cmp.Diff([]string{"m10"}, ids(read(t, r))); diff != "" {
		t.Fatalf("read after compaction (-want +got):\n%s", diff)
	}
	if err := r.Ack(t.Context(), "m6"); err != nil {
		t.Fatal(err)
	}
	r.Close()
	// Restart: m7, m9, m10 were never acknowledged; m8 was.
	r2 := openReader(t, d, "bob")
	if diff := cmp.Diff([]string{"m7", "m9", "m10"}, ids(read(t, r2))); diff != "" {
		t.Fatalf("redelivered after compaction and restart (-want +got):\n%s", diff)
	}
	if len(pr.all()) != 0 {
		t.Errorf("problems: %v", pr.all())
	}
}

// A crash after the cursor names the compacted copy but before the rename:
// the inbox is still the old file, and the reader must resume where it was.
func TestInterruptedCompactionResumes(t *testing.T) {
	d, pr := testDir(t, Config{CompactBytes: -1}, "bob")
	send(t, d, "bob", "a=A", "b=B", "c=C", "d=D")
	r := openReader(t, d, "bob")
	read(t, r)
	if err := r.Ack(t.Context(), "a", "b", "d"); err != nil {
		t.Fatal(err)
	}
	// Run the first half of compactLocked by hand.
	f, err := os.Open(d.inboxPath("bob"))
	if err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	newID, err := copyTail(d.inboxPath("bob")+".compact", f, r.acked, st.Size()-r.acked)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	c := r.cursor()
	old := c.position
	c.position = position{File: newID}
	c.Prev = &old
	if err := saveCursor(d.cursorPath("bob"), c); err != nil {
		t.Fatal(err)
	}
	r.Close() // crash: no rename

	r2 := openReader(t, d, "bob")
	if diff := cmp.Diff([]string{"c"}, ids(read(t, r2))); diff != "" {
		t.Fatalf("after interrupted compaction (-want +got):\n%s", diff)
	}
	if all := pr.all(); len(all) != 1 || !strings.Contains(all[0].Reason, "interrupted") {
		t.Errorf("problems %v, want one note about the interrupted compaction", all)
	}
	// The stale copy was removed; a real compaction now works.
	if _, err := os.Stat(d.inboxPath("bob") + ".compact"); !os.IsNotExist(err) {
		t.Errorf("stale compaction file still there: %v", err)
	}
	if err := r2.Ack(t.Context(), "c"); err != nil {
		t.Fatal(err)
	}
	if err := r2.Compact(t.Context()); err != nil {
		t.Fatal(err)
	}
	if lines := inboxLines(t, d, "bob"); len(lines) != 0 {
		t.Errorf("inbox after full compaction: %q", lines)
	}
}

// Someone replaces the inbox file behind the reader's back: the reader
// notices the new identity, reports it, and re-reads without duplicates.
func TestForeignReplacementRereadsWithDedupe(t *testing.T) {
	d, pr := testDir(t, Config{CompactBytes: -1}, "bob")
	send(t, d, "bob", "a=A", "b=B", "c=C")
	r := openReader(t, d, "bob")
	read(t, r)
	if err := r.Ack(t.Context(), "a", "b"); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(d.inboxPath("bob"))
	tmp := d.inboxPath("bob") + ".copy"
	os.WriteFile(tmp, data, 0o600)
	if err := os.Rename(tmp, d.inboxPath("bob")); err != nil {
		t.Fatal(err)
	}
	send(t, d, "bob", "e=E")
	if diff := cmp.Diff([]string{"e"}, ids(read(t, r))); diff != "" {
		t.Fatalf("after replacement (-want +got):\n%s", diff)
	}
	if len(pr.all()) != 1 {
		t.Errorf("problems %v, want one replacement report", pr.all())
	}
	// c is still processing: acknowledging it works and survives a restart.
	if err := r.Ack(t.Context(), "c", "e"); err != nil {
		t.Fatal(err)
	}
	r.Close()
	r2 := openReader(t, d, "bob")
	if got := read(t, r2); len(got) != 0 {
		t.Fatalf("redelivered %v", ids(got))
	}
}

// Writers append from many goroutines while the reader consumes and
// compacts every few kilobytes: nothing is lost or delivered twice.
func TestCompactionWithConcurrentAppends(t *testing.T) {
	const writers, perWriter = 8, 250
	d, pr := testDir(t, Config{CompactBytes: 2048}, "bob")
	r := openReader(t, d, "bob")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()

	var mu sync.Mutex
	acked := map[string]bool{}
	var g errgroup.Group
	for w := range writers {
		g.Go(func() error {
			for i := range perWriter {
				m, err := d.Append(ctx, Message{From: fmt.Sprintf("w%d", w), To: "bob", Text: fmt.Sprintf("%d/%d", w, i)})
				if err != nil {
					return err
				}
				mu.Lock()
				acked[m.ID] = true
				mu.Unlock()
			}
			return nil
		})
	}
	delivered := map[string]int{}
	compactions := 0
	lastFile := r.file
	for len(delivered) < writers*perWriter {
		msgs, err := r.Receive(ctx)
		if err != nil {
			t.Fatalf("Receive after %d messages: %v", len(delivered), err)
		}
		for _, m := range msgs {
			delivered[m.ID]++
		}
		if err := r.Ack(ctx, ids(msgs)...); err != nil {
			t.Fatal(err)
		}
		if r.file != lastFile {
			compactions++
			lastFile = r.file
		}
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	for id, n := range delivered {
		if n != 1 {
			t.Errorf("message %s delivered %d times", id, n)
		}
		if !acked[id] {
			t.Errorf("message %s delivered but never appended", id)
		}
	}
	if len(acked) != writers*perWriter {
		t.Errorf("%d appends acknowledged, want %d", len(acked), writers*perWriter)
	}
	if compactions < 3 {
		t.Errorf("%d compactions, want several", compactions)
	}
	if len(pr.all()) != 0 {
		t.Errorf("problems: %v", pr.all())
	}
}
