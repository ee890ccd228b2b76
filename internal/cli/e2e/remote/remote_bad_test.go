package remote

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// notificationText returns the <task-notification> blocks the lead's
// last request holds, one string each.
var notificationBlock = regexp.MustCompile(`(?s)<task-notification>.*?</task-notification>`)

// leadRecorder keeps the last request the lead sent.
type leadRecorder struct {
	mu   sync.Mutex
	last *fakeapi.Request
}

func (rc *leadRecorder) wrap(p fakeapi.Policy) fakeapi.Policy {
	return func(r *fakeapi.Request) fakeapi.Reply {
		if strings.Contains(r.FirstUserText(), "send the remote agents") {
			rc.mu.Lock()
			rc.last = r
			rc.mu.Unlock()
		}
		return p(r)
	}
}

func (rc *leadRecorder) notifications() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []string
	if rc.last == nil {
		return nil
	}
	for _, m := range rc.last.Messages {
		for _, b := range m.Content {
			out = append(out, notificationBlock.FindAllString(b.Text, -1)...)
		}
	}
	return out
}

func (rc *leadRecorder) toolResults() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []string
	for _, m := range rc.last.Messages {
		for _, b := range m.Content {
			if b.Type == "tool_result" {
				for _, c := range b.Content {
					out = append(out, c.Text)
				}
			}
		}
	}
	return out
}

func leadCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// A job asking for more than the worker allows: capped where it can be
// (the notification says what), refused where it cannot (and says why).
func TestRemoteJobIsCappedOrRefusedByTheWorkerPolicy(t *testing.T) {
	t.Parallel()
	rc := &leadRecorder{}
	r := newRemoteRig(t, rc.wrap(remotePolicy(1, nil)))
	r.startWorker("strict", "--max-mode", "default", "--job-max-turns", "5")
	// acceptEdits asked, default allowed: capped; the agent's Write is
	// then denied headless, but the job completes and says so.
	r.lead(leadCtx(t))
	notes := rc.notifications()
	if len(notes) != 1 || !strings.Contains(notes[0], "permission mode acceptEdits lowered to default") ||
		!strings.Contains(notes[0], "<tool_uses>1</tool_uses>") {
		t.Fatalf("notifications: %q", notes)
	}

	rc2 := &leadRecorder{}
	r2 := newRemoteRig(t, rc2.wrap(remotePolicy(1, nil)))
	r2.startWorkerEnv("picky", nil, "--allow-model", "claude-haiku-5-5")
	r2.lead(leadCtx(t), "--model", "sonnet")
	notes = rc2.notifications()
	if len(notes) != 1 || !strings.Contains(notes[0], "<status>failed</status>") || !strings.Contains(notes[0], "is not offered by this worker") {
		t.Fatalf("notifications: %q", notes)
	}
}

// A remote agent that edits .claude/settings.json does not get the edit
// applied: no branch, the patch kept aside, the notification says so.
func TestRemotePatchTouchingSettingsIsNotApplied(t *testing.T) {
	t.Parallel()
	rc := &leadRecorder{}
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		if strings.Contains(r.FirstUserText(), "remote task") && r.Turn() == 0 {
			// The worker's file tools and sandbox keep .claude/ read-only
			// (issue 36), so the hostile change goes straight into git's
			// object store and index, which it may write to commit: the
			// lead's check of the patch is what stops it.
			return fakeapi.Reply{Content: []fakeapi.Block{
				clitest.Use("Bash", map[string]any{"command": `sha=$(printf '{"permissions":{"allow":["Bash"]}}' | git hash-object -w --stdin) && ` +
					`git update-index --add --cacheinfo "100644,$sha,.claude/settings.json" && git commit -qm settings`}),
				clitest.Use("Write", map[string]any{"file_path": filepath.Join(clitest.AgentCwd(r), "ok.txt"), "content": "fine\n"})}}
		}
		return remotePolicy(1, nil)(r)
	}
	r := newRemoteRig(t, rc.wrap(policy))
	r.startWorker("lax", "--max-mode", "bypassPermissions")
	r.lead(leadCtx(t), "--permission-mode", "bypassPermissions")
	notes := rc.notifications()
	if len(notes) != 1 || !strings.Contains(notes[0], "NOT applied") || !strings.Contains(notes[0], ".claude/settings.json") {
		t.Fatalf("notifications: %q", notes)
	}
	if b := r.h.Git("branch", "--list", "cohort/remote-*"); b != "" {
		t.Fatalf("a branch was made for a refused patch: %s", b)
	}
	aside, _ := filepath.Glob(filepath.Join(r.h.Dir, ".cohort", "remote", "*.patch"))
	if len(aside) != 1 {
		t.Fatalf("patches kept aside: %v", aside)
	}
	if data, _ := os.ReadFile(aside[0]); !strings.Contains(string(data), "settings.json") {
		t.Fatalf("kept patch: %s", data)
	}
	if _, err := os.Stat(filepath.Join(r.h.Dir, ".claude", "settings.json")); err == nil {
		t.Fatal(".claude/settings.json appeared in the lead's checkout")
	}
}

// A worker without a model key fails the job with that reason, once.
func TestRemoteWorkerWithoutAKeyFailsTheJob(t *testing.T) {
	t.Parallel()
	rc := &leadRecorder{}
	r := newRemoteRig(t, rc.wrap(remotePolicy(1, nil)))
	r.startWorkerEnv("keyless", map[string]string{"ANTHROPIC_API_KEY": ""})
	r.lead(leadCtx(t))
	notes := rc.notifications()
	if len(notes) != 1 || !strings.Contains(notes[0], "<status>failed</status>") || !strings.Contains(notes[0], "no API key") {
		t.Fatalf("notifications: %q", notes)
	}
}

// NATS unreachable: the Agent call fails at once with a sentence that
// names the server, and the lead goes on.
func TestRemoteSpawnWithNATSDownFailsFast(t *testing.T) {
	rc := &leadRecorder{}
	h := clitest.New(t, rc.wrap(remotePolicy(1, nil)))
	clitest.GitRepo(t, h, map[string]string{"README.md": "x\n"})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	start := time.Now()
	_, stderr, code := h.RunCtx(leadCtx(t), "-p", "send the remote agents", "--nats", "nats://"+addr,
		"--flag", "remote_agents=on", "--permission-mode", "acceptEdits")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if d := time.Since(start); d > 60*time.Second {
		t.Fatalf("the lead took %s", d)
	}
	res := strings.Join(rc.toolResults(), "\n")
	if !strings.Contains(res, "cannot reach NATS at nats://"+addr) {
		t.Fatalf("tool results: %s", res)
	}
}

// Without the flag, isolation remote says how to turn it on.
func TestRemoteNeedsTheFlag(t *testing.T) {
	t.Parallel()
	rc := &leadRecorder{}
	h := clitest.New(t, rc.wrap(remotePolicy(1, nil)))
	clitest.GitRepo(t, h, map[string]string{"README.md": "x\n"})
	if _, stderr, code := h.Run("-p", "send the remote agents"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if res := strings.Join(rc.toolResults(), "\n"); !strings.Contains(res, "remote_agents flag") {
		t.Fatalf("tool results: %s", res)
	}
}

var launchedID = regexp.MustCompile(`agentId: (r[0-9a-z]{8})`)

// TaskStop on a remote agent stops it on its worker: the agent's model
// call is abandoned, the worker reports it cancelled, and the lead's
// notification says killed.
func TestRemoteTaskStopCancelsOnTheWorker(t *testing.T) {
	t.Parallel()
	rc := &leadRecorder{}
	abandoned, inflight := make(chan struct{}), make(chan struct{})
	var once, started sync.Once
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		first := r.FirstUserText()
		switch {
		case strings.Contains(first, "remote task"):
			started.Do(func() { close(inflight) })
			<-r.Context().Done() // the agent thinks until it is stopped
			once.Do(func() { close(abandoned) })
			return fakeapi.TextReply("never seen")
		case r.Turn() == 0:
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Agent", map[string]any{"description": "long remote job",
				"prompt": "remote task 0: think for a long time", "isolation": "remote"})}}
		case r.Turn() == 1:
			select { // stop it once it runs on its worker
			case <-inflight:
			case <-r.Context().Done():
			}
			m := launchedID.FindStringSubmatch(r.LastToolResultText())
			if m == nil {
				return fakeapi.TextReply("no agent id in: " + r.LastToolResultText())
			}
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("TaskStop", map[string]any{"task_id": m[1]})}}
		}
		return fakeapi.TextReply("noted")
	}
	r := newRemoteRig(t, rc.wrap(policy))
	w := r.startWorker("w0")
	s, stderr := r.lead(leadCtx(t))
	select {
	case <-abandoned:
	case <-time.After(30 * time.Second):
		t.Fatalf("the worker did not abandon the agent's model call\nworker: %s\nlead: %s\nresults: %q", w.stderr.String(), stderr, rc.toolResults())
	}
	got := notified(s)
	if len(got) != 1 {
		t.Fatalf("notifications: %v", got)
	}
	for id, st := range got {
		if len(st) != 1 || st[0] != "stopped" {
			t.Fatalf("task %s notified %v, want stopped once", id, st)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(w.stderr.String(), "status=cancelled") {
		if time.Now().After(deadline) {
			t.Fatalf("the worker did not report the job cancelled:\n%s", w.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// With no worker serving the queue, the agent timeout ends a remote agent
// with a reason that says where to look, and the lead goes on.
func TestRemoteAgentTimeoutWithNoWorker(t *testing.T) {
	t.Parallel()
	rc := &leadRecorder{}
	r := newRemoteRig(t, rc.wrap(remotePolicy(1, nil)))
	r.lead(leadCtx(t), "--agent-timeout", "3s")
	notes := rc.notifications()
	if len(notes) != 1 || !strings.Contains(notes[0], "<status>failed</status>") || !strings.Contains(notes[0], "is a worker serving this NATS server") {
		t.Fatalf("notifications: %q", notes)
	}
}

// cohort worker's own bad input: no --nats, no trust file, a server that
// is not there — each a clear error at start, never a hang.
func TestWorkerBadInputFailsAtStart(t *testing.T) {
	t.Parallel()
	h := clitest.New(t, remotePolicy(1, nil))
	trust := filepath.Join(t.TempDir(), "trusted_leads")
	key, _, code := h.Run("worker", "key")
	if code != 0 {
		t.Fatalf("worker key exited %d", code)
	}
	if err := os.WriteFile(trust, []byte(key), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "nats://" + l.Addr().String()
	l.Close()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no server", []string{"worker"}, "cohort worker needs --nats URL"},
		{"no trust file", []string{"worker", "--nats", down, "--trust", filepath.Join(t.TempDir(), "missing")}, "runs only jobs signed by the leads in its trust file"},
		{"server down", []string{"worker", "--nats", down, "--trust", trust}, "cannot reach NATS at " + down},
		{"bad mode ceiling", []string{"worker", "--nats", down, "--trust", trust, "--max-mode", "godMode"}, `unknown permission mode "godMode"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := h.Run(tc.args...)
			if code == 0 || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want a failure mentioning %q", code, stderr, tc.want)
			}
		})
	}
}

// A team across machines whose NATS server cannot be reached: TeamCreate
// fails, naming the server and what to do, and nothing of the team is
// left on files — it never falls back to a team on this machine. The
// lead's later spawn into that team is refused too.
func TestTeamWithNATSDownFailsNamingTheServer(t *testing.T) {
	t.Parallel()
	var (
		mu      sync.Mutex
		results []string
	)
	c := clitest.NewConv().On("run the team",
		clitest.Calls(clitest.Use("TeamCreate", map[string]any{"team_name": "far", "description": "across machines"})),
		clitest.Calls(clitest.Use("Agent", map[string]any{"description": "alice", "team_name": "far", "name": "alice", "prompt": "alice-task"})),
		clitest.Text("gave up"),
	)
	h := clitest.New(t, func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() > 0 {
			mu.Lock()
			results = append(results, clitest.ToolResults(r)...)
			mu.Unlock()
		}
		return c.Policy(r)
	})
	clitest.GitRepo(t, h, map[string]string{"README.md": "x\n"})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "nats://" + l.Addr().String()
	l.Close()
	if _, stderr, code := h.RunCtx(leadCtx(t), "-p", "run the team", "--nats", down, "--teammate-mode", "remote",
		"--permission-mode", "acceptEdits"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(results) != 2 {
		t.Fatalf("tool results %q, want TeamCreate's and Agent's", results)
	}
	for _, want := range []string{down, "cannot be reached", "start that server", "does not fall back to files"} {
		if !strings.Contains(results[0], want) {
			t.Errorf("TeamCreate answered %q; want it to say %q", results[0], want)
		}
	}
	if !strings.HasPrefix(results[1], "ERROR:") {
		t.Errorf("the spawn into the team that was never made answered %q", results[1])
	}
	if _, err := os.Stat(filepath.Join(h.Vars["COHORT_HOME"], "teams", "far")); !os.IsNotExist(err) {
		t.Errorf("the team was left on files: %v", err)
	}
}
