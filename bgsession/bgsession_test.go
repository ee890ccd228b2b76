package bgsession

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/internal/jsonfile"
	"go.uber.org/goleak"
	"golang.org/x/sys/unix"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newReg(t *testing.T) *Registry {
	t.Helper()
	dir, err := os.MkdirTemp("", "bgs") // short: socket paths
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	g, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(g.Sockets, 0o700); err != nil {
		t.Fatal(err)
	}
	return g
}

// TestLiveness: alive needs the recorded process (by pid and start time)
// and an answering socket; each missing makes the session dead.
func TestLiveness(t *testing.T) {
	g := newReg(t)
	ctx := context.Background()
	l, err := net.Listen("unix", filepath.Join(g.Sockets, "s1.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	me := Record{ID: "aaaa0001", PID: os.Getpid(), ProcStart: ProcStart(os.Getpid()), SessionID: "s1", State: StateWorking, Status: StatusBusy}
	if r := g.Check(ctx, me); !r.Alive || r.State != StateWorking {
		t.Fatalf("this process with its socket: %+v", r)
	}
	reused := me
	reused.ProcStart++ // the pid now belongs to another process
	if r := g.Check(ctx, reused); r.Alive || r.State != StateDead || r.Status != "" {
		t.Fatalf("a reused pid: %+v", r)
	}
	silent := me
	silent.SessionID = "s2" // no socket answers
	if r := g.Check(ctx, silent); r.Alive || r.State != StateDead {
		t.Fatalf("a socket that does not answer: %+v", r)
	}
	stopped := reused
	stopped.State = StateStopped
	if r := g.Check(ctx, stopped); r.State != StateStopped {
		t.Fatalf("an ended session keeps its state: %+v", r)
	}
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	gone := Record{ID: "aaaa0002", PID: cmd.Process.Pid, State: StateWorking}
	if r := g.Check(ctx, gone); r.Alive {
		t.Fatalf("an ended process: %+v", r)
	}
	if err := g.Stop(ctx, gone, false); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("stop of an ended process: %v", err)
	}
}

// TestListSkipsCorruptRecords: a record that is not JSON, or whose id is
// not its file's name, is named by path and skipped.
func TestListSkipsCorruptRecords(t *testing.T) {
	g := newReg(t)
	for _, r := range []Record{{ID: "bbbb0001", Name: "one", StartedAt: 1}, {ID: "bbbb0002", Name: "two", StartedAt: 2}} {
		if err := g.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	bad := filepath.Join(g.Dir, "bbbb0003.json")
	os.WriteFile(bad, []byte("{\n\"id\": }"), 0o600)
	wrong := filepath.Join(g.Dir, "bbbb0004.json")
	os.WriteFile(wrong, []byte(`{"id": "other"}`), 0o600)
	recs, errs := g.List()
	if len(recs) != 2 || recs[0].ID != "bbbb0002" {
		t.Fatalf("want the two good records, newest first: %+v", recs)
	}
	if len(errs) != 2 {
		t.Fatalf("want two errors: %v", errs)
	}
	var je *jsonfile.Error
	if !errors.As(errs[0], &je) || !strings.Contains(errs[0].Error(), bad+":2:") {
		t.Errorf("the corrupt record is not named with its line: %v", errs[0])
	}
	if !strings.Contains(errs[1].Error(), wrong) || !strings.Contains(errs[1].Error(), `"other"`) {
		t.Errorf("the misnamed record: %v", errs[1])
	}
	if _, err := g.Read("../x"); err == nil {
		t.Errorf("an id that leaves the directory was read")
	}
}

// TestFind: exact ids win, prefixes and name parts match, and no match or
// several list the candidates.
func TestFind(t *testing.T) {
	recs := []Record{
		{ID: "abc12345", SessionID: "11111111-aaaa", Name: "fix docs"},
		{ID: "abd99999", SessionID: "22222222-bbbb", Name: "fix tests"},
		{ID: "abc", Name: "short"},
	}
	for q, want := range map[string]string{"abc": "abc", "abc1": "abc12345", "2222": "abd99999", "DOCS": "abc12345", "11111111-aaaa": "abc12345"} {
		r, err := Find(recs, q)
		if err != nil || r.ID != want {
			t.Errorf("Find(%q) = %s, %v; want %s", q, r.ID, err, want)
		}
	}
	for q, want := range map[string][]string{
		"fix":   {"matches 2 sessions", "fix docs", "fix tests"},
		"zzz":   {`no background session matches "zzz"`, "abc12345", "abd99999", "short"},
		"  ":    {"no session named"},
		"abd9x": {"no background session matches"},
	} {
		_, err := Find(recs, q)
		for _, w := range want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("Find(%q): %v; want it to say %q", q, err, w)
			}
		}
	}
	if _, err := Find(nil, "x"); err == nil || !strings.Contains(err.Error(), "cohort --bg") {
		t.Errorf("Find in an empty registry: %v", err)
	}
}

// TestStartAndStop: Start runs a detached process (its own session and
// group) and records it; Stop ends it and records it stopped.
func TestStartAndStop(t *testing.T) {
	g := newReg(t)
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep program")
	}
	rec, err := g.Start("cccc0001", StartSpec{Exe: sleep, Args: []string{"60"}, Dir: t.TempDir(), Name: "nap"})
	if err != nil {
		t.Fatal(err)
	}
	if !running(rec) {
		t.Fatalf("the started process does not run: %+v", rec)
	}
	if sid, err := unix.Getsid(rec.PID); err != nil || sid != rec.PID {
		t.Fatalf("the process does not lead its own session: sid %d, %v", sid, err)
	}
	got, err := g.Read(rec.ID)
	if err != nil || got.PID != rec.PID || got.Name != "nap" || got.State != StateWorking {
		t.Fatalf("record %+v, %v", got, err)
	}
	if err := g.Stop(context.Background(), rec, false); err != nil {
		t.Fatal(err)
	}
	if running(rec) {
		t.Fatalf("still running after Stop")
	}
	if got, _ := g.Read(rec.ID); got.State != StateStopped {
		t.Fatalf("state after Stop: %+v", got)
	}
}
