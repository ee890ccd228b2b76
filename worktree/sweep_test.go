package worktree

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Fake pids for the injected liveness function: one dead, one alive.
const (
	deadPID = 4_000_001
	livePID = 4_000_002
)

func TestSweepWithInjectedLiveness(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	now := time.Now()
	clock := func() time.Time { return now }
	alive := func(pid int) bool { return pid != deadPID }

	// Managers that stand for other Cohort processes.
	dead := r.manager(Config{})
	dead.pid = deadPID
	live := r.manager(Config{})
	live.pid = livePID
	remote := r.manager(Config{})
	remote.pid, remote.host = deadPID, "another-host"
	self := r.manager(Config{})

	create := func(m *Manager, slug string) *Worktree {
		t.Helper()
		wt, err := m.Create(t.Context(), slug, Owner{SessionID: "s", AgentID: slug})
		if err != nil {
			t.Fatal(err)
		}
		return wt
	}
	create(dead, "dead-clean")
	dirty := create(dead, "dead-dirty")
	writeFile(t, filepath.Join(dirty.Path, "draft.txt"), "draft\n")
	committed := create(dead, "dead-commit")
	writeFile(t, filepath.Join(committed.Path, "feature.go"), "package main\n")
	r.gitIn(committed.Path, "add", ".")
	r.gitIn(committed.Path, "commit", "--quiet", "-m", "feature")
	create(live, "live")
	create(self, "self")
	create(remote, "remote")
	foreign := create(dead, "foreign-lock")
	r.git("worktree", "unlock", foreign.Path)
	r.git("worktree", "lock", "--reason", "on a removable disk", foreign.Path)
	kept := create(self, "kept-clean")
	if _, err := self.Keep(t.Context(), kept); err != nil {
		t.Fatal(err)
	}
	crashed := create(self, "unlocked")
	r.git("worktree", "unlock", crashed.Path) // as if we died between unlock and removal
	gone := create(dead, "dead-deleted-dir")
	if err := os.RemoveAll(gone.Path); err != nil {
		t.Fatal(err)
	}
	// The user's own worktree outside .cohort is never looked at.
	userWT := filepath.Join(canonical(t.TempDir()), "user-wt")
	r.git("worktree", "add", "--quiet", "-b", "user-branch", userWT)

	sweep := func(m *Manager) map[string]SweepAction {
		t.Helper()
		results, err := m.Sweep(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]SweepAction{}
		for _, res := range results {
			got[m.slugOf(res.Path)] = res.Action
			if res.Path == dirty.Path && !cmp.Equal(res.Changes.Untracked, []string{"draft.txt"}) {
				t.Errorf("dirty orphan reported with changes %+v", res.Changes)
			}
		}
		return got
	}

	sweeper := r.manager(Config{Alive: alive, Now: clock})
	want := map[string]SweepAction{
		"dead-clean":       SweepRemoved,
		"dead-dirty":       SweepKept,
		"dead-commit":      SweepKept,
		"dead-deleted-dir": SweepRemoved,
		"live":             SweepInUse,
		"self":             SweepInUse,
		"remote":           SweepInUse,
		"foreign-lock":     SweepSkipped,
		"kept-clean":       SweepKept,
		"unlocked":         SweepSkipped, // within the grace period
	}
	if diff := cmp.Diff(want, sweep(sweeper)); diff != "" {
		t.Errorf("first sweep (-want +got):\n%s", diff)
	}
	wantBranches := []string{"cohort/dead-commit", "cohort/dead-dirty", "cohort/foreign-lock", "cohort/kept-clean", "cohort/live", "cohort/remote", "cohort/self", "cohort/unlocked"}
	if diff := cmp.Diff(wantBranches, r.branches()); diff != "" {
		t.Errorf("branches after the sweep (-want +got):\n%s", diff)
	}
	if _, locked, _ := readLock(dirty.admin); locked {
		t.Error("a kept orphan is still locked by its dead owner")
	}

	// An hour later the unlocked one is an orphan; the rest is unchanged.
	now = now.Add(time.Hour)
	delete(want, "dead-clean")
	delete(want, "dead-deleted-dir")
	want["unlocked"] = SweepRemoved
	if diff := cmp.Diff(want, sweep(sweeper)); diff != "" {
		t.Errorf("second sweep (-want +got):\n%s", diff)
	}
	if !exists(dirty.Path) || !exists(committed.Path) || !exists(userWT) {
		t.Error("a worktree with changes, or the user's own, was removed")
	}
}

// TestSweepAfterKill kills a real Cohort process (this test binary in child
// mode) that holds a worktree, then sweeps: the orphan goes only if clean.
func TestSweepAfterKill(t *testing.T) {
	t.Parallel()
	for _, dirty := range []bool{false, true} {
		name := map[bool]string{false: "clean", true: "dirty"}[dirty]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := newRepo(t)
			extra := []string{"COHORT_TEST_SLUG=victim"}
			if dirty {
				extra = append(extra, "COHORT_TEST_DIRTY=1")
			}
			c := startChild(t, r, "hold", extra...)
			line := c.line()
			path, ok := strings.CutPrefix(line, "ready ")
			if !ok {
				t.Fatalf("child said %q", line)
			}
			m := r.manager(Config{})
			// While the child lives, its worktree is in use.
			results, err := m.Sweep(t.Context())
			if err != nil || len(results) != 1 || results[0].Action != SweepInUse {
				t.Fatalf("sweep with the owner alive = %+v, %v", results, err)
			}
			if err := c.cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			_ = c.wait() // reaped: the pid is gone
			results, err = m.Sweep(t.Context())
			if err != nil || len(results) != 1 {
				t.Fatalf("sweep = %+v, %v", results, err)
			}
			want := SweepRemoved
			if dirty {
				want = SweepKept
			}
			if results[0].Action != want || results[0].Path != path {
				t.Errorf("sweep = %+v, want %s for %s", results[0], want, path)
			}
			if exists(path) != dirty {
				t.Errorf("worktree exists = %v after the sweep, want %v", exists(path), dirty)
			}
			if got := len(r.branches()); got != map[bool]int{false: 0, true: 1}[dirty] {
				t.Errorf("%d cohort branches left", got)
			}
		})
	}
}

// TestConcurrentSweeps runs two sweeps (as two starting processes would)
// over the same orphans: each orphan is removed once and neither fails.
func TestConcurrentSweeps(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	dead := r.manager(Config{})
	dead.pid = deadPID
	for i := range 4 {
		if _, err := dead.Create(t.Context(), "orphan-"+string(rune('a'+i)), Owner{}); err != nil {
			t.Fatal(err)
		}
	}
	alive := func(pid int) bool { return pid != deadPID }
	sweepers := []*Manager{r.manager(Config{Alive: alive}), r.manager(Config{Alive: alive})}
	results := make([][]SweepResult, len(sweepers))
	errs := make([]error, len(sweepers))
	var wg sync.WaitGroup
	for i, m := range sweepers {
		wg.Go(func() { results[i], errs[i] = m.Sweep(t.Context()) })
	}
	wg.Wait()
	for i := range sweepers {
		if errs[i] != nil {
			t.Errorf("sweep %d: %v", i, errs[i])
		}
		for _, res := range results[i] {
			if res.Action != SweepRemoved {
				t.Errorf("sweep %d: %s %s (%s)", i, res.Path, res.Action, res.Reason)
			}
		}
	}
	assertNothingLeft(t, r)
}
