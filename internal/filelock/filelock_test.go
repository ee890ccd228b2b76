package filelock

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gofrs/flock"
)

func TestLockExcludesAndWaits(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.lock")
	lk, err := Lock(t.Context(), p, Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	if other, err := TryLock(p, Options{}); other != nil || err != nil {
		t.Fatalf("a second exclusive lock was taken: %v, %v", other, err)
	}
	var wg sync.WaitGroup
	got := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		l2, err := Lock(t.Context(), p, Options{Timeout: 10 * time.Second})
		if err == nil {
			l2.Unlock()
		}
		got <- err
	}()
	lk.Unlock()
	wg.Wait()
	if err := <-got; err != nil {
		t.Fatalf("the waiter did not get the released lock: %v", err)
	}
}

func TestSharedLocksShareAndExcludeWriters(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.lock")
	a, err := Lock(t.Context(), p, Options{Create: true, Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Unlock()
	b, err := TryLock(p, Options{Shared: true})
	if err != nil || b == nil {
		t.Fatalf("a second shared lock was refused: %v", err)
	}
	defer b.Unlock()
	if w, err := TryLock(p, Options{}); w != nil || err != nil {
		t.Fatalf("an exclusive lock was taken under shared ones: %v", err)
	}
}

func TestLockTimesOutWithAClearError(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.lock")
	lk, err := Lock(t.Context(), p, Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Unlock()
	_, err = Lock(t.Context(), p, Options{Timeout: 30 * time.Millisecond})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("got %v, want a deadline error", err)
	}
}

func TestMissingFileAndCheck(t *testing.T) {
	dir := t.TempDir()
	if _, err := Lock(t.Context(), filepath.Join(dir, "none.lock"), Options{}); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a missing lock file: %v", err)
	}
	p := filepath.Join(dir, "x.lock")
	tries := 0
	lk, err := Lock(t.Context(), p, Options{Create: true, Check: func(*flock.Flock) (bool, error) {
		tries++
		return tries > 2, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	lk.Unlock()
	if tries != 3 {
		t.Fatalf("Check ran %d times, want 3 (two refusals, then the lock)", tries)
	}
}
