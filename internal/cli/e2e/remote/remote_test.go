package remote

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/internal/natstest"
	"github.com/cohort-dev/cohort/internal/testbin"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// remoteTask matches the prompts the lead gives its remote agents.
var remoteTask = regexp.MustCompile(`remote task (\d+)\b`)

// remotePolicy answers the lead and the workers' agents: the lead sends
// n remote agents and then acknowledges each notification; an agent
// writes task-N.txt in its clone (the worker commits it) and reports.
// hold, when set, is called before an agent's first reply (a test holds a
// job on its worker there).
func remotePolicy(n int, hold func(task string, r *fakeapi.Request)) fakeapi.Policy {
	return func(r *fakeapi.Request) fakeapi.Reply {
		first := r.FirstUserText()
		if m := remoteTask.FindStringSubmatch(first); m != nil {
			if r.Turn() == 0 {
				if hold != nil {
					hold(m[1], r)
				}
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Write", map[string]any{
					"file_path": filepath.Join(clitest.AgentCwd(r), "task-"+m[1]+".txt"), "content": "done by a remote agent\n"})}}
			}
			return fakeapi.TextReply("wrote task-" + m[1] + ".txt")
		}
		if strings.Contains(first, "send the remote agents") && r.Turn() == 0 {
			var blocks []fakeapi.Block
			for i := range n {
				blocks = append(blocks, clitest.Use("Agent", map[string]any{"description": fmt.Sprintf("remote job %d", i),
					"prompt": fmt.Sprintf("remote task %d: write the file", i), "isolation": "remote"}))
			}
			return fakeapi.Reply{Content: blocks}
		}
		return fakeapi.TextReply("noted")
	}
}

// remoteRig is a lead's project, an embedded NATS server, and the trust
// file that lets workers run the lead's jobs.
type remoteRig struct {
	t     *testing.T
	h     *clitest.Harness
	nats  *natstest.Server
	trust string
	bin   string
}

func newRemoteRig(t *testing.T, policy fakeapi.Policy) *remoteRig {
	t.Helper()
	r := &remoteRig{t: t, h: clitest.New(t, policy), nats: natstest.Start(t), bin: clitest.BuildBinary(t)}
	clitest.GitRepo(t, r.h, map[string]string{"README.md": "a project\n"})
	out, stderr, code := r.h.Run("worker", "key")
	if code != 0 {
		t.Fatalf("cohort worker key: %d\n%s", code, stderr)
	}
	r.trust = filepath.Join(t.TempDir(), "trusted_leads")
	if err := os.WriteFile(r.trust, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	// The lead's trusted_workers: a key no worker here holds, so that a
	// lead with no worker yet still dials; each worker started adds its
	// own line.
	pub, _, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	r.appendTrusted("spare " + base64.StdEncoding.EncodeToString(pub))
	return r
}

// appendTrusted adds a worker's key line to the lead's trusted_workers.
func (r *remoteRig) appendTrusted(line string) {
	r.t.Helper()
	path := filepath.Join(r.h.Vars["COHORT_HOME"], "remote", "trusted_workers")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		r.t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		r.t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(line + "\n"); err != nil {
		r.t.Fatal(err)
	}
}

// worker is a cohort worker process in its own empty directory and home.
type worker struct {
	home   string
	cmd    *exec.Cmd
	exited chan error
	stderr *syncBuffer
}

func (r *remoteRig) startWorker(name string, extra ...string) *worker {
	r.t.Helper()
	return r.startWorkerEnv(name, nil, extra...)
}

// startWorkerEnv is startWorker with env changed: a key mapped to ""
// is left out.
func (r *remoteRig) startWorkerEnv(name string, env map[string]string, extra ...string) *worker {
	r.t.Helper()
	root := r.t.TempDir()
	home := filepath.Join(root, "home")
	cwd := filepath.Join(root, "empty")
	for _, d := range []string{home, cwd} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			r.t.Fatal(err)
		}
	}
	args := []string{"worker", "--nats", r.nats.URL(), "--trust", r.trust, "--name", name, "--concurrency", "4"}
	if !slices.Contains(extra, "--allow-model") {
		args = append(args, "--allow-model", "*")
	}
	args = append(args, extra...)
	cmd := exec.Command(r.bin, args...)
	cmd.Dir = cwd
	vars := map[string]string{"HOME": home, "COHORT_HOME": filepath.Join(home, ".cohort"), "PATH": os.Getenv("PATH"),
		"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": r.h.Srv.URL, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.DevNull,
		"GORACE": testbin.RaceOptions()}
	for k, v := range env {
		vars[k] = v
	}
	for k, v := range vars {
		if v != "" {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		r.t.Fatal(err)
	}
	w := &worker{home: home, cmd: cmd, exited: make(chan error, 1), stderr: &syncBuffer{}}
	cmd.Stderr = w.stderr
	if err := cmd.Start(); err != nil {
		r.t.Fatal(err)
	}
	ready := make(chan struct{})
	keyLine := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if line, ok := strings.CutPrefix(sc.Text(), "cohort worker: results signed as "); ok {
				if f := strings.Fields(line); len(f) >= 2 {
					keyLine <- f[0] + " " + f[1]
				}
			}
			if strings.Contains(sc.Text(), "waiting for jobs") {
				close(ready)
			}
		}
		w.exited <- cmd.Wait()
	}()
	select {
	case <-ready:
		select {
		case line := <-keyLine:
			r.appendTrusted(line)
		default:
			r.t.Fatalf("worker %s did not print its key line", name)
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		r.t.Fatalf("worker %s did not start:\n%s", name, w.stderr.String())
	}
	r.t.Cleanup(func() { w.stop(r.t) })
	return w
}

// stop ends a worker with SIGTERM (SIGKILL after 20s) and reaps it.
func (w *worker) stop(t *testing.T) {
	if w.cmd.ProcessState != nil {
		return
	}
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.exited:
	case <-time.After(20 * time.Second):
		_ = w.cmd.Process.Kill()
		<-w.exited
		t.Errorf("a worker did not stop on SIGTERM:\n%s", w.stderr.String())
	}
}

// kill ends a worker with SIGKILL, as a crash would, and reaps it.
func (w *worker) kill() {
	_ = w.cmd.Process.Kill()
	<-w.exited
}

type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// lead runs the lead in print mode with stream-json output.
func (r *remoteRig) lead(ctx context.Context, extra ...string) (clitest.Streamed, string) {
	r.t.Helper()
	args := append([]string{"-p", "send the remote agents", "--output-format", "stream-json", "--verbose",
		"--nats", r.nats.URL(), "--flag", "remote_agents=on", "--permission-mode", "acceptEdits"}, extra...)
	out, stderr, code := r.h.RunCtx(ctx, args...)
	if code != 0 {
		r.t.Fatalf("lead exited %d\nstderr: %s\nstdout: %s", code, stderr, out)
	}
	return clitest.ParseStream(r.t, out), stderr
}

// notified returns each task id's task_notification statuses.
func notified(s clitest.Streamed) map[string][]string {
	out := map[string][]string{}
	for _, ev := range s.Events("task_notification") {
		out[ev.TaskID] = append(out[ev.TaskID], ev.Status)
	}
	return out
}

// TestRemoteAgentsOnThreeWorkers: twenty remote agents on three worker
// processes, each in its own empty directory; every notification arrives
// once, and each agent's work comes back as a commit on its own branch.
func TestRemoteAgentsOnThreeWorkers(t *testing.T) {
	t.Parallel()
	const n = 20
	rc := &leadRecorder{}
	r := newRemoteRig(t, rc.wrap(remotePolicy(n, nil)))
	var workers []*worker
	for i := range 3 {
		workers = append(workers, r.startWorker(fmt.Sprintf("w%d", i)))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	s, _ := r.lead(ctx)
	// The model read each notification once.
	seen := map[string]int{}
	for _, note := range rc.notifications() {
		if m := regexp.MustCompile(`<task-id>(r[0-9a-z]+)</task-id>`).FindStringSubmatch(note); m != nil {
			seen[m[1]]++
		}
	}
	if len(seen) != n {
		t.Fatalf("the lead's model read notifications of %d tasks, want %d", len(seen), n)
	}
	for id, k := range seen {
		if k != 1 {
			t.Errorf("the lead's model read %d notifications of %s", k, id)
		}
	}
	for i, w := range workers {
		t.Logf("worker w%d ran %d jobs", i, strings.Count(w.stderr.String(), `msg="job finished"`))
		// Nothing of a job stays on its worker: no clone, no transcript.
		if left, _ := filepath.Glob(filepath.Join(w.home, ".cohort", "projects", "*")); len(left) > 0 {
			t.Errorf("worker w%d kept project dirs of finished jobs: %v", i, left)
		}
	}
	got := notified(s)
	if len(got) != n {
		t.Fatalf("%d tasks notified, want %d: %v", len(got), n, got)
	}
	for id, statuses := range got {
		if len(statuses) != 1 || statuses[0] != "completed" {
			t.Errorf("task %s notified %v, want completed once", id, statuses)
		}
	}
	// Each started as a remote_agent task, and the workers' progress
	// reached the lead: the agent's Write.
	for _, ev := range s.Events("task_started") {
		if ev.TaskType != "remote_agent" {
			t.Errorf("task %s started as %q, want remote_agent", ev.TaskID, ev.TaskType)
		}
	}
	progressed := 0
	for _, ev := range s.Events("task_progress") {
		if ev.LastToolName == "Write" {
			progressed++
		}
	}
	if progressed == 0 {
		t.Error("no task_progress event named the remote agents' Write")
	}
	branches := strings.Fields(strings.ReplaceAll(r.h.Git("branch", "--list", "cohort/remote-*", "--format=%(refname:short)"), "\n", " "))
	if len(branches) != n {
		t.Fatalf("%d remote branches, want %d: %v", len(branches), n, branches)
	}
	sort.Strings(branches)
	for id := range got {
		br := "cohort/remote-" + id
		files := r.h.Git("show", "--name-only", "--format=%an", br)
		if !regexp.MustCompile(`(?m)^task-\d+\.txt$`).MatchString(files) {
			t.Errorf("branch %s: its commit holds %q, want a task-N.txt", br, files)
		}
	}
}

// holdFirst holds the first reply of task 0's agent until release is
// closed or its request is abandoned (its worker died), and reports the
// hold on started.
type holdFirst struct {
	once    sync.Once
	started chan struct{}
	release chan struct{}
}

func newHoldFirst() *holdFirst {
	return &holdFirst{started: make(chan struct{}), release: make(chan struct{})}
}

func (h *holdFirst) hold(task string, r *fakeapi.Request) {
	first := false
	h.once.Do(func() { first = true })
	if !first {
		return
	}
	close(h.started)
	select {
	case <-h.release:
	case <-r.Context().Done():
	}
}

func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(60 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// TestRemoteJobOfAKilledWorkerIsRedelivered: a worker SIGKILLed in the
// middle of a job loses it after the ack wait to another worker, which
// completes it; the lead gets one notification.
func TestRemoteJobOfAKilledWorkerIsRedelivered(t *testing.T) {
	t.Parallel()
	hold := newHoldFirst()
	defer close(hold.release)
	r := newRemoteRig(t, remotePolicy(1, hold.hold))
	doomed := r.startWorker("doomed", "--nats-ack-wait", "2s")
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	type leadOut struct {
		s      clitest.Streamed
		stderr string
	}
	done := make(chan leadOut, 1)
	go func() {
		s, stderr := r.lead(ctx, "--nats-ack-wait", "2s")
		done <- leadOut{s, stderr}
	}()
	waitClosed(t, hold.started, "the job to start on the first worker")
	doomed.kill()
	r.startWorker("survivor", "--nats-ack-wait", "2s")
	var out leadOut
	select {
	case out = <-done:
	case <-ctx.Done():
		t.Fatal("the lead did not finish")
	}
	got := notified(out.s)
	if len(got) != 1 {
		t.Fatalf("notifications %v, want one task", got)
	}
	for id, statuses := range got {
		if len(statuses) != 1 || statuses[0] != "completed" {
			t.Fatalf("task %s notified %v, want completed once", id, statuses)
		}
		if files := r.h.Git("show", "--name-only", "--format=", "cohort/remote-"+id); files != "task-0.txt" {
			t.Fatalf("branch of %s holds %q", id, files)
		}
	}
}

// TestRemoteJobsSurviveANATSRestart: the NATS server restarts (file
// storage) while jobs run and wait in the queue; none is lost, each is
// notified once.
func TestRemoteJobsSurviveANATSRestart(t *testing.T) {
	const n = 6
	var mu sync.Mutex
	held := 0
	started := make(chan struct{})
	release := make(chan struct{})
	var releaseOnce sync.Once
	defer releaseOnce.Do(func() { close(release) })
	policy := remotePolicy(n, func(task string, req *fakeapi.Request) {
		mu.Lock()
		held++
		if held == 2 {
			close(started)
		}
		mu.Unlock()
		select {
		case <-release:
		case <-req.Context().Done():
		}
	})
	rc := &leadRecorder{}
	r := newRemoteRig(t, rc.wrap(policy))
	w := r.startWorker("w0", "--concurrency", "2", "--nats-ack-wait", "5s")
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	done := make(chan clitest.Streamed, 1)
	go func() {
		s, _ := r.lead(ctx, "--nats-ack-wait", "5s")
		done <- s
	}()
	waitClosed(t, started, "two jobs to be running")
	r.nats.Restart()
	releaseOnce.Do(func() { close(release) })
	var s clitest.Streamed
	select {
	case s = <-done:
	case <-ctx.Done():
		t.Fatal("the lead did not finish")
	}
	got := notified(s)
	if len(got) != n {
		t.Fatalf("%d tasks notified, want %d: %v", len(got), n, got)
	}
	for id, statuses := range got {
		if len(statuses) != 1 || statuses[0] != "completed" {
			t.Errorf("task %s notified %v, want completed once\nnotifications: %q\nworker: %s", id, statuses, rc.notifications(), w.stderr.String())
		}
	}
}

// A remote agent that commits its own work (git in its sandboxed Bash)
// gets that commit back, message and author as it made them, on its
// branch.
func TestRemoteAgentsOwnCommitComesBack(t *testing.T) {
	t.Parallel()
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		if strings.Contains(r.FirstUserText(), "remote task") {
			switch r.Turn() {
			case 0:
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Write", map[string]any{
					"file_path": filepath.Join(clitest.AgentCwd(r), "feature.txt"), "content": "a feature\n"})}}
			case 1:
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Bash", map[string]any{
					"command": "git add feature.txt && git commit -q -m 'Add the feature'"})}}
			}
			return fakeapi.TextReply("committed: " + r.LastToolResultText())
		}
		return remotePolicy(1, nil)(r)
	}
	r := newRemoteRig(t, policy)
	r.startWorker("w0", "--allow", "Bash(git add:*)", "--allow", "Bash(git commit:*)")
	s, _ := r.lead(leadCtx(t))
	got := notified(s)
	if len(got) != 1 {
		t.Fatalf("notifications: %v", got)
	}
	for id, st := range got {
		if st[0] != "completed" {
			t.Fatalf("task %s: %v", id, st)
		}
		log := r.h.Git("log", "--format=%s|%an", "main..cohort/remote-"+id)
		if log != "Add the feature|Cohort remote agent" {
			t.Fatalf("branch cohort/remote-%s holds:\n%s", id, log)
		}
	}
}
