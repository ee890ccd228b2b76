package tasklist

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/helperproc"
	"github.com/cohort-dev/cohort/internal/jsonfile"
	"github.com/cohort-dev/cohort/internal/natstest"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Environment of the claimer processes (claimerMain).
const (
	envClaimer = "TASKLIST_TEST_CLAIMER" // the claimant's name
	envURL     = "TASKLIST_TEST_URL"
	envTasks   = "TASKLIST_TEST_TASKS"
)

const kvBucket = "TASKS_TEST"

// kvBucketOn opens (making it if needed) the test bucket on url over a
// connection of its own, closed when the test ends.
func kvBucketOn(t testing.TB, url string) KVConfig {
	t.Helper()
	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	kv, err := openBucket(t.Context(), nc)
	if err != nil {
		t.Fatal(err)
	}
	return KVConfig{Conn: nc, KV: kv}
}

func openBucket(ctx context.Context, nc *nats.Conn) (jetstream.KeyValue, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	return js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: kvBucket})
}

func newKVList(t testing.TB, on KVConfig, cfg KVConfig) *List {
	t.Helper()
	cfg.Conn, cfg.KV = on.Conn, on.KV
	if cfg.Now == nil {
		cfg.Now = stepClock()
	}
	l, err := OpenKV(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// claimerMain claims every task 1..TASKLIST_TEST_TASKS as
// TASKLIST_TEST_CLAIMER, printing the ids it won.
func claimerMain() int {
	nc, err := nats.Connect(os.Getenv(envURL), nats.Timeout(30*time.Second))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kv, err := openBucket(ctx, nc)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	l, _ := OpenKV(KVConfig{Conn: nc, KV: kv})
	var n int
	fmt.Sscan(os.Getenv(envTasks), &n)
	for i := 1; i <= n; i++ {
		_, err := l.Claim(ctx, fmt.Sprint(i), os.Getenv(envClaimer))
		switch {
		case err == nil:
			fmt.Println(i)
		case !errors.Is(err, ErrClaimed):
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
	}
	return 0
}

// Claims from three processes and three more connections in this one,
// all at once on every task: each task is won exactly once, and the
// winner is the owner the list records.
func TestKVClaimsOnceAcrossProcesses(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	l := newKVList(t, kvBucketOn(t, srv.URL()), KVConfig{})
	const tasks = 12
	for i := range tasks {
		mustTask(t, l, fmt.Sprint("task ", i))
	}
	var wg sync.WaitGroup
	var procs []*helperproc.Proc
	for i := range 3 {
		name := fmt.Sprint("proc", i)
		procs = append(procs, helperproc.Start(t.Context(), t, name, "^$",
			[]string{envClaimer + "=" + name, envURL + "=" + srv.URL(), fmt.Sprint(envTasks, "=", tasks)}, nil, &wg))
	}
	won := map[string][]string{} // task → winners
	var mu sync.Mutex
	var local sync.WaitGroup
	for i := range 3 {
		name := fmt.Sprint("conn", i)
		cl := newKVList(t, kvBucketOn(t, srv.URL()), KVConfig{})
		local.Go(func() {
			for id := 1; id <= tasks; id++ {
				_, err := cl.Claim(t.Context(), fmt.Sprint(id), name)
				if err == nil {
					mu.Lock()
					won[fmt.Sprint(id)] = append(won[fmt.Sprint(id)], name)
					mu.Unlock()
				} else if !errors.Is(err, ErrClaimed) {
					t.Errorf("%s claiming #%d: %v", name, id, err)
				}
			}
		})
	}
	local.Wait()
	wg.Wait()
	for _, p := range procs {
		if p.Err != nil {
			t.Fatalf("%s: %v\n%s", p.Name, p.Err, p.Stderr.String())
		}
		for _, id := range p.Lines {
			won[id] = append(won[id], p.Name)
		}
	}
	got, err := l.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range got {
		if w := won[task.ID]; len(w) != 1 || w[0] != task.Owner || task.Status != StatusInProgress {
			t.Errorf("task #%s: won by %v, list says owner %q status %s", task.ID, w, task.Owner, task.Status)
		}
	}
}

// racyKV writes the key from another connection between a mutation's read
// and its write, once per armed count: the mutation loses its
// compare-and-set and must retry from a fresh read.
type racyKV struct {
	jetstream.KeyValue
	other *List
	armed atomic.Int32
}

func (r *racyKV) Update(ctx context.Context, key string, value []byte, rev uint64) (uint64, error) {
	if r.armed.Add(-1) >= 0 {
		if _, err := r.other.Create(ctx, TaskSpec{Subject: "sneaked in"}); err != nil {
			return 0, err
		}
	}
	return r.KeyValue.Update(ctx, key, value, rev)
}

func TestKVConflictIsRetried(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	other := newKVList(t, kvBucketOn(t, srv.URL()), KVConfig{})
	mustTask(t, other, "first")
	on := kvBucketOn(t, srv.URL())
	racy := &racyKV{KeyValue: on.KV, other: other}
	var lost atomic.Int64
	l := newKVList(t, KVConfig{Conn: on.Conn, KV: racy}, KVConfig{OnConflict: func(n int) { lost.Add(int64(n)) }})
	racy.armed.Store(2)
	if _, err := l.Claim(t.Context(), "1", "alice"); err != nil {
		t.Fatal(err)
	}
	if lost.Load() != 2 {
		t.Errorf("lost compare-and-sets: %d, want 2", lost.Load())
	}
	got, err := l.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var subjects []string
	for _, task := range got {
		subjects = append(subjects, fmt.Sprintf("#%s %s %s %s", task.ID, task.Subject, task.Owner, task.Status))
	}
	want := []string{"#1 first alice in_progress", "#2 sneaked in  pending", "#3 sneaked in  pending"}
	if !slices.Equal(subjects, want) {
		t.Errorf("after the retried claim: %q, want %q (neither the claim nor the writes it raced may be lost)", subjects, want)
	}
}

// An entry that is not a task list is reported with its bucket, key and
// revision, and nothing overwrites it; a task inside it that does not
// parse is reported with its id while the others work, and is written
// back untouched.
func TestKVBadEntryIsReportedNotDropped(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	on := kvBucketOn(t, srv.URL())
	kv := on.KV
	l := newKVList(t, on, KVConfig{})
	garbage := []byte(`{"highWaterMark": 2, "tasks": `)
	if _, err := kv.Put(t.Context(), KVKey, garbage); err != nil {
		t.Fatal(err)
	}
	_, err := l.Create(t.Context(), TaskSpec{Subject: "s"})
	var fe *jsonfile.Error
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "bucket "+kvBucket+" key tasks revision 1") {
		t.Errorf("Create on a broken entry: %v, want an error naming bucket, key and revision", err)
	}
	if _, err := l.List(t.Context()); !errors.As(err, &fe) {
		t.Errorf("List on a broken entry: %v", err)
	}
	if e, _ := kv.Get(t.Context(), KVKey); string(e.Value()) != string(garbage) {
		t.Errorf("the broken entry was overwritten: %q", e.Value())
	}

	badTask := `{"id":"2","subject":"s","status":"done"}`
	good := `{"highWaterMark":2,"tasks":{"1":{"id":"1","subject":"ok","status":"pending"},"2":` + badTask + `,"x":{}}}`
	if _, err := kv.Put(t.Context(), KVKey, []byte(good)); err != nil {
		t.Fatal(err)
	}
	tasks, err := l.List(t.Context())
	if len(tasks) != 1 || tasks[0].Subject != "ok" {
		t.Errorf("List with one bad task: %+v, want the good one", tasks)
	}
	if err == nil || !strings.Contains(err.Error(), `task "2"`) || !strings.Contains(err.Error(), `task "x"`) {
		t.Errorf("List's error %v does not name the bad tasks 2 and x", err)
	}
	if _, err := l.Claim(t.Context(), "1", "alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Claim(t.Context(), "2", "alice"); !errors.As(err, &fe) {
		t.Errorf("claiming the bad task: %v", err)
	}
	e, _ := kv.Get(t.Context(), KVKey)
	if !strings.Contains(string(e.Value()), badTask) || !strings.Contains(string(e.Value()), `"x":{}`) {
		t.Errorf("the bad tasks were not written back as they were: %s", e.Value())
	}
	if next := mustTask(t, l, "next"); next.ID != "3" {
		t.Errorf("next id %s, want 3", next.ID)
	}
}

// The same story on files and on JetStream: the list behaves the same.
func TestBothBackendsAgree(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	for name, l := range map[string]*List{"files": newTaskList(t), "kv": newKVList(t, kvBucketOn(t, srv.URL()), KVConfig{})} {
		a, b, c := mustTask(t, l, "a"), mustTask(t, l, "b"), mustTask(t, l, "c")
		ctx := t.Context()
		if _, err := l.Update(ctx, b.ID, Patch{AddBlockedBy: []string{a.ID}}); err != nil {
			t.Fatal(name, err)
		}
		if _, err := l.Update(ctx, a.ID, Patch{AddBlockedBy: []string{b.ID}}); !errors.Is(err, ErrCycle) {
			t.Errorf("%s: a cycle: %v", name, err)
		}
		if _, err := l.Claim(ctx, b.ID, "bob"); !errors.Is(err, ErrBlocked) {
			t.Errorf("%s: claiming a blocked task: %v", name, err)
		}
		if err := l.Delete(ctx, c.ID); err != nil {
			t.Fatal(name, err)
		}
		g0, _ := l.Generation()
		if _, err := l.Claim(ctx, a.ID, "alice"); err != nil {
			t.Fatal(name, err)
		}
		if g1, _ := l.Generation(); g1 <= g0 {
			t.Errorf("%s: generation %d after a claim, was %d", name, g1, g0)
		}
		if d := mustTask(t, l, "d"); d.ID != "4" {
			t.Errorf("%s: id after a deleted #3: %s, want 4", name, d.ID)
		}
		got, err := l.Get(ctx, b.ID)
		if err != nil || !slices.Equal(got.OpenBlockers, []string{a.ID}) {
			t.Errorf("%s: #%s: %+v, %v", name, b.ID, got, err)
		}
	}
}

// Release gives back what a member held and had not finished, on both
// backends: the tasks are claimable again; completed ones stay.
func TestReleaseFreesAMembersTasks(t *testing.T) {
	t.Parallel()
	srv := natstest.Start(t)
	for name, l := range map[string]*List{"files": newTaskList(t), "kv": newKVList(t, kvBucketOn(t, srv.URL()), KVConfig{})} {
		ctx := t.Context()
		for _, s := range []string{"a", "b", "c", "d"} {
			mustTask(t, l, s)
		}
		for _, id := range []string{"1", "2", "3"} {
			if _, err := l.Claim(ctx, id, "alice"); err != nil {
				t.Fatal(name, err)
			}
		}
		done := StatusCompleted
		if _, err := l.Update(ctx, "3", Patch{Status: &done}); err != nil {
			t.Fatal(name, err)
		}
		if _, err := l.Claim(ctx, "4", "bob"); err != nil {
			t.Fatal(name, err)
		}
		released, err := l.Release(ctx, "Alice")
		if err != nil {
			t.Fatal(name, err)
		}
		var ids []string
		for _, r := range released {
			ids = append(ids, r.ID)
			if r.Owner != "" || r.Status != StatusPending {
				t.Errorf("%s: released #%s is %q/%s", name, r.ID, r.Owner, r.Status)
			}
		}
		if !slices.Equal(ids, []string{"1", "2"}) {
			t.Errorf("%s: released %v, want [1 2]", name, ids)
		}
		if _, err := l.Claim(ctx, "1", "bob"); err != nil {
			t.Errorf("%s: claiming a released task: %v", name, err)
		}
		if three, _ := l.Get(ctx, "3"); three.Owner != "alice" || three.Status != StatusCompleted {
			t.Errorf("%s: a completed task was released: %+v", name, three)
		}
		if _, err := l.Release(ctx, ""); !errors.Is(err, ErrInvalidTask) {
			t.Errorf("%s: Release of no one: %v", name, err)
		}
	}
}
