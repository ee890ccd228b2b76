package remote

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/teammate"
)

// liveSettings makes a short liveness window for a test, on the lead and
// on a worker alike (each reads its own user settings): a heartbeat every
// 500 ms, dead after 5 s without one — ten missed heartbeats, so that a
// machine as loaded as CI's, with -race, never misses that many.
const liveSettings = `{"teamLiveness": {"heartbeat": "500ms", "deadAfter": "5s"}}`

// liveDeadAfter is liveSettings' deadAfter.
const liveDeadAfter = 5 * time.Second

// killScript is the scenario of a teammate's machine lost mid-task: the
// lead makes team "lost" and task #1 and sends carl; carl claims #1 and
// runs a long command. Once the lead is told carl is dead it sends dora
// and erin, who both try to claim #1 at once: the one who wins writes
// gamma.txt, completes #1 and reports; the other reports it lost.
type killScript struct {
	rec *clitest.Seen

	mu   sync.Mutex
	told time.Time // when the lead's model was first shown carl's death
	// claims are the results of the TaskUpdate claims of #1, by member.
	claims map[string]string
}

func (k *killScript) policy(r *fakeapi.Request) fakeapi.Reply {
	use := func(name string, in map[string]any) fakeapi.Reply {
		return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use(name, in)}}
	}
	first, turn := r.FirstUserText(), r.Turn()
	for _, who := range []string{"carl", "dora", "erin"} {
		if !strings.Contains(first, who+"-task") {
			continue
		}
		k.rec.Add(who, r.LastUserText())
		if turn == 0 {
			return use("TaskUpdate", map[string]any{"taskId": "1", "status": "in_progress"})
		}
		if turn == 1 {
			k.mu.Lock()
			k.claims[who] = r.LastToolResultText()
			k.mu.Unlock()
		}
		won := strings.Contains(k.rec.All(who), "Updated task #1")
		switch {
		case who == "carl" && turn == 1:
			// Mid-task in a tool call: a child process of the worker.
			return use("Bash", map[string]any{"command": "sleep 150", "description": "the long part of task 1"})
		case who == "carl":
			return fakeapi.TextReply("carl done")
		case turn == 1 && !won:
			return use("SendMessage", map[string]any{"to": "team-lead", "message": who + ": task 1 was taken", "summary": "lost"})
		case turn == 1:
			return use("Write", map[string]any{"file_path": filepath.Join(clitest.AgentCwd(r), "gamma.txt"), "content": "gamma\n"})
		case turn == 2 && won:
			return use("TaskUpdate", map[string]any{"taskId": "1", "status": "completed"})
		case turn == 3 && won:
			return use("SendMessage", map[string]any{"to": "team-lead", "message": who + ": task 1 done", "summary": "report"})
		}
		return fakeapi.TextReply(who + " idle")
	}
	if !strings.Contains(first, "run the team") {
		return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "no rule"}}
	}
	last := r.LastUserText()
	k.rec.Add("lead", last)
	switch turn {
	case 0:
		return use("TeamCreate", map[string]any{"team_name": "lost", "description": "loses a machine"})
	case 1:
		return use("TaskCreate", map[string]any{"subject": "gamma", "description": "write gamma.txt"})
	case 2:
		return use("Agent", map[string]any{"description": "carl", "team_name": "lost", "name": "carl", "prompt": "carl-task: take task 1"})
	}
	if strings.Contains(last, `member="carl" state="dead"`) {
		k.mu.Lock()
		if k.told.IsZero() {
			k.told = time.Now()
		}
		k.mu.Unlock()
		return fakeapi.Reply{Content: []fakeapi.Block{
			clitest.Use("Agent", map[string]any{"description": "dora", "team_name": "lost", "name": "dora", "prompt": "dora-task: take task 1"}),
			clitest.Use("Agent", map[string]any{"description": "erin", "team_name": "lost", "name": "erin", "prompt": "erin-task: take task 1"}),
		}}
	}
	return fakeapi.TextReply("noted")
}

// TestATeammatesWorkerKilledMidTask is issue 42's "a teammate's worker
// SIGKILLed mid-task": carl, on worker w0 (a cohort worker process with
// its own home and directory), claims task #1 and runs a long command;
// the test SIGKILLs w0 and every process under it, as a machine that
// loses power. The lead is told within the liveness window (settings
// teamLiveness; 5 s here, and the default is checked to stay within the
// issue's 30 s), in its next request, with task #1 named as released; it
// sends two new teammates to a new worker, they race for #1, and exactly
// one wins it and completes it.
func TestATeammatesWorkerKilledMidTask(t *testing.T) {
	t.Parallel()
	if max := teammate.DefaultDeadAfter + teammate.DefaultHeartbeat; max > 30*time.Second {
		t.Errorf("by default a dead teammate is known after %s, beyond issue 42's 30 s", max)
	}
	k := &killScript{rec: &clitest.Seen{}, claims: map[string]string{}}
	r := newRemoteRig(t, k.policy)
	r.h.WriteUserSettings(liveSettings)
	w0 := r.startWorkerEnv("w0", nil, "--concurrency", "1", "--allow", "Bash(sleep:*)")
	clitest.WriteFile(t, filepath.Join(w0.home, ".cohort", "settings.json"), liveSettings)

	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	type result struct {
		out, stderr string
		code        int
	}
	done := make(chan result, 1)
	go func() {
		out, stderr, code := r.h.RunCtx(ctx, "-p", "run the team", "--output-format", "json", "--nats", r.nats.URL(),
			"--teammate-mode", "remote", "--permission-mode", "acceptEdits")
		done <- result{out, stderr, code}
	}()

	// carl is mid-task once his sleep runs under w0.
	var sleeper proc
	if !clitest.WaitFor(90*time.Second, func() bool {
		for _, p := range tree(w0.cmd.Process.Pid) {
			if p.comm == "sleep" {
				sleeper = p
				return true
			}
		}
		return false
	}) {
		t.Fatalf("carl's command never ran on w0:\n%s", w0.stderr.String())
	}
	if !strings.Contains(k.rec.All("carl"), "Updated task #1") {
		t.Fatalf("carl runs his command without having claimed task #1; he saw:\n%s", k.rec.All("carl"))
	}
	killed := killTree(t, w0)
	if len(killed) < 2 {
		t.Fatalf("killed %v: want the worker and carl's command at least", killed)
	}
	cut := time.Now()
	t.Logf("killed w0's %d processes (the worker, carl's sleep %d, and what they ran)", len(killed), sleeper.pid)
	w1 := r.startWorkerEnv("w1", nil, "--concurrency", "2")
	clitest.WriteFile(t, filepath.Join(w1.home, ".cohort", "settings.json"), liveSettings)

	var res result
	select {
	case res = <-done:
	case <-ctx.Done():
		t.Fatalf("the lead did not finish\nw1: %s", w1.stderr.String())
	}
	if res.code != 0 {
		t.Fatalf("lead exited %d\nstderr: %s\nstdout: %s\nw1: %s", res.code, res.stderr, res.out, w1.stderr.String())
	}

	// The lead was told, in time, why and what was released.
	k.mu.Lock()
	told, claims := k.told, k.claims
	k.mu.Unlock()
	if told.IsZero() {
		t.Fatalf("the lead's model was never told carl died; it saw:\n%s", k.rec.All("lead"))
	}
	after := told.Sub(cut)
	t.Logf("the lead's model was told %s after w0 was killed (deadAfter %s, heartbeat 500ms)", after.Round(time.Millisecond), liveDeadAfter)
	if after > 30*time.Second {
		t.Errorf("the lead was told %s after the kill, beyond issue 42's 30 s", after)
	}
	lead := k.rec.All("lead")
	notice := lead[strings.Index(lead, `member="carl" state="dead"`):]
	notice = notice[:strings.Index(notice, "</team-notification>")]
	// Why: on one host the lead sees the worker's pid gone before a
	// heartbeat is missed (on other hosts, the heartbeat tells: package
	// teammate's TestATeammateWhoseMachineVanishesIsReportedAndItsTaskReleased).
	if !regexp.MustCompile(`\((its process \d+ is gone|no heartbeat for \d+s)\)`).MatchString(notice) || !strings.Contains(notice, "(#1)") {
		t.Errorf("the lead's notice does not say why carl is dead and that #1 was released: %s", notice)
	}
	t.Logf("the lead was told: %s", notice)
	if n := strings.Count(lead, `member="carl" state="dead"`); n != 1 {
		t.Errorf("the lead was told of carl's death %d times, want once", n)
	}

	// #1 was claimable again, and claimed exactly once after its release.
	var winners, losers []string
	for _, who := range []string{"dora", "erin"} {
		switch c := claims[who]; {
		case strings.Contains(c, "Updated task #1"):
			winners = append(winners, who)
		case strings.Contains(c, "already claimed by"):
			losers = append(losers, who)
		default:
			t.Errorf("%s's claim of #1 answered %q", who, c)
		}
	}
	if len(winners) != 1 || len(losers) != 1 {
		t.Fatalf("after the release, #1 was won by %v and refused to %v; want one each", winners, losers)
	}
	if !strings.Contains(claims[losers[0]], "already claimed by "+winners[0]) {
		t.Errorf("%s's refusal does not name the winner %s: %q", losers[0], winners[0], claims[losers[0]])
	}
	for _, want := range []string{winners[0] + ": task 1 done", losers[0] + ": task 1 was taken"} {
		if n := strings.Count(lead, want); n != 1 {
			t.Errorf("the lead saw %q %d times, want once", want, n)
		}
	}
	branches := strings.Fields(r.h.Git("branch", "--list", "cohort/remote-*", "--format=%(refname:short)"))
	gamma := 0
	for _, br := range branches {
		if strings.Contains(r.h.Git("show", "--name-only", "--format=", br), "gamma.txt") {
			gamma++
		}
	}
	if gamma != 1 {
		t.Errorf("%d branches hold gamma.txt, want the winner's alone: %v", gamma, branches)
	}
	if t.Failed() {
		t.Logf("lead stderr:\n%s\nw0:\n%s\nw1:\n%s", res.stderr, w0.stderr.String(), w1.stderr.String())
	}
}

// proc is a process, by pid and start time (so a reused pid is not taken
// for it).
type proc struct {
	pid   int
	start string
	comm  string
}

// tree returns pid and its descendants that are not zombies, from /proc.
func tree(pid int) []proc {
	entries, _ := os.ReadDir("/proc")
	children := map[int][]proc{}
	var self *proc
	for _, e := range entries {
		p, ppid, ok := readProc(e.Name())
		if !ok {
			continue
		}
		if p.pid == pid {
			self = &p
		}
		children[ppid] = append(children[ppid], p)
	}
	if self == nil {
		return nil
	}
	out := []proc{*self}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i].pid]...)
	}
	return out
}

// readProc reads /proc/<name>/stat: the process, its parent, and whether
// it is a live (not zombie) process.
func readProc(name string) (proc, int, bool) {
	data, err := os.ReadFile("/proc/" + name + "/stat")
	if err != nil {
		return proc{}, 0, false
	}
	s := string(data)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return proc{}, 0, false
	}
	f := strings.Fields(s[end+1:])
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return proc{}, 0, false
	}
	pid, err1 := strconv.Atoi(strings.TrimSpace(s[:open]))
	ppid, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil {
		return proc{}, 0, false
	}
	return proc{pid: pid, start: f[19], comm: s[open+1 : end]}, ppid, true
}

// alive reports whether p still runs (the same process, not a zombie).
func (p proc) alive() bool {
	q, _, ok := readProc(strconv.Itoa(p.pid))
	return ok && q.start == p.start
}

// killTree ends w as a machine's loss would: every process under the
// worker stops (SIGSTOP, repeated until no new one appears, so nothing
// forks past the kill), then all get SIGKILL at once. It returns what it
// killed, and fails t if any of it outlives the kill: nothing of the
// worker may leak into the rest of the run.
func killTree(t *testing.T, w *worker) []proc {
	t.Helper()
	seen := map[proc]bool{}
	for {
		grew := false
		for _, p := range tree(w.cmd.Process.Pid) {
			if !seen[p] {
				seen[p], grew = true, true
				_ = syscall.Kill(p.pid, syscall.SIGSTOP)
			}
		}
		if !grew {
			break
		}
	}
	var all []proc
	for p := range seen {
		all = append(all, p)
		_ = syscall.Kill(p.pid, syscall.SIGKILL)
	}
	<-w.exited // the worker, reaped
	if !clitest.WaitFor(10*time.Second, func() bool {
		for _, p := range all {
			if p.alive() {
				return false
			}
		}
		return true
	}) {
		for _, p := range all {
			if p.alive() {
				t.Errorf("process %d (%s) of the killed worker still runs", p.pid, p.comm)
			}
		}
	}
	return all
}
