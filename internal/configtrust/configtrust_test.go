package configtrust

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestWritableAndApproval(t *testing.T) {
	home, proj, extra := t.TempDir(), t.TempDir(), t.TempDir()
	sub := filepath.Join(proj, "src")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(sub, link); err != nil {
		t.Fatal(err)
	}
	if v := Open(at(home)).Writable(sub); v != nil {
		t.Fatalf("nothing recorded, yet %s is writable: %+v", sub, v)
	}
	now := time.Date(2026, 12, 7, 11, 0, 0, 0, time.UTC)
	if err := Record(t.Context(), at(home), []Root{{Path: proj, Frozen: true}, {Path: extra}}, now); err != nil {
		t.Fatal(err)
	}
	b := Open(at(home))
	for dir, want := range map[string]bool{proj: false, sub: true, link: true, extra: true, filepath.Join(extra, "x"): true, filepath.Dir(proj): false} {
		if got := b.Writable(dir) != nil; got != want {
			t.Errorf("Writable(%s) = %v, want %v", dir, got, want)
		}
	}
	file := filepath.Join(sub, ".cohort", "settings.json")
	v := b.Check(sub, file, []byte("{}"))
	if v == nil || !strings.Contains(v.Why(), proj) || !strings.Contains(v.Why(), "cohort config trust "+file) {
		t.Fatalf("unapproved file's verdict %+v should name the root and the command", v)
	}
	if err := Approve(t.Context(), at(home), file, []byte("{}"), now); err != nil {
		t.Fatal(err)
	}
	b = Open(at(home))
	if v := b.Check(sub, file, []byte("{}")); v != nil {
		t.Errorf("approved content refused: %+v", v)
	}
	if v := b.Check(sub, file, []byte(`{"sandbox": false}`)); v == nil {
		t.Error("changed content still approved")
	}
	if v := b.Check(link, filepath.Join(link, ".cohort", "settings.json"), []byte("{}")); v != nil {
		t.Errorf("the approval is keyed by the resolved path; through a link it was refused: %+v", v)
	}
}

func TestRecordDeduplicatesUnderConcurrency(t *testing.T) {
	home, a, b := t.TempDir(), t.TempDir(), t.TempDir()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := Record(t.Context(), at(home), []Root{{Path: a, Frozen: true}, {Path: b, Frozen: i%2 == 0}}, time.Now()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	bk := Open(at(home))
	if len(bk.roots) != 2 {
		t.Fatalf("want 2 roots once each, got %+v", bk.roots)
	}
	for _, r := range bk.roots {
		if r.Path == b && r.Frozen {
			t.Errorf("%s was recorded open by some session; it must stay open: %+v", b, r)
		}
	}
}

func TestBrokenRegistryFailsClosed(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(Dir(home), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(Dir(home), "roots.json"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	v := Open(at(home)).Check(proj, filepath.Join(proj, ".mcp.json"), nil)
	if v == nil || !strings.Contains(v.Why(), "roots.json") {
		t.Fatalf("a broken registry should refuse and name itself: %+v", v)
	}
	if err := Record(t.Context(), at(home), []Root{{Path: proj}}, time.Now()); err == nil || !strings.Contains(err.Error(), "roots.json") {
		t.Fatalf("recording into a broken registry should fail naming it, got %v", err)
	}
}

func TestSameAsTheFrozenTopIsObeyed(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	wt := filepath.Join(proj, ".cohort", "worktrees", "a")
	for _, d := range []string{filepath.Join(proj, ".claude"), filepath.Join(wt, ".claude")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(proj, ".claude", "settings.json"), []byte(`{"hooks": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Record(t.Context(), at(home), []Root{{Path: proj, Frozen: true}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	b := Open(at(home))
	file := filepath.Join(wt, ".claude", "settings.json")
	if v := b.Check(wt, file, []byte(`{"hooks": {}}`)); v != nil {
		t.Errorf("a worktree's copy of the project's own file should be obeyed: %+v", v)
	}
	if v := b.Check(wt, file, []byte(`{"hooks": {"Stop": []}}`)); v == nil {
		t.Error("a worktree's file that differs from the project's was obeyed")
	}
}

func TestCopyOfTheTopElsewhereIsNotObeyed(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	for _, d := range []string{filepath.Join(proj, ".claude"), filepath.Join(proj, "src", ".claude")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(proj, ".claude", "settings.json"), []byte(`{"hooks": {}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Record(t.Context(), at(home), []Root{{Path: proj, Frozen: true}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(proj, "src")
	if v := Open(at(home)).Check(src, filepath.Join(src, ".claude", "settings.json"), []byte(`{"hooks": {}}`)); v == nil {
		t.Error("a copy of the project's settings in src/ was obeyed: its hooks' $CLAUDE_PROJECT_DIR would be src/")
	}
}

// TestByApproval: only a file inside a recorded root, obeyed because its
// exact content was approved, is obeyed by approval.
func TestByApproval(t *testing.T) {
	home, root := t.TempDir(), t.TempDir()
	ctx := t.Context()
	if err := Record(ctx, at(home), []Root{{Path: root, Frozen: true}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(root, "src", ".cohort")
	file := filepath.Join(sub, "settings.json")
	data := []byte(`{"hooks": {}}`)
	if Open(at(home)).ByApproval(sub, file, data) {
		t.Errorf("an unapproved file counts as approved")
	}
	if err := Approve(ctx, at(home), file, data, time.Now()); err != nil {
		t.Fatal(err)
	}
	b := Open(at(home))
	if !b.ByApproval(sub, file, data) {
		t.Errorf("an approved file inside a root is not obeyed by approval")
	}
	if b.ByApproval(sub, file, []byte(`{}`)) {
		t.Errorf("other content counts as approved")
	}
	outside := t.TempDir()
	if b.ByApproval(outside, filepath.Join(outside, "settings.json"), data) {
		t.Errorf("a file outside every root counts as obeyed by approval")
	}
	var none *Book
	if none.ByApproval(sub, file, data) {
		t.Errorf("a nil Book approves")
	}
}

// at is the registry whose only directory is home's (COHORT_HOME's).
func at(home string) Places { return Places{Dir(home)} }
