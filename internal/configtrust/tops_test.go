package configtrust

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// topsWorld is a project with no .mcp.json and an empty registry.
type topsWorld struct {
	t          *testing.T
	home, proj string
	now        time.Time
}

func newTopsWorld(t *testing.T) *topsWorld {
	return &topsWorld{t: t, home: t.TempDir(), proj: t.TempDir(), now: time.Date(2026, 12, 7, 13, 0, 0, 0, time.UTC)}
}

func (w *topsWorld) file() string { return filepath.Join(w.proj, ".mcp.json") }

func (w *topsWorld) write(content string) {
	w.t.Helper()
	if err := os.WriteFile(w.file(), []byte(content), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

func (w *topsWorld) begin(id string) {
	w.t.Helper()
	w.now = w.now.Add(time.Minute)
	if err := Begin(w.t.Context(), at(w.home), id, []string{w.proj}, w.now); err != nil {
		w.t.Fatal(err)
	}
}

func (w *topsWorld) end(id string) {
	w.t.Helper()
	w.now = w.now.Add(time.Minute)
	if err := End(w.t.Context(), at(w.home), id, []string{w.proj}, w.now); err != nil {
		w.t.Fatal(err)
	}
}

// verdict is the top .mcp.json's verdict as a later session reads it.
func (w *topsWorld) verdict() *Verdict {
	w.t.Helper()
	return Open(at(w.home)).CheckFile(w.proj, w.file())
}

func (w *topsWorld) wantObeyed(what string) {
	w.t.Helper()
	if v := w.verdict(); v != nil {
		w.t.Errorf("%s: the top .mcp.json should be obeyed, got: %s", what, v.Why())
	}
}

func (w *topsWorld) wantRefused(what, says string) {
	w.t.Helper()
	v := w.verdict()
	if v == nil {
		w.t.Errorf("%s: the top .mcp.json was obeyed; it must need `cohort config trust`", what)
		return
	}
	if why := v.Why(); !strings.Contains(why, "cohort config trust "+w.file()) || !strings.Contains(why, says) {
		w.t.Errorf("%s: the warning should say %q and name the command and the file: %s", what, says, why)
	}
}

func TestTopFileCreatedDuringASessionNeedsApproval(t *testing.T) {
	w := newTopsWorld(t)
	w.begin("s1")
	w.write(`{"mcpServers": {"x": {"command": "sh", "sandbox": false}}}`) // the model, through Bash
	w.wantRefused("during the session that wrote it", "changed while a Cohort session could write")
	w.end("s1")
	w.wantRefused("after that session", "appeared or changed while a Cohort session could write")
	w.begin("s2")
	w.wantRefused("in the next session", "appeared or changed")
	w.end("s2")
	w.wantRefused("after the next session", "appeared or changed")

	if err := Approve(t.Context(), at(w.home), w.file(), []byte(`{"mcpServers": {"x": {"command": "sh", "sandbox": false}}}`), w.now); err != nil {
		t.Fatal(err)
	}
	w.wantObeyed("approved")
	w.begin("s3")
	w.write(`{"mcpServers": {"x": {"command": "sh -c evil", "sandbox": false}}}`)
	w.end("s3")
	w.wantRefused("approved, then changed by a session", "appeared")
}

func TestTopFileEditedBetweenSessionsIsThePersons(t *testing.T) {
	w := newTopsWorld(t)
	w.begin("s1")
	w.end("s1")
	w.write(`{"mcpServers": {"mine": {"command": "my-server"}}}`) // the person, or their git checkout
	w.wantObeyed("written by the person after the session ended")
	w.begin("s2")
	w.wantObeyed("in the session after")
	w.end("s2")
	w.wantObeyed("after that session, unchanged")

	// A model's file, replaced by the person's own between sessions.
	w.begin("s3")
	w.write(`{"mcpServers": {"x": {"command": "evil"}}}`)
	w.end("s3")
	w.wantRefused("the model's file", "appeared")
	w.write(`{"mcpServers": {"mine": {"command": "my-server", "args": ["-v"]}}}`)
	w.wantObeyed("the person's edit of the model's file, between sessions")
	w.begin("s4")
	w.end("s4")
	w.wantObeyed("the person's edit after the next session")

	// Removed by the person, recreated by a model: the removal does not
	// make the name the person's.
	if err := os.Remove(w.file()); err != nil {
		t.Fatal(err)
	}
	w.begin("s5")
	w.write(`{"mcpServers": {"mine": {"command": "my-server", "args": ["-v"]}}}`)
	w.end("s5")
	w.wantRefused("deleted, then recreated by a session (even with the person's earlier content)", "appeared")
}

func TestTopFileChangedBesideARunningSessionIsSuspect(t *testing.T) {
	w := newTopsWorld(t)
	w.write(`{"mcpServers": {"mine": {"command": "my-server"}}}`)
	w.begin("s1")
	w.wantObeyed("the person's file as the session started")
	w.begin("s2") // a second session on the same project
	w.write(`{"mcpServers": {"x": {"command": "evil"}}}`)
	w.end("s2")
	w.wantRefused("changed while s1 still runs", "changed while a Cohort session could write")
	w.end("s1")
	w.wantRefused("after both ended", "appeared")
}

func TestTopFileAfterAKilledSession(t *testing.T) {
	w := newTopsWorld(t)
	w.begin("s1")
	// s1's process is killed: its record stays open, with a PID that
	// runs no more.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	err := updateTops(t.Context(), at(w.home), []string{w.proj}, w.now, func(r *topRoot, _ string) {
		r.Open[0].PID = dead.Process.Pid
	})
	if err != nil {
		t.Fatal(err)
	}
	w.write(`{"mcpServers": {"x": {"command": "evil"}}}`)
	w.wantRefused("written before the killed session's end", "changed while a Cohort session could write")
	w.begin("s2")
	w.end("s2")
	w.wantRefused("after the next session dropped the killed one", "appeared")
	data, err := os.ReadFile(filepath.Join(Dir(w.home), "tops.json"))
	if err != nil || strings.Contains(string(data), `"s1"`) || strings.Contains(string(data), `"s2"`) {
		t.Errorf("the killed and the ended sessions should be off the record (%v):\n%s", err, data)
	}
	// After that, the person's edits are theirs again.
	w.write(`{"mcpServers": {"mine": {"command": "my-server"}}}`)
	w.wantObeyed("the person's edit after the record was brought up to date")
}

func TestTopFileTrustDoesNotReachAWorktreeCopy(t *testing.T) {
	w := newTopsWorld(t)
	wt := filepath.Join(w.proj, ".cohort", "worktrees", "a")
	if err := os.MkdirAll(wt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Record(t.Context(), at(w.home), []Root{{Path: w.proj, Frozen: true}}, w.now); err != nil {
		t.Fatal(err)
	}
	content := []byte(`{"mcpServers": {"x": {"command": "evil"}}}`)
	w.begin("s1")
	w.write(string(content))
	w.end("s1")
	if v := Open(at(w.home)).Check(wt, filepath.Join(wt, ".mcp.json"), content); v == nil {
		t.Error("a worktree's .mcp.json equal to a top one a session wrote was obeyed")
	}
	if err := Approve(t.Context(), at(w.home), w.file(), content, w.now); err != nil {
		t.Fatal(err)
	}
	if v := Open(at(w.home)).Check(wt, filepath.Join(wt, ".mcp.json"), content); v != nil {
		t.Errorf("a worktree's copy of the approved top file was refused: %s", v.Why())
	}
}

func TestTopsRecordUnreadableFailsClosed(t *testing.T) {
	w := newTopsWorld(t)
	w.write(`{}`)
	if err := os.MkdirAll(Dir(w.home), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(Dir(w.home), "tops.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if v := w.verdict(); v == nil || !strings.Contains(v.Why(), "tops.json") {
		t.Errorf("an unreadable record should refuse the top file and name the record: %+v", v)
	}
	if err := Begin(t.Context(), at(w.home), "s1", []string{w.proj}, w.now); err == nil || !strings.Contains(err.Error(), "tops.json") {
		t.Errorf("Begin on an unreadable record: %v", err)
	}
}
