package workflow

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/internal/testbin"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// stepFlow runs eight steps: four items through two stages. A step's answer
// depends only on its prompt, as a deterministic model's would.
const stepFlow = `export const meta = {name: "steps", description: "two stages over four items", phases: [{title: "one"}, {title: "two"}]}
const out = await pipeline(["a", "b", "c", "d"],
  (x) => agent("wfstep one " + x, {phase: "one"}),
  (r, x) => agent("wfstep two " + r, {phase: "two"}))
return {out}
`

// stepPolicy answers workflow steps with "<n>:<last word>" where n counts
// the step's calls, and hands each step's number to onStep first.
func stepPolicy(onStep func(n int64, r *fakeapi.Request)) (fakeapi.Policy, *atomic.Int64) {
	var n atomic.Int64
	return func(r *fakeapi.Request) fakeapi.Reply {
		first := r.FirstUserText()
		i := strings.Index(first, "wfstep ")
		if i < 0 {
			return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "not a workflow step: " + first}}
		}
		k := n.Add(1)
		if onStep != nil {
			onStep(k, r)
		}
		words := strings.Fields(first[i:])
		return fakeapi.TextReply("ok-" + words[len(words)-1])
	}, &n
}

func workflowHarness(t *testing.T, policy fakeapi.Policy) *clitest.Harness {
	h := clitest.New(t, policy)
	h.Vars["COHORT_WORKFLOW_HOST"] = testbin.Workflow(t, clitest.RaceEnabled)
	return h
}

const stepValue = `{"out":["ok-ok-a","ok-ok-b","ok-ok-c","ok-ok-d"]}`

// `cohort workflow run FILE` runs a script with no lead model: every
// request the fake sees is a workflow step's.
func TestWorkflowRunFromTheCommandLine(t *testing.T) {
	t.Parallel()
	policy, steps := stepPolicy(nil)
	h := workflowHarness(t, policy)
	h.Write(".claude/workflows/steps.js", stepFlow)
	out, errOut, code := h.Run("workflow", "run", "steps", "--output-format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	r := h.Result(out)
	if !strings.HasPrefix(r.Result, stepValue) || !strings.Contains(r.Result, "one $") || !strings.Contains(r.Result, "two $") {
		t.Fatalf("result = %q", r.Result)
	}
	if n := len(h.Srv.Requests()); steps.Load() != 8 || n != 8 {
		t.Fatalf("the fake saw %d requests (%d steps); want the 8 steps and nothing else", n, steps.Load())
	}
	if !strings.Contains(errOut, "cohort: workflow run wf") || !strings.Contains(errOut, "Estimate: at least 2 agents") {
		t.Errorf("stderr does not name the run: %s", errOut)
	}
}

func TestWorkflowCommandLineBadInput(t *testing.T) {
	t.Parallel()
	policy, _ := stepPolicy(nil)
	h := workflowHarness(t, policy)
	h.Write("flow.js", stepFlow)
	h.Write("broken.js", "export const meta = {name: \"b\", description: \"d\"}\nawait agent(\"wfstep x\")\nnull.boom\n")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"workflow", "run", "flow.js", "--args", "{nope"}, "--args is not JSON"},
		{[]string{"workflow", "run", "nosuch"}, `no saved workflow "nosuch"`},
		{[]string{"workflow", "run", "broken.js"}, "broken.js:3"},
		{[]string{"workflow", "resume", "wf0123456789abcdef"}, "no workflow run wf0123456789abcdef"},
		{[]string{"workflow", "resume", "../x"}, "is not a workflow run id"},
	} {
		out, errOut, code := h.Run(tc.args...)
		if code == 0 || !strings.Contains(out+errOut, tc.want) {
			t.Errorf("%v: exit %d, output %q %q; want a failure mentioning %q", tc.args, code, out, errOut, tc.want)
		}
	}

	// A journal whose recorded value was changed is refused, never replayed.
	if _, errOut, code := h.Run("workflow", "run", "flow.js"); code != 0 {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	journals, _ := filepath.Glob(filepath.Join(h.ProjectDir(), "*", "workflows", "wf*", "journal.jsonl"))
	var journal string
	var data []byte
	for _, j := range journals {
		if d, _ := os.ReadFile(j); bytes.Contains(d, []byte(`"ok-a"`)) {
			journal, data = j, d
		}
	}
	if journal == "" {
		t.Fatalf("no journal of flow.js among %v", journals)
	}
	if err := os.WriteFile(journal, bytes.Replace(data, []byte(`"ok-a"`), []byte(`"forged"`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := h.Run("workflow", "resume", filepath.Base(filepath.Dir(journal)))
	if code == 0 || !strings.Contains(out+errOut, "corrupt workflow journal") || !strings.Contains(out+errOut, "start a fresh run") || strings.Contains(out, "forged") {
		t.Errorf("resume of a forged journal: exit %d, %q %q; want it refused, naming the line and offering a fresh run", code, out, errOut)
	}
}

func TestWorkflowList(t *testing.T) {
	t.Parallel()
	h := workflowHarness(t, nil)
	h.Write(".claude/workflows/review.js", "export const meta = {name: 'review', description: 'review then verify'}\n")
	bad := filepath.Join(h.Home, ".cohort", "workflows", "bad.js")
	os.MkdirAll(filepath.Dir(bad), 0o700)
	os.WriteFile(bad, []byte("export const meta = {name: nope, description: 'd'}\n"), 0o600)
	out, errOut, code := h.Run("workflow", "list")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"review", "review then verify", "bad", "cannot load", "pure literal", "bad.js"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// The session running a workflow is SIGKILLed while step killAt is at the
// model; `cohort workflow resume RUN` in a new process asks the model only
// for the steps the journal has not finished and returns what an
// uninterrupted run returns. The host dies with the session.
func TestWorkflowResumeAfterSIGKILL(t *testing.T) {
	t.Parallel()
	bin := clitest.BuildBinary(t)
	for _, killAt := range []int64{1, 3, 6} {
		t.Run(fmt.Sprintf("killed at step %d", killAt), func(t *testing.T) {
			t.Parallel()
			var (
				mu     sync.Mutex
				victim *os.Process
				hp     *clitest.Harness
				killed = make(chan struct{})
				// hostsAtKill is how many hosts ran when the kill came.
				hostsAtKill int
				once        sync.Once
			)
			policy, steps := stepPolicy(func(n int64, r *fakeapi.Request) {
				if n != killAt {
					return
				}
				mu.Lock()
				p, hh := victim, hp
				mu.Unlock()
				once.Do(func() {
					hostsAtKill = hostsOf(hh)
					close(killed) // before the kill: its exit must find it closed
					_ = p.Signal(syscall.SIGKILL)
				})
				<-r.Context().Done() // the process is gone; so is this request
			})
			h := workflowHarness(t, policy)
			flow := h.Write("flow.js", stepFlow)
			run := clitest.StartBinary(t, h, bin, "--cwd", h.Dir, "workflow", "run", flow, "--output-format", "json")
			mu.Lock()
			victim, hp = run.Cmd.Process, h
			mu.Unlock()
			select {
			case <-killed:
			case <-run.Exited:
				exitedBeforeKill(t, run, killed, killAt)
			case <-time.After(60 * time.Second):
				t.Fatalf("step %d never reached the model: %s", killAt, run.Stderr.String())
			}
			<-run.Exited
			if ws, ok := run.Cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("cohort was not killed: %v", run.Cmd.ProcessState)
			}
			if hostsAtKill != 1 {
				t.Fatalf("%d workflow hosts were running when the session was killed, want 1", hostsAtKill)
			}
			if !clitest.WaitFor(10*time.Second, func() bool { return hostsOf(h) == 0 }) {
				t.Fatalf("the workflow host outlived the killed session")
			}
			journals, _ := filepath.Glob(filepath.Join(h.ProjectDir(), "*", "workflows", "wf*", "journal.jsonl"))
			if len(journals) != 1 {
				t.Fatalf("journals after the kill: %v", journals)
			}
			data, _ := os.ReadFile(journals[0])
			finished := int64(bytes.Count(data, []byte(`"type":"end"`)))
			runID := filepath.Base(filepath.Dir(journals[0]))
			t.Logf("killed at step %d: %d steps finished in the journal", killAt, finished)

			before := steps.Load()
			out, errOut, code := h.RunBinary("workflow", "resume", runID, "--output-format", "json")
			if code != 0 {
				t.Fatalf("resume: exit %d: %s\n%s", code, errOut, out)
			}
			if r := h.Result(out); !strings.HasPrefix(r.Result, stepValue) {
				t.Fatalf("the resumed run returned %q, want %s", r.Result, stepValue)
			}
			if live := steps.Load() - before; live != 8-finished {
				t.Fatalf("the resumed run asked the model %d times; the journal had %d of 8 steps finished, so want %d", live, finished, 8-finished)
			}
			if !strings.Contains(out, "replayed from the journal") || !strings.Contains(out, strconv.FormatInt(finished, 10)+" replayed") {
				t.Errorf("the result does not count %d replayed steps: %s", finished, out)
			}
		})
	}
}

// exitedBeforeKill fails the test unless the exit it was called on is the
// kill's: the kill closes killed before it signals, so an exit the kill
// caused finds killed closed (select picks at random among ready cases).
func exitedBeforeKill(t *testing.T, run *clitest.Running, killed <-chan struct{}, killAt int64) {
	t.Helper()
	select {
	case <-killed:
		return
	default:
	}
	t.Fatalf("cohort exited before step %d (%v)\nstdout:\n%s\nstderr:\n%s", killAt, run.Cmd.ProcessState, run.Stdout.String(), run.Stderr.String())
}

// hostsOf counts the live cohort-workflow processes started by h's
// sessions (their environment names h's COHORT_HOME).
func hostsOf(h *clitest.Harness) int {
	mark := []byte("COHORT_HOME=" + h.Vars["COHORT_HOME"] + "\x00")
	procs, _ := filepath.Glob("/proc/[0-9]*/environ")
	n := 0
	for _, p := range procs {
		env, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(env, mark) {
			continue
		}
		cmd, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "cmdline"))
		stat, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "stat"))
		if bytes.Contains(cmd, []byte("cohort-workflow")) && !bytes.Contains(stat, []byte(") Z ")) {
			n++
		}
	}
	return n
}

var runIDPattern = regexp.MustCompile(`wf[0-9a-f]{16}`)

// sinceAssistant is the text of the user messages after the last assistant
// message: what the model is answering now.
func sinceAssistant(r *fakeapi.Request) string {
	var parts []string
	for _, m := range r.Messages {
		if m.Role == "assistant" {
			parts = parts[:0]
			continue
		}
		for _, b := range m.Content {
			parts = append(parts, b.Text)
			for _, c := range b.Content {
				parts = append(parts, c.Text)
			}
		}
	}
	return strings.Join(parts, "\n")
}

// A lead whose session is SIGKILLed while its workflow runs learns on
// --continue that the run was killed, and resumes it by its run id alone
// (the script is not sent again): only the unfinished steps reach the
// model, and the lead gets the uninterrupted run's value.
func TestWorkflowResumesOnContinue(t *testing.T) {
	t.Parallel()
	bin := clitest.BuildBinary(t)
	const killAt = 4
	var (
		mu     sync.Mutex
		victim *os.Process
		killed = make(chan struct{})
		once   sync.Once
		flow   string
	)
	steps, stepCount := stepPolicy(func(n int64, r *fakeapi.Request) {
		if n != killAt {
			return
		}
		mu.Lock()
		p := victim
		mu.Unlock()
		if p == nil {
			return // the continued session: nobody to kill
		}
		once.Do(func() {
			close(killed) // before the kill: its exit must find it closed
			_ = p.Signal(syscall.SIGKILL)
		})
		<-r.Context().Done()
	})
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		if strings.Contains(r.FirstUserText(), "wfstep") {
			return steps(r)
		}
		recent := sinceAssistant(r)
		switch {
		case strings.Contains(recent, "was killed"):
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Workflow", map[string]any{"resumeFromRunId": runIDPattern.FindString(recent)})}}
		case strings.Contains(recent, "<task-notification>"):
			return fakeapi.TextReply("final: " + recent)
		case r.Turn() == 0:
			mu.Lock()
			defer mu.Unlock()
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Workflow", map[string]any{"scriptPath": flow})}}
		}
		return fakeapi.TextReply("waiting for the workflow")
	}
	h := workflowHarness(t, policy)
	mu.Lock()
	flow = h.Write("flow.js", stepFlow)
	mu.Unlock()
	args := []string{"--cwd", h.Dir, "--flag", "workflows=on", "--allowedTools", "Workflow", "--output-format", "json"}
	run := clitest.StartBinary(t, h, bin, append(args, "-p", "run the workflow now")...)
	mu.Lock()
	victim = run.Cmd.Process
	mu.Unlock()
	select {
	case <-killed:
	case <-run.Exited:
		exitedBeforeKill(t, run, killed, killAt)
	case <-time.After(60 * time.Second):
		t.Fatalf("step %d never reached the model: %s", killAt, run.Stderr.String())
	}
	<-run.Exited
	mu.Lock()
	victim = nil
	mu.Unlock()
	journals, _ := filepath.Glob(filepath.Join(h.ProjectDir(), "*", "workflows", "wf*", "journal.jsonl"))
	if len(journals) != 1 {
		t.Fatalf("journals after the kill: %v", journals)
	}
	data, _ := os.ReadFile(journals[0])
	finished := int64(bytes.Count(data, []byte(`"type":"end"`)))

	before := stepCount.Load()
	out, errOut, code := h.RunBinary(append(args[2:], "--continue", "-p", "carry on")...)
	if code != 0 {
		t.Fatalf("--continue: exit %d: %s\n%s", code, errOut, out)
	}
	if r := h.Result(out); !strings.Contains(r.Result, stepValue) || !strings.Contains(r.Result, fmt.Sprintf("%d replayed", finished)) {
		for _, rq := range h.Srv.Requests() {
			if rq.Request != nil && !strings.Contains(rq.Request.FirstUserText(), "wfstep") {
				t.Logf("lead request: %.600q", sinceAssistant(rq.Request))
			}
		}
		t.Fatalf("the continued lead's result: %q; want the value %s with %d steps replayed\n%s", r.Result, stepValue, finished, errOut)
	}
	if live := stepCount.Load() - before; live != 8-finished {
		t.Fatalf("the resumed run asked the model %d times; %d of 8 steps had finished, so want %d", live, finished, 8-finished)
	}
}

// The sandbox holds inside workflow agents: in bypassPermissions, where no
// rule asks, an agent's hostile Bash calls aimed outside the project
// create nothing there, and the agent is told the sandbox blocked them.
func TestWorkflowAgentsAreSandboxed(t *testing.T) {
	t.Parallel()
	var h *clitest.Harness
	var mu sync.Mutex
	var results []string
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		if !strings.Contains(r.FirstUserText(), "wfattack") {
			return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "not the workflow's agent"}}
		}
		if r.Turn() == 0 {
			return fakeapi.Reply{Content: clitest.HostileCalls(filepath.Join(filepath.Dir(h.Dir), "outside"))}
		}
		mu.Lock()
		results = clitest.ToolResults(r)
		mu.Unlock()
		return fakeapi.TextReply("tried")
	}
	h = workflowHarness(t, policy)
	outside := filepath.Join(filepath.Dir(h.Dir), "outside")
	if err := os.MkdirAll(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	h.Write("attack.js", "export const meta = {name: \"attack\", description: \"one agent\"}\nreturn await agent(\"wfattack: write outside\")\n")
	out, errOut, code := h.Run("workflow", "run", "attack.js", "--permission-mode", "bypassPermissions")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	entries, _ := os.ReadDir(outside)
	for _, e := range entries {
		t.Errorf("a workflow agent created %s outside the project", e.Name())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(results) != len(clitest.HostileNames) || !strings.Contains(strings.Join(results, "\n"), "blocked by the sandbox: "+outside) {
		t.Errorf("the agent was not told the sandbox blocked its writes: %q", results)
	}
}

// isolation: 'worktree' gives each workflow agent a git worktree of its
// own: their writes land there, never in the main checkout.
func TestWorkflowAgentsInWorktrees(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	cwds := map[string]bool{}
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		first := r.FirstUserText()
		i := strings.Index(first, "wfwt ")
		if i < 0 {
			return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "not a workflow agent"}}
		}
		cwd := clitest.AgentCwd(r)
		if r.Turn() == 0 {
			mu.Lock()
			cwds[cwd] = true
			mu.Unlock()
			name := strings.Fields(first[i:])[1]
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Write", map[string]any{"file_path": filepath.Join(cwd, "out-"+name+".txt"), "content": name})}}
		}
		return fakeapi.TextReply("wrote in " + cwd)
	}
	h := workflowHarness(t, policy)
	clitest.GitRepo(t, h, map[string]string{"README": "x\n"})
	h.Write("iso.js", `export const meta = {name: "iso", description: "two isolated writers"}
return await parallel(["one", "two"].map(n => () => agent("wfwt " + n + " writes a file", {isolation: "worktree"})))
`)
	out, errOut, code := h.Run("workflow", "run", "iso.js", "--permission-mode", "bypassPermissions")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, n := range []string{"one", "two"} {
		if _, err := os.Stat(filepath.Join(h.Dir, "out-"+n+".txt")); err == nil {
			t.Errorf("out-%s.txt was written in the main checkout", n)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(cwds) != 2 || cwds[h.Dir] {
		t.Fatalf("the agents' working directories: %v; want two worktrees, not %s", cwds, h.Dir)
	}
	for cwd := range cwds {
		if files, _ := filepath.Glob(filepath.Join(cwd, "out-*.txt")); len(files) != 1 {
			t.Errorf("worktree %s holds %v, want its agent's file", cwd, files)
		}
	}
}

// --max-budget-usd is a workflow run's budget, and the session's spend cap
// (issue 40): an agent the cap cannot pay a request for stops before
// sending one, its step is null, and the next agent() throws. (Before the
// session cap covered every agent, the first agent spent past the budget
// and the second was refused; now nothing is spent past it.)
func TestWorkflowBudgetFromTheCommandLine(t *testing.T) {
	t.Parallel()
	policy, steps := stepPolicy(nil)
	h := workflowHarness(t, policy)
	h.Write("spend.js", `export const meta = {name: "spend", description: "agents until the budget stops them"}
for (let i = 0; i < 5; i++) {
  try { await agent("wfstep spend " + i) } catch (e) { return {stoppedAt: i, total: budget.total, why: e.message} }
}
return "never stopped"
`)
	out, errOut, code := h.Run("workflow", "run", "spend.js", "--max-budget-usd", "0.000001", "--output-format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	r := h.Result(out)
	if !strings.HasPrefix(r.Result, `{"stoppedAt":1,"total":0.000001,"why":"agent(): the session's budget of $0.0000 is reached`) || steps.Load() != 0 {
		t.Fatalf("result %q after %d model requests; want the second agent() refused and no request sent\n%s", r.Result, steps.Load(), errOut)
	}
}
