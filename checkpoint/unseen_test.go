package checkpoint

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/permission"
)

// TestRecordedUnseenOutlivesTheSession: a Read deny rule the session had
// (only on its command line, say) hid cli/ from its checkpoints. A rewind
// run later with no rule at all still leaves cli/s.txt alone, because the
// checkpoint recorded what it left out; without the record the file reads
// as made since the checkpoint and is deleted (attack5's E3).
func TestRecordedUnseenOutlivesTheSession(t *testing.T) {
	t.Parallel()
	dir, repo := newRepo(t)
	s := newStore(t)
	write(t, dir, "cli/s.txt", "user's private cli/s.txt\n", 0o644)
	hidden := filepath.Join(dir, "cli")
	root := Root{Dir: dir, Repo: repo, Unseen: func(p string) bool { return strings.HasPrefix(p, hidden+"/") }}
	u := &permission.Unseen{Cwd: dir, Home: t.TempDir(), Rules: []permission.UnseenRule{{Rule: "Read(./cli/**)", Root: dir}}}
	for _, ph := range []Phase{Before, After} {
		if _, err := s.Snapshot(t.Context(), "sess-1", "proj", Record{Turn: 1, Phase: ph, Unseen: u}, []Root{root}); err != nil {
			t.Fatal(err)
		}
		write(t, dir, "a.txt", "changed by the turn\n", 0o644)
	}
	// The rewind is another process's (cohort rewind): a store of its own.
	s, err := Open(t.Context(), Config{Dir: s.Dir()})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Plan(t.Context(), Request{Session: "sess-1", Project: "proj", Turn: 1, Roots: []Root{{Dir: dir, Repo: repo}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Report(); slices.Contains(got.Delete, filepath.Join(dir, "cli/s.txt")) || !slices.Contains(got.Write, filepath.Join(dir, "a.txt")) {
		t.Errorf("plan writes %q, deletes %q; want a.txt written and cli/s.txt left alone", got.Write, got.Delete)
	}
	if _, err := s.Apply(t.Context(), p, Options{Force: true}); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "cli/s.txt")); err != nil || string(data) != "user's private cli/s.txt\n" {
		t.Errorf("cli/s.txt after the rewind: %q, %v", data, err)
	}
}
