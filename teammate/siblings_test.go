package teammate

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/team"
)

const testBatch = "00112233aabbccdd"

func fileGates(t *testing.T, names ...string) []*FileGate {
	t.Helper()
	dir := t.TempDir()
	var out []*FileGate
	for _, n := range names {
		g, err := NewFileGate(dir, testBatch, n, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, g)
	}
	return out
}

// enterAsync runs g.Enter on its own goroutine; polls gets a value each
// time it finds the gate shut.
func enterAsync(ctx context.Context, g *FileGate, prefix string) (polls chan struct{}, done chan error) {
	polls, done = make(chan struct{}, 1024), make(chan error, 1)
	g.onPoll = func() { polls <- struct{}{} }
	go func() {
		first, _, err := g.Enter(ctx, prefix)
		if err == nil && first {
			err = errors.New("a second sibling went first")
		}
		done <- err
	}()
	return polls, done
}

// waitShut waits until the waiting sibling has found the gate shut twice
// and has not gone through.
func waitShut(t *testing.T, polls chan struct{}, done chan error) {
	t.Helper()
	for range 2 {
		select {
		case <-polls:
		case err := <-done:
			t.Fatalf("the second sibling went before the first opened the gate (err %v)", err)
		case <-time.After(10 * time.Second):
			t.Fatal("the second sibling neither waited nor went")
		}
	}
}

func awaitDone(t *testing.T, done chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the second sibling still waits")
		return nil
	}
}

// TestFileGateHoldsTheRestUntilTheFirstOpens: across processes (here two
// gates on one directory) the first sibling of a prefix goes at once and
// the second waits until the first opens the gate at its first token.
func TestFileGateHoldsTheRestUntilTheFirstOpens(t *testing.T) {
	g := fileGates(t, "alice", "bob")
	first, open, err := g[0].Enter(t.Context(), "tools-a")
	if err != nil || !first {
		t.Fatalf("alice: first %v, err %v; want to go first", first, err)
	}
	polls, done := enterAsync(t.Context(), g[1], "tools-a")
	waitShut(t, polls, done)
	open()
	open() // twice is harmless: at the first token and when the turn ends
	if err := awaitDone(t, done); err != nil {
		t.Fatal(err)
	}
}

// TestFileGateOtherPrefixGoesAtOnce: siblings of the batch whose prefixes
// differ cannot share the cache, so each goes first.
func TestFileGateOtherPrefixGoesAtOnce(t *testing.T) {
	g := fileGates(t, "alice", "bob")
	for i, p := range []string{"tools-a", "tools/b"} {
		if first, _, err := g[i].Enter(t.Context(), p); err != nil || !first {
			t.Fatalf("%s on its own prefix: first %v, err %v", g[i].name, first, err)
		}
	}
}

// TestFileGateFirstDiedReleasesTheRest: a first sibling whose status says
// it died never opens the gate; the rest go without it.
func TestFileGateFirstDiedReleasesTheRest(t *testing.T) {
	g := fileGates(t, "alice", "bob")
	if first, _, err := g[0].Enter(t.Context(), "p"); err != nil || !first {
		t.Fatalf("alice: first %v, err %v", first, err)
	}
	polls, done := enterAsync(t.Context(), g[1], "p")
	waitShut(t, polls, done)
	teamDir := filepath.Dir(g[0].dir)
	data, _ := json.Marshal(Status{Name: "alice", State: StateDead, Heartbeat: time.Now()})
	if err := os.MkdirAll(filepath.Dir(filepath.Join(teamDir, team.StatusDir, "alice.json")), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(teamDir, team.StatusDir, "alice.json"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := awaitDone(t, done); err != nil {
		t.Fatal(err)
	}
}

// TestFileGateWaitEndsWithItsContext: a stopped teammate does not wait on.
func TestFileGateWaitEndsWithItsContext(t *testing.T) {
	g := fileGates(t, "alice", "bob")
	if _, _, err := g[0].Enter(t.Context(), "p"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	polls, done := enterAsync(ctx, g[1], "p")
	waitShut(t, polls, done)
	cancel()
	if err := awaitDone(t, done); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
}

// TestFileGateRefusesABadBatchName: the batch comes from a command line;
// anything but the lead's hex name is refused, never used as a path.
func TestFileGateRefusesABadBatchName(t *testing.T) {
	for _, b := range []string{"", "../../etc", "0011/2233aabbccdd", "XYZ12345"} {
		if _, err := NewFileGate(t.TempDir(), b, "bob", 0); err == nil {
			t.Errorf("batch %q was accepted", b)
		}
	}
}
