package kvcas

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/natstest"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// bucket connects to srv and makes bucket name.
func bucket(t *testing.T, url, name string) (*nats.Conn, jetstream.KeyValue) {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := js.CreateOrUpdateKeyValue(t.Context(), jetstream.KeyValueConfig{Bucket: name, Storage: jetstream.FileStorage})
	if err != nil {
		t.Fatal(err)
	}
	return nc, kv
}

// add is an Update callback that adds n to a decimal counter.
func add(n int) func(Entry) ([]byte, bool, error) {
	return func(e Entry) ([]byte, bool, error) {
		v := 0
		if e.Revision != 0 {
			var err error
			if v, err = strconv.Atoi(string(e.Data)); err != nil {
				return nil, false, fmt.Errorf("counter revision %d: %w", e.Revision, err)
			}
		}
		return []byte(strconv.Itoa(v + n)), true, nil
	}
}

func value(t *testing.T, nc *nats.Conn, kv jetstream.KeyValue, key string) Entry {
	t.Helper()
	e, err := Get(t.Context(), nc, kv, key)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestALostCompareAndSetIsRetriedFromAFreshRead: another writer changes
// the key between Update's read and its write; the write is refused by
// the server, and Update reads again and applies its change on top of
// the other's, so neither is lost.
func TestALostCompareAndSetIsRetriedFromAFreshRead(t *testing.T) {
	srv := natstest.Start(t)
	nc, kv := bucket(t, srv.URL(), "CAS")
	other, okv := bucket(t, srv.URL(), "CAS")
	if _, _, err := Update(t.Context(), nc, kv, "n", add(1)); err != nil {
		t.Fatal(err)
	}
	calls := 0
	rev, conflicts, err := Update(t.Context(), nc, kv, "n", func(e Entry) ([]byte, bool, error) {
		calls++
		if calls == 1 { // the other machine writes meanwhile
			if _, _, err := Update(t.Context(), other, okv, "n", add(100)); err != nil {
				return nil, false, err
			}
		}
		return add(10)(e)
	})
	if err != nil {
		t.Fatal(err)
	}
	if conflicts != 1 || calls != 2 {
		t.Fatalf("conflicts %d, calls %d; want 1 and 2", conflicts, calls)
	}
	e := value(t, nc, kv, "n")
	if string(e.Data) != "111" || e.Revision != rev {
		t.Fatalf("the counter is %q at revision %d (Update said %d); want 111, both changes kept", e.Data, e.Revision, rev)
	}
}

// TestConcurrentWritersLoseNothing: eight connections add to one counter
// at once; every addition is counted once.
func TestConcurrentWritersLoseNothing(t *testing.T) {
	srv := natstest.Start(t)
	const writers, each = 8, 10
	var wg sync.WaitGroup
	var mu sync.Mutex
	lost := 0
	for range writers {
		nc, kv := bucket(t, srv.URL(), "CAS")
		wg.Go(func() {
			for range each {
				_, c, err := Update(t.Context(), nc, kv, "n", add(1))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				lost += c
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	nc, kv := bucket(t, srv.URL(), "CAS")
	if e := value(t, nc, kv, "n"); string(e.Data) != strconv.Itoa(writers*each) {
		t.Fatalf("the counter is %q, want %d", e.Data, writers*each)
	}
	t.Logf("%d lost compare-and-sets retried", lost)
}

// TestAnEntryThatDoesNotParseIsReportedAndKept: the callback's error ends
// Update at once, with no write: the bad entry stays for a person to see
// and mend.
func TestAnEntryThatDoesNotParseIsReportedAndKept(t *testing.T) {
	srv := natstest.Start(t)
	nc, kv := bucket(t, srv.URL(), "CAS")
	rev, err := kv.Put(t.Context(), "n", []byte("{not a number"))
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	_, _, err = Update(t.Context(), nc, kv, "n", func(e Entry) ([]byte, bool, error) {
		calls++
		return add(1)(e)
	})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("counter revision %d", rev)) {
		t.Fatalf("err = %v, want the callback's error naming revision %d", err, rev)
	}
	if calls != 1 {
		t.Fatalf("the callback ran %d times, want once", calls)
	}
	if e := value(t, nc, kv, "n"); string(e.Data) != "{not a number" || e.Revision != rev {
		t.Fatalf("the entry is %q at revision %d, want it kept as it was (revision %d)", e.Data, e.Revision, rev)
	}
}

// TestNothingIsWrittenWhenTheCallbackChangesNothing: a read through
// Update costs no revision.
func TestNothingIsWrittenWhenTheCallbackChangesNothing(t *testing.T) {
	srv := natstest.Start(t)
	nc, kv := bucket(t, srv.URL(), "CAS")
	want, err := kv.Put(t.Context(), "n", []byte("7"))
	if err != nil {
		t.Fatal(err)
	}
	rev, _, err := Update(t.Context(), nc, kv, "n", func(e Entry) ([]byte, bool, error) { return e.Data, false, nil })
	if err != nil || rev != want {
		t.Fatalf("rev %d, err %v; want %d", rev, err, want)
	}
	if e := value(t, nc, kv, "n"); e.Revision != want {
		t.Fatalf("revision %d after a read, want %d", e.Revision, want)
	}
}

// TestUpdateEndsWithItsContext: a key that another writer changes before
// every write never settles; Update gives up when its deadline passes,
// saying how many writes beat it, and a cancelled context ends it before
// it reads.
func TestUpdateEndsWithItsContext(t *testing.T) {
	srv := natstest.Start(t)
	nc, kv := bucket(t, srv.URL(), "CAS")
	_, okv := bucket(t, srv.URL(), "CAS")
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, conflicts, err := Update(ctx, nc, kv, "n", func(e Entry) ([]byte, bool, error) {
		if _, err := okv.Put(context.Background(), "n", []byte("0")); err != nil { // always first
			return nil, false, err
		}
		return add(1)(e)
	})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "gave up after") || conflicts == 0 {
		t.Fatalf("err = %v (conflicts %d), want a deadline after lost writes", err, conflicts)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Update took %s past a 300ms deadline", d)
	}

	cancelled, stop := context.WithCancel(t.Context())
	stop()
	called := false
	if _, _, err := Update(cancelled, nc, kv, "n", func(Entry) ([]byte, bool, error) { called = true; return nil, false, nil }); !errors.Is(err, context.Canceled) || called {
		t.Fatalf("err = %v, callback called %v; want context.Canceled before any read", err, called)
	}
}

// TestADeletedKeyReadsAsMissingAndIsCreatedAgain: after a delete (or a
// purge) Get reads the zero Entry, and the next Update creates the key
// from nothing rather than failing or reading the old value.
func TestADeletedKeyReadsAsMissingAndIsCreatedAgain(t *testing.T) {
	srv := natstest.Start(t)
	nc, kv := bucket(t, srv.URL(), "CAS")
	if e := value(t, nc, kv, "never"); e.Revision != 0 || e.Data != nil {
		t.Fatalf("a key never written reads %+v, want the zero Entry", e)
	}
	for _, drop := range []struct {
		name string
		fn   func(context.Context, string, ...jetstream.KVDeleteOpt) error
	}{{"delete", kv.Delete}, {"purge", kv.Purge}} {
		t.Run(drop.name, func(t *testing.T) {
			if _, err := kv.Put(t.Context(), "n", []byte("41")); err != nil {
				t.Fatal(err)
			}
			if err := drop.fn(t.Context(), "n"); err != nil {
				t.Fatal(err)
			}
			if e := value(t, nc, kv, "n"); e.Revision != 0 || e.Data != nil {
				t.Fatalf("after %s the key reads %+v, want the zero Entry", drop.name, e)
			}
			var seen []Entry
			rev, _, err := Update(t.Context(), nc, kv, "n", func(e Entry) ([]byte, bool, error) {
				seen = append(seen, e)
				return add(1)(e)
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(seen) != 1 || seen[0].Revision != 0 {
				t.Fatalf("the callback saw %+v, want one read of a missing key", seen)
			}
			if e := value(t, nc, kv, "n"); string(e.Data) != "1" || e.Revision != rev {
				t.Fatalf("the key is %q at %d, want 1 at %d", e.Data, e.Revision, rev)
			}
		})
	}
}

// TestGetNamesTheBucketWhenTheServerRefuses: a bucket that is not there
// is an error naming it and the key, not a missing key.
func TestGetNamesTheBucketWhenTheServerRefuses(t *testing.T) {
	srv := natstest.Start(t)
	nc, kv := bucket(t, srv.URL(), "CAS")
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if err := js.DeleteKeyValue(t.Context(), "CAS"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	_, err = Get(ctx, nc, kv, "n")
	if err == nil || !strings.Contains(err.Error(), "CAS key n") {
		t.Fatalf("err = %v, want an error naming bucket CAS and key n", err)
	}
}
