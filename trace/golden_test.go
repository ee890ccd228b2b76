package trace

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// TestGolden pins the bytes of a small trace written with a fake clock:
// a lead that spawns a subagent (two parallel calls, a retry, a
// compaction), a background shell, and a call still open at Close.
func TestGolden(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "small.json")
	w, err := Create(path, Config{Session: "sess-1", Now: newClock(250 * time.Microsecond).Now})
	if err != nil {
		t.Fatal(err)
	}
	feed(w,
		req("lead", "", 1), token("lead", ""), answer("lead", "", 1, "c1", "b1"),
		toolStart("lead", "", "c1", "Agent", `{"description":"find the bug","prompt":"Look at main.go","subagent_type":"Explore"}`),
		started("a01", "local_agent", "c1", "find the bug", "Explore"),
		req("a1", "c1", 1), retry("a1", "c1"), token("a1", "c1"), answer("a1", "c1", 1, "r1", "r2"),
		toolStart("a1", "c1", "r1", "Read", `{"file_path":"/src/main.go"}`),
		toolStart("a1", "c1", "r2", "Grep", `{"pattern":"panic\\(","path":"/src"}`),
		toolDone("a1", "c1", "r1", "Read", false),
		toolDone("a1", "c1", "r2", "Grep", true),
		compacted("a1", "c1"),
		req("a1", "c1", 2), answer("a1", "c1", 2),
		notified("a01", "c1", "completed"),
		toolDone("lead", "", "c1", "Agent", false),
		toolStart("lead", "", "b1", "Bash", `{"command":"go test ./...","run_in_background":true}`),
		started("b01", "local_bash", "b1", "go test ./...", ""),
		toolDone("lead", "", "b1", "Bash", false),
		req("lead", "", 2), answer("lead", "", 2, "r3"),
		toolStart("lead", "", "r3", "Read", `{"file_path":"/src/main_test.go"}`),
	)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "small.golden")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("trace differs from %s (run go test -update and review the diff):\n%s", golden, got)
	}
	sum, err := Validate(bytes.NewReader(want))
	if err != nil {
		t.Fatalf("the golden trace does not validate: %v", err)
	}
	// lead: turn 2 (answered, its Read call open), the agent, Read r3, and
	// the background shell.
	if sum.Unfinished != 4 {
		t.Errorf("unfinished = %d, want 4", sum.Unfinished)
	}
}
