package cohort

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// fifo makes a named pipe and opens it read-write, so that neither end's
// open blocks: the test reads what a process writes to it, or writes
// what a process waits to read.
func fifo(t *testing.T, path string) *os.File {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// TestCheckpointRunsWhileTheFirstRequestStreams is issue 41's ordering
// claim: the checkpoint before a turn adds no wall time to it. The
// checkpoint's git is held (a git on the session's PATH that waits on a
// pipe before it lists the tree), and still the turn's first request
// reaches the API; the API's answer, a Write, is let through while the
// checkpoint is still held, and the Write runs only once the checkpoint
// has captured the tree (its git write-tree has returned: the order in
// which the kernel reported a marker the held git makes then and the
// file), so the checkpoint does not hold the file it wrote. The Write
// does not wait for the checkpoint's record (issue 40).
func TestCheckpointRunsWhileTheFirstRequestStreams(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	realGit, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(e.cohortHome(), "checkpoints")
	hold, sessions := filepath.Join(store, "hold"), filepath.Join(store, "sessions")
	for _, d := range []string{hold, sessions} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	started, release := fifo(t, filepath.Join(hold, "started")), fifo(t, filepath.Join(hold, "release"))
	bin := t.TempDir()
	script := "#!/bin/sh\ncase \"$*\" in *'ls-files -z -m -o --exclude-standard'*)\n" +
		"  if mkdir '" + hold + "/once' 2>/dev/null; then printf x > '" + hold + "/started'; read line < '" + hold + "/release'; fi;;\n" +
		"*write-tree*) '" + realGit + "' \"$@\"; st=$?; mkdir '" + hold + "/captured' 2>/dev/null; exit $st;;\nesac\n" +
		"exec '" + realGit + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	e.vars["PATH"] = bin + string(os.PathListSeparator) + e.vars["PATH"]
	if err := os.WriteFile(filepath.Join(e.dir, "kept.txt"), []byte("the user's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	made := filepath.Join(e.dir, "made.txt")
	first := newGate()
	e.rt.on("ORDER", func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			if !first.wait(r) {
				return fakeapi.TextReply("cancelled")
			}
			return fakeapi.Reply{Content: []fakeapi.Block{use("Write", map[string]any{"file_path": made, "content": "by the turn\n"})}}
		}
		return fakeapi.TextReply("written")
	})
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for _, d := range []string{hold, e.dir} {
		if err := w.Add(d); err != nil {
			t.Fatal(err)
		}
	}
	cfg := e.config()
	cfg.PermissionMode = "bypassPermissions"
	s := e.open(cfg)
	t.Cleanup(func() { release.WriteString("go\n") }) // a failed test lets the checkpoint end
	done := make(chan struct{})
	go func() {
		defer close(done)
		collect(t, s, "ORDER: write made.txt")
	}()

	// The checkpoint is under way and held; the first request gets
	// through all the same.
	if err := started.SetReadDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := started.Read(make([]byte, 1)); err != nil {
		t.Fatalf("the checkpoint's git never started: %v", err)
	}
	first.await(t)
	// The answer, a Write, goes out while the checkpoint is held; then
	// the checkpoint may finish.
	close(first.open)
	if _, err := release.WriteString("go\n"); err != nil {
		t.Fatal(err)
	}
	captured, wrote := filepath.Join(hold, "captured"), ""
	var order []string
	deadline := time.After(time.Minute)
	for wrote == "" {
		select {
		case ev := <-w.Events:
			if ev.Has(fsnotify.Create) && (ev.Name == captured || ev.Name == made) {
				order = append(order, filepath.Base(ev.Name))
				if ev.Name == made {
					wrote = ev.Name
				}
			}
		case err := <-w.Errors:
			t.Fatal(err)
		case <-deadline:
			t.Fatalf("the Write never ran; seen: %q", order)
		}
	}
	<-done
	if len(order) == 0 || order[0] != "captured" {
		t.Errorf("files in the order the kernel saw them: %q; want the checkpoint's tree captured before made.txt", order)
	}
	rep, err := s.Rewind(t.Context(), RewindRequest{Turn: 1, Mode: "code", DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(rep.Delete, func(p string) bool { return strings.HasSuffix(p, "made.txt") }) {
		t.Errorf("a rewind to before the turn deletes %q, not made.txt: the checkpoint held it", rep.Delete)
	}
}
