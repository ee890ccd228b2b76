package worktree

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCreateConcurrentlyThenFinishClean(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	m := r.manager(Config{})
	const n = 20
	wts := make([]*Worktree, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			wts[i], errs[i] = m.Create(t.Context(), fmt.Sprintf("agent-%02d", i), Owner{SessionID: "s1", AgentID: fmt.Sprint(i)})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Create agent-%02d: %v", i, err)
		}
	}
	head := r.git("rev-parse", "HEAD")
	for i, wt := range wts {
		want := filepath.Join(r.dir, ".cohort", "worktrees", fmt.Sprintf("agent-%02d", i))
		if wt.Path != want || wt.Branch != fmt.Sprintf("cohort/agent-%02d", i) || wt.HeadCommit != head || wt.BaseCommit != head {
			t.Errorf("worktree %d = %+v, want path %s at %s", i, wt, want, head)
		}
		if !exists(filepath.Join(wt.Path, "src", "main.go")) {
			t.Errorf("%s is not checked out", wt.Path)
		}
		if reason, locked, _ := readLock(wt.admin); !locked || !strings.Contains(reason, fmt.Sprintf("pid=%d session=s1 agent=%d ", os.Getpid(), i)) {
			t.Errorf("%s lock = %q, %v; want a Cohort lock naming this process", wt.Path, reason, locked)
		}
	}
	if got := len(r.worktrees()); got != n+1 {
		t.Errorf("git lists %d worktrees, want %d", got, n+1)
	}
	if st := r.git("status", "--porcelain"); st != "" {
		t.Errorf("main checkout is not clean with worktrees inside it:\n%s", st)
	}

	outs := make([]Outcome, n)
	for i, wt := range wts {
		wg.Go(func() { outs[i], errs[i] = m.Finish(t.Context(), wt) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || outs[i].Kept {
			t.Errorf("Finish %d = %+v, %v; want removed", i, outs[i], errs[i])
		}
	}
	assertNothingLeft(t, r)
}

// assertNothingLeft checks that no Cohort worktree, branch or directory
// remains.
func assertNothingLeft(t *testing.T, r *testRepo) {
	t.Helper()
	if got := r.worktrees(); !cmp.Equal(got, []string{r.dir}) {
		t.Errorf("worktrees left: %v", got)
	}
	if got := r.branches(); len(got) != 0 {
		t.Errorf("branches left: %v", got)
	}
	entries, _ := os.ReadDir(filepath.Join(r.dir, ".cohort", "worktrees"))
	if len(entries) != 0 {
		t.Errorf("directories left under .cohort/worktrees: %v", entries)
	}
	if st := r.git("status", "--porcelain"); st != "" {
		t.Errorf("main checkout not clean:\n%s", st)
	}
}

func TestCreateFromSeveralProcesses(t *testing.T) {
	t.Parallel()
	r := newRepo(t)
	const procs, each = 2, 3
	children := make([]*child, procs)
	for p := range children {
		children[p] = startChild(t, r, "many", fmt.Sprintf("COHORT_TEST_SLUG=proc%d", p), fmt.Sprintf("COHORT_TEST_N=%d", each))
	}
	m := r.manager(Config{})
	var wg sync.WaitGroup
	for i := range each {
		wg.Go(func() {
			wt, err := m.Create(t.Context(), fmt.Sprintf("local-%d", i), Owner{})
			if err != nil {
				t.Errorf("Create: %v", err)
				return
			}
			if _, err := m.Finish(t.Context(), wt); err != nil {
				t.Errorf("Finish: %v", err)
			}
		})
	}
	wg.Wait()
	for p, c := range children {
		if line, err := c.line(), c.wait(); line != "done" || err != nil {
			t.Fatalf("child %d said %q and exited with %v", p, line, err)
		}
	}
	// The children exited without finishing: their worktrees are orphans
	// of dead processes, clean, so the sweep removes every one.
	results, err := m.Sweep(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != procs*each {
		t.Errorf("sweep saw %d worktrees, want %d", len(results), procs*each)
	}
	for _, res := range results {
		if res.Action != SweepRemoved {
			t.Errorf("sweep %s: %s (%s), want removed", res.Path, res.Action, res.Reason)
		}
	}
	assertNothingLeft(t, r)
}
