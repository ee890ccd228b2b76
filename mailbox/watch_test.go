package mailbox

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestWatchSignalsAppend(t *testing.T) {
	d, _ := testDir(t, Config{PollInterval: time.Hour}, "bob") // fsnotify only
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	w, err := d.Watch(ctx, "bob")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	send(t, d, "bob", "hello")
	select {
	case <-w.C():
	case <-ctx.Done():
		t.Fatal("no wake-up after an append")
	}
}

func TestWatchPollingFallback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, _ := testDir(t, Config{NoFSNotify: true, PollInterval: 250 * time.Millisecond}, "bob", "carol")
		w, err := d.Watch(t.Context(), "bob")
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		send(t, d, "carol", "not for bob")
		time.Sleep(time.Second)
		select {
		case <-w.C():
			t.Fatal("wake-up for another agent's inbox")
		default:
		}
		send(t, d, "bob", "for bob")
		time.Sleep(250 * time.Millisecond)
		synctest.Wait()
		select {
		case <-w.C():
		default:
			t.Fatal("no wake-up within one poll interval")
		}
	})
}

func TestReceivePollingOnly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, _ := testDir(t, Config{NoFSNotify: true}, "bob")
		r := openReader(t, d, "bob")
		got := make(chan []Message, 1)
		go func() {
			msgs, err := r.Receive(t.Context())
			if err != nil {
				t.Error(err)
			}
			got <- msgs
		}()
		synctest.Wait() // Receive is waiting
		send(t, d, "bob", "polled")
		start := time.Now()
		msgs := <-got
		if diff := cmp.Diff([]string{"polled"}, texts(msgs)); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		if waited := time.Since(start); waited > 250*time.Millisecond {
			t.Errorf("delivered after %v of fake time, want within the 250 ms default poll", waited)
		}
	})
}

func TestReceiveWakesOnAppend(t *testing.T) {
	d, _ := testDir(t, Config{}, "bob")
	r := openReader(t, d, "bob")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	type result struct {
		msgs []Message
		err  error
	}
	done := make(chan result)
	go func() {
		msgs, err := r.Receive(ctx)
		done <- result{msgs, err}
	}()
	send(t, d, "bob", "wake up")
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	if diff := cmp.Diff([]string{"wake up"}, texts(res.msgs)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestReceiveEnds(t *testing.T) {
	d, _ := testDir(t, Config{}, "bob")
	r := openReader(t, d, "bob")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := r.Receive(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Receive with cancelled ctx = %v, want Canceled", err)
	}
	done := make(chan error)
	go func() {
		_, err := r.Receive(t.Context())
		done <- err
	}()
	// Close while Receive waits (or before it starts): either way it ends.
	r.Close()
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Errorf("Receive across Close = %v, want ErrClosed", err)
	}
}

func TestWatchEndsWithContext(t *testing.T) {
	d, _ := testDir(t, Config{}, "bob")
	ctx, cancel := context.WithCancel(t.Context())
	w, err := d.Watch(ctx, "bob")
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	for range w.C() { // drains, then ends when the goroutine closes C
	}
	w.Close()
	w.Close()
	if _, err := d.Watch(t.Context(), "nobody"); !errors.Is(err, ErrUnknownRecipient) {
		t.Errorf("Watch of unknown agent = %v, want ErrUnknownRecipient", err)
	}
}
