package mailbox

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sync/errgroup"
)

// Readers of the cursor file never see a partial write: each load returns a
// complete old or new cursor while another goroutine rewrites it.
func TestCursorWriteIsAtomic(t *testing.T) {
	path := t.TempDir() + "/bob.cursor"
	big := make([]string, 500) // a cursor of ~20 KB, written in several blocks
	for i := range big {
		big[i] = NewID(fixedClock())
	}
	if err := saveCursor(path, cursorFile{Recent: big}); err != nil {
		t.Fatal(err)
	}
	const writes = 50
	var g errgroup.Group
	done := make(chan struct{})
	g.Go(func() error {
		defer close(done)
		for i := range writes {
			if err := saveCursor(path, cursorFile{position: position{Offset: int64(i)}, Recent: big}); err != nil {
				return err
			}
		}
		return nil
	})
	g.Go(func() error {
		for loads := 0; ; loads++ {
			select {
			case <-done:
				return nil
			default:
			}
			c, ok, err := loadCursor(path)
			if err != nil || !ok {
				return fmt.Errorf("load %d: ok=%v err=%v", loads, ok, err)
			}
			if len(c.Recent) != len(big) {
				return fmt.Errorf("load %d: %d recent ids, want %d", loads, len(c.Recent), len(big))
			}
		}
	})
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	c, _, _ := loadCursor(path)
	if c.Offset != writes-1 {
		t.Errorf("final offset %d, want %d", c.Offset, writes-1)
	}
}

func TestRingForgetsOldestFirst(t *testing.T) {
	r := newRing(3, []string{"a", "b"})
	r.add("c")
	r.add("b") // already present: no change
	r.add("d") // evicts a
	if diff := cmp.Diff([]string{"b", "c", "d"}, r.list()); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}
	if r.has("a") || !r.has("d") {
		t.Errorf("has(a)=%v has(d)=%v, want false, true", r.has("a"), r.has("d"))
	}
	// Restored from a longer list, it keeps the newest.
	r2 := newRing(2, []string{"x", "y", "z"})
	if diff := cmp.Diff([]string{"y", "z"}, r2.list()); diff != "" {
		t.Errorf("restored (-want +got):\n%s", diff)
	}
}

// transportContract checks the behaviour every Transport must have; the NATS
// implementation will run it too.
func transportContract(t *testing.T, tr Transport) {
	ctx := t.Context()
	if err := tr.Register(ctx, "lead"); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Append(ctx, Message{From: "x", To: "ghost", Text: "hi"}); !errors.Is(err, ErrUnknownRecipient) {
		t.Fatalf("Append to unregistered agent = %v, want ErrUnknownRecipient", err)
	}
	sent, err := tr.Append(ctx, Message{ID: "req-1", From: "bob", To: "lead", Text: "first"})
	if err != nil {
		t.Fatal(err)
	}
	if sent.ID != "req-1" || sent.Timestamp.IsZero() {
		t.Fatalf("Append returned %+v, want caller id kept and a timestamp", sent)
	}
	second, err := tr.Append(ctx, Message{From: "bob", To: "lead", Text: "second"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Append(ctx, Message{ID: "req-1", From: "bob", To: "lead", Text: "retry of first"}); err != nil {
		t.Fatal(err)
	}

	in, err := tr.OpenInbox(ctx, "lead")
	if err != nil {
		t.Fatal(err)
	}
	got, err := in.Receive(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"first", "second"}, texts(got)); diff != "" {
		t.Fatalf("received (-want +got):\n%s", diff)
	}
	if err := in.Ack(ctx, "req-1"); err != nil {
		t.Fatal(err)
	}
	if err := in.Close(); err != nil {
		t.Fatal(err)
	}

	in, err = tr.OpenInbox(ctx, "lead")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	got, err = in.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{second.ID}, ids(got)); diff != "" {
		t.Fatalf("after reopening, redelivered (-want +got):\n%s", diff)
	}
	if err := in.Ack(context.WithoutCancel(ctx), second.ID); err != nil {
		t.Fatal(err)
	}
}

func TestDirTransportContract(t *testing.T) {
	d, _ := testDir(t, Config{})
	transportContract(t, d)
}
