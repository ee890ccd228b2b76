package tasklist

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/internal/jsonfile"
)

func newTaskList(t testing.TB) *List {
	t.Helper()
	l, err := Open(Config{Dir: filepath.Join(t.TempDir(), "tasks"), Now: stepClock()})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func mustTask(t testing.TB, l *List, subject string) Task {
	t.Helper()
	task, err := l.Create(context.Background(), TaskSpec{Subject: subject, Description: "do " + subject})
	if err != nil {
		t.Fatal(err)
	}
	return task
}

func mustGet(t testing.TB, l *List, id string) Task {
	t.Helper()
	task, err := l.Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return task
}

func ptr[T any](v T) *T { return &v }

// edges summarises a list's dependencies as "id: blocks / blockedBy".
func edges(t *testing.T, l *List) []string {
	t.Helper()
	tasks, err := l.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, task := range tasks {
		out = append(out, fmt.Sprintf("%s: %v / %v", task.ID, task.Blocks, task.BlockedBy))
	}
	return out
}

func TestTaskCreateGetAndFileFormat(t *testing.T) {
	t.Parallel()
	l := newTaskList(t)
	mustTask(t, l, "first")
	got, err := l.Create(t.Context(), TaskSpec{
		Subject: "Write the parser", Description: "Parse <input> & report errors.", ActiveForm: "Writing the parser",
		Owner: "alice", Metadata: map[string]json.RawMessage{"priority": json.RawMessage(`"high"`)}, BlockedBy: []string{"1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Task{
		ID: "2", Subject: "Write the parser", Description: "Parse <input> & report errors.", ActiveForm: "Writing the parser",
		Owner: "alice", Status: StatusPending, BlockedBy: []string{"1"},
		Metadata:  map[string]json.RawMessage{"priority": json.RawMessage(`"high"`)},
		CreatedAt: t0.Add(2e9), UpdatedAt: t0.Add(2e9), OpenBlockers: []string{"1"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Create (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, mustGet(t, l, "2")); diff != "" {
		t.Errorf("Get (-want +got):\n%s", diff)
	}
	data, err := os.ReadFile(filepath.Join(l.Dir(), "2.json"))
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "task.golden")
	if *update {
		os.WriteFile(golden, data, 0o644)
	}
	wantFile, _ := os.ReadFile(golden)
	if diff := cmp.Diff(string(wantFile), string(data)); diff != "" {
		t.Errorf("2.json (-golden +got); run with -update if intended:\n%s", diff)
	}
	if hwm, _ := os.ReadFile(filepath.Join(l.Dir(), highWaterMarkFile)); string(hwm) != "2" {
		t.Errorf(".highwatermark = %q, want 2", hwm)
	}
}

func TestTaskCreateRefusesBadInput(t *testing.T) {
	t.Parallel()
	l := newTaskList(t)
	mustTask(t, l, "first")
	for name, spec := range map[string]TaskSpec{
		"empty subject":   {Subject: "  "},
		"long subject":    {Subject: strings.Repeat("x", maxSubjectLen+1)},
		"NUL":             {Subject: "a\x00b"},
		"bad owner":       {Subject: "s", Owner: "../alice"},
		"unknown blocker": {Subject: "s", BlockedBy: []string{"9"}},
		"bad id":          {Subject: "s", Blocks: []string{"01"}},
		"bad metadata":    {Subject: "s", Metadata: map[string]json.RawMessage{"k": json.RawMessage(`{`)}},
	} {
		if _, err := l.Create(t.Context(), spec); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// Nothing was written for the refused tasks, and no id was used up.
	if got := mustTask(t, l, "second"); got.ID != "2" {
		t.Errorf("next id = %s, want 2", got.ID)
	}
}

func TestTaskIDsIncreaseAndAreNeverReused(t *testing.T) {
	t.Parallel()
	l := newTaskList(t)
	for range 11 {
		mustTask(t, l, "t")
	}
	if err := l.Delete(t.Context(), "11"); err != nil {
		t.Fatal(err)
	}
	if got := mustTask(t, l, "after delete"); got.ID != "12" {
		t.Errorf("id after deleting the newest = %s, want 12", got.ID)
	}
	tasks, err := l.List(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, task := range tasks {
		ids = append(ids, task.ID)
	}
	want := []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "12"}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("List order (-want +got):\n%s", diff)
	}
	// A directory written without a high-water mark (or with a stale one)
	// still gets a fresh id.
	os.WriteFile(filepath.Join(l.Dir(), highWaterMarkFile), []byte("3"), 0o600)
	if got := mustTask(t, l, "stale mark"); got.ID != "13" {
		t.Errorf("id with a stale mark = %s, want 13", got.ID)
	}
}

func TestDependenciesStaySymmetric(t *testing.T) {
	t.Parallel()
	l := newTaskList(t)
	for range 4 {
		mustTask(t, l, "t")
	}
	ctx := t.Context()
	if _, err := l.Update(ctx, "1", Patch{AddBlocks: []string{"2", "3"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Update(ctx, "4", Patch{AddBlockedBy: []string{"3", "2"}}); err != nil {
		t.Fatal(err)
	}
	// Adding an edge twice changes nothing.
	if _, err := l.Update(ctx, "2", Patch{AddBlockedBy: []string{"1"}}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"1: [2 3] / []",
		"2: [4] / [1]",
		"3: [4] / [1]",
		"4: [] / [2 3]",
	}
	if diff := cmp.Diff(want, edges(t, l)); diff != "" {
		t.Errorf("edges (-want +got):\n%s", diff)
	}
}

func TestDependencyRefusals(t *testing.T) {
	t.Parallel()
	l := newTaskList(t)
	for range 3 {
		mustTask(t, l, "t")
	}
	ctx := t.Context()
	if _, err := l.Update(ctx, "1", Patch{AddBlocks: []string{"2"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Update(ctx, "2", Patch{AddBlocks: []string{"3"}}); err != nil {
		t.Fatal(err)
	}
	before := edges(t, l)
	tests := []struct {
		name  string
		id    string
		patch Patch
		want  error
		text  string
	}{
		{"direct cycle", "2", Patch{AddBlocks: []string{"1"}}, ErrCycle, "#1 blocks #2"},
		{"long cycle", "3", Patch{AddBlocks: []string{"1"}}, ErrCycle, "#1 blocks #2 blocks #3"},
		{"cycle via blockedBy", "1", Patch{AddBlockedBy: []string{"3"}}, ErrCycle, "#1 blocks #2 blocks #3"},
		{"self", "2", Patch{AddBlockedBy: []string{"2"}}, ErrInvalidTask, "itself"},
		{"unknown", "1", Patch{AddBlocks: []string{"3", "42"}}, ErrTaskNotFound, "#42"},
		{"unknown task", "42", Patch{Subject: ptr("x")}, ErrTaskNotFound, "#42"},
		{"bad id", "1", Patch{AddBlocks: []string{"#2"}}, ErrInvalidTask, "task id"},
		{"bad status", "1", Patch{Status: ptr(Status("done"))}, ErrInvalidTask, "pending, in_progress, completed"},
	}
	for _, tt := range tests {
		_, err := l.Update(ctx, tt.id, tt.patch)
		if !errors.Is(err, tt.want) || !strings.Contains(fmt.Sprint(err), tt.text) {
			t.Errorf("%s: %v, want %v mentioning %q", tt.name, err, tt.want, tt.text)
		}
	}
	// All or nothing: the valid part of the refused "unknown" patch (3) was
	// not applied either.
	if diff := cmp.Diff(before, edges(t, l)); diff != "" {
		t.Errorf("edges changed by refused updates (-before +after):\n%s", diff)
	}
}

func TestBlockedTaskCannotStart(t *testing.T) {
	t.Parallel()
	l := newTaskList(t)
	for range 4 {
		mustTask(t, l, "t")
	}
	ctx := t.Context()
	if _, err := l.Update(ctx, "3", Patch{AddBlockedBy: []string{"1", "2"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Update(ctx, "2", Patch{Status: ptr(StatusInProgress), Owner: ptr("bob")}); err != nil {
		t.Fatal(err)
	}
	_, err := l.Update(ctx, "3", Patch{Status: ptr(StatusInProgress)})
	var be *BlockedError
	if !errors.As(err, &be) || !errors.Is(err, ErrBlocked) {
		t.Fatalf("starting a blocked task: %v", err)
	}
	wantMsg := "task #3 is blocked by #1 (pending), #2 (in_progress, owner bob); it can start once those tasks are completed"
	if diff := cmp.Diff(wantMsg, err.Error()); diff != "" {
		t.Errorf("message (-want +got):\n%s", diff)
	}
	for _, id := range []string{"1", "2"} {
		if _, err := l.Update(ctx, id, Patch{Status: ptr(StatusCompleted)}); err != nil {
			t.Fatal(err)
		}
	}
	if got := mustGet(t, l, "3"); got.Blocked() {
		t.Fatalf("task 3 still blocked by %v", got.OpenBlockers)
	}
	if _, err := l.Update(ctx, "3", Patch{Status: ptr(StatusInProgress)}); err != nil {
		t.Fatalf("starting an unblocked task: %v", err)
	}
	// History is kept; reopening a blocker blocks pending dependents again.
	if _, err := l.Update(ctx, "4", Patch{AddBlockedBy: []string{"1"}}); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, l, "3"); !cmp.Equal(got.BlockedBy, []string{"1", "2"}) {
		t.Errorf("blockedBy after completion = %v, want the history [1 2]", got.BlockedBy)
	}
	if _, err := l.Update(ctx, "1", Patch{Status: ptr(StatusPending)}); err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, l, "4"); !cmp.Equal(got.OpenBlockers, []string{"1"}) {
		t.Errorf("task 4 open blockers = %v, want [1]", got.OpenBlockers)
	}
}

func TestClaim(t *testing.T) {
	t.Parallel()
	l := newTaskList(t)
	for range 3 {
		mustTask(t, l, "t")
	}
	ctx := t.Context()
	if _, err := l.Update(ctx, "3", Patch{AddBlockedBy: []string{"2"}}); err != nil {
		t.Fatal(err)
	}
	got, err := l.Claim(ctx, "1", "alice")
	if err != nil {
		t.Fatal(err)
	}
	if got.Owner != "alice" || got.Status != StatusInProgress {
		t.Errorf("claimed task: %+v", got)
	}
	if _, err := l.Claim(ctx, "1", "Alice"); err != nil {
		t.Errorf("re-claim by the owner: %v", err)
	}
	var ce *ClaimedError
	if _, err := l.Claim(ctx, "1", "bob"); !errors.As(err, &ce) || ce.Owner != "alice" {
		t.Errorf("claim of alice's task by bob: %v", err)
	}
	if _, err := l.Claim(ctx, "3", "bob"); !errors.Is(err, ErrBlocked) {
		t.Errorf("claim of a blocked task: %v", err)
	}
	if _, err := l.Update(ctx, "2", Patch{Status: ptr(StatusCompleted)}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Claim(ctx, "2", "bob"); !errors.Is(err, ErrCompleted) {
		t.Errorf("claim of a completed task: %v", err)
	}
	if _, err := l.Claim(ctx, "9", "bob"); !errors.Is(err, ErrTaskNotFound) {
		t.Errorf("claim of a missing task: %v", err)
	}
	if _, err := l.Claim(ctx, "3", ""); !errors.Is(err, ErrInvalidTask) {
		t.Errorf("claim without owner: %v", err)
	}
	// ClaimBy makes an ownerless start a claim.
	if _, err := l.Update(ctx, "1", Patch{Status: ptr(StatusInProgress), ClaimBy: "bob"}); !errors.Is(err, ErrClaimed) {
		t.Errorf("start of alice's task by bob: %v", err)
	}
	got, err = l.Update(ctx, "3", Patch{Status: ptr(StatusInProgress), ClaimBy: "bob"})
	if err != nil || got.Owner != "bob" {
		t.Errorf("start with ClaimBy: %+v, %v", got, err)
	}
}

func TestClaimOneWinnerGoroutines(t *testing.T) {
	t.Parallel()
	l := newTaskList(t)
	mustTask(t, l, "contested")
	const n = 16
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, errs[i] = l.Claim(t.Context(), "1", fmt.Sprintf("agent%d", i))
		})
	}
	wg.Wait()
	winners := 0
	for i, err := range errs {
		switch {
		case err == nil:
			winners++
			if owner := mustGet(t, l, "1").Owner; owner != fmt.Sprintf("agent%d", i) {
				t.Errorf("winner agent%d but owner %s", i, owner)
			}
		case !errors.Is(err, ErrClaimed):
			t.Errorf("claim %d: %v", i, err)
		}
	}
	if winners != 1 {
		t.Errorf("%d winners, want exactly 1", winners)
	}
}

func TestDeleteRemovesReferences(t *testing.T) {
	t.Parallel()
	l := newTaskList(t)
	for range 3 {
		mustTask(t, l, "t")
	}
	ctx := t.Context()
	if _, err := l.Update(ctx, "2", Patch{AddBlockedBy: []string{"1"}, AddBlocks: []string{"3"}}); err != nil {
		t.Fatal(err)
	}
	if err := l.Delete(ctx, "2"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"1: [] / []", "3: [] / []"}, edges(t, l)); diff != "" {
		t.Errorf("edges (-want +got):\n%s", diff)
	}
	if err := l.Delete(ctx, "2"); !errors.Is(err, ErrTaskNotFound) {
		t.Errorf("second delete: %v", err)
	}
}

func TestMetadataMerge(t *testing.T) {
	t.Parallel()
	l := newTaskList(t)
	mustTask(t, l, "t")
	raw := func(s string) json.RawMessage { return json.RawMessage(s) }
	got, err := l.Update(t.Context(), "1", Patch{Metadata: map[string]json.RawMessage{"a": raw(`1`), "b": raw(`{"x":true}`)}})
	if err != nil {
		t.Fatal(err)
	}
	got, err = l.Update(t.Context(), "1", Patch{Metadata: map[string]json.RawMessage{"a": raw(` null `), "c": raw(`"s"`)}})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"b": `{"x":true}`, "c": `"s"`}
	if diff := cmp.Diff(want, stringify(got.Metadata)); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
}

func TestGenerationCountsMutations(t *testing.T) {
	t.Parallel()
	l := newTaskList(t)
	gen := func() uint64 {
		g, err := l.Generation()
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	if g := gen(); g != 0 {
		t.Fatalf("new list generation %d", g)
	}
	mustTask(t, l, "t")
	mustTask(t, l, "u")
	if _, err := l.Update(t.Context(), "1", Patch{Subject: ptr("t")}); err != nil { // no change
		t.Fatal(err)
	}
	if _, err := l.Claim(t.Context(), "1", "alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Claim(t.Context(), "1", "bob"); err == nil { // refused: no change
		t.Fatal("bob claimed alice's task")
	}
	if g := gen(); g != 3 {
		t.Errorf("generation %d after 3 changes", g)
	}
}

func TestCorruptTaskFileIsNamedAndKept(t *testing.T) {
	t.Parallel()
	l := newTaskList(t)
	for range 3 {
		mustTask(t, l, "t")
	}
	path := filepath.Join(l.Dir(), "2.json")
	garbage := []byte("{\"id\": \"2\",\n  \"status\": oops}\n")
	if err := os.WriteFile(path, garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	tasks, err := l.List(t.Context())
	var fe *jsonfile.Error
	if !errors.As(err, &fe) || fe.Path != path || fe.Line != 2 {
		t.Errorf("List error: %v, want a *jsonfile.Error for %s line 2", err, path)
	}
	if len(tasks) != 2 {
		t.Errorf("List returned %d tasks, want the 2 readable ones", len(tasks))
	}
	if _, err := l.Get(t.Context(), "2"); !errors.As(err, &fe) {
		t.Errorf("Get of the corrupt task: %v", err)
	}
	if _, err := l.Update(t.Context(), "1", Patch{AddBlocks: []string{"2"}}); !errors.As(err, &fe) {
		t.Errorf("depending on the corrupt task: %v", err)
	}
	// A file whose id disagrees with its name is refused too.
	os.WriteFile(filepath.Join(l.Dir(), "3.json"), []byte(`{"id":"4","subject":"s","status":"pending"}`), 0o600)
	if _, err := l.Get(t.Context(), "3"); err == nil || !strings.Contains(err.Error(), "its name says") {
		t.Errorf("Get of a misnamed task: %v", err)
	}
	if got, _ := os.ReadFile(path); string(got) != string(garbage) {
		t.Error("the corrupt file was rewritten")
	}
	if got := mustTask(t, l, "next"); got.ID != "4" {
		t.Errorf("next id %s, want 4", got.ID)
	}
}

func TestHalfWrittenEdgeIsRepaired(t *testing.T) {
	t.Parallel()
	l := newTaskList(t)
	mustTask(t, l, "a")
	mustTask(t, l, "b")
	// As if a crash came between writing 1.json and 2.json; 1 also names
	// a task that no longer exists.
	one := `{"id":"1","subject":"a","description":"","status":"pending","blocks":["2","7"],"blockedBy":[]}`
	os.WriteFile(filepath.Join(l.Dir(), "1.json"), []byte(one), 0o600)
	if diff := cmp.Diff([]string{"1: [2] / []", "2: [] / [1]"}, edges(t, l)); diff != "" {
		t.Errorf("edges (-want +got):\n%s", diff)
	}
	// The next mutation writes the repair.
	mustTask(t, l, "c")
	data, _ := os.ReadFile(filepath.Join(l.Dir(), "2.json"))
	task, err := ParseTask("2.json", data)
	if err != nil || !cmp.Equal(task.BlockedBy, []string{"1"}) {
		t.Errorf("2.json after repair: %+v, %v", task, err)
	}
}
