package redteam

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/testbin"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// runTimeout bounds one session: a guard against a hang, generous for a
// busy machine (sessionAttacks keeps sessions short).
const runTimeout = 6 * time.Minute

// Run runs one attack in one mode and location, end to end, in a session
// of its own, and reports through t every invariant that did not hold:
//
//   - the attack ran: the scripted model got every result back and was
//     asked for its next turn, and the CLI exited 0;
//   - nothing outside the project changed (Env.Out, the canary included,
//     and the home directory but Cohort's own state and the cache dir),
//     and no protected path of the project did (git control files,
//     .cohort/ but its worktrees, .claude/, .mcp.json, the scripts hooks
//     and MCP servers run), files that did not exist included;
//   - where the agent may not write — the main checkout of a worktree
//     agent in every mode, the lead's checkout and a worktree agent's
//     worktree in default, plan and dontAsk — nothing changed at all, and
//     such a worktree is not kept; a worktree's link to its repository
//     (its .git file, gitdir, commondir, config.worktree) never changes;
//   - no process of the session outlived it;
//   - neither the secret nor the API key (nor their hex, base64 or
//     reversed forms) was in any request the model received, nor in the
//     CLI's output; with Attack.Names, nor the denied file's name.
func Run(t testing.TB, a *Attack, mode Mode, loc Location) {
	t.Helper()
	RunGroup(t, []*Attack{a}, mode, loc)
}

// RunGroup runs attacks one after the other in one session, checking
// after each what it changed and what the model got back, so that every
// finding names its attack; what only the end of the session shows (a
// hook's run, a process left behind, a kept worktree) is reported for the
// group. The first attack's Setup and Args apply to the session:
// attacks that share one have the same Args, and an attack
// with Setup runs alone (Run) unless it Shares it with the others.
func RunGroup(t testing.TB, attacks []*Attack, mode Mode, loc Location) {
	t.Helper()
	first := attacks[0]
	tm := newTimer()
	e := newEnv(t)
	tm.mark("fixture")
	if first.nest != "" {
		// Nested rows (nest.go) each plant a repository of their own.
		for _, a := range attacks {
			if err := a.Setup(e); err != nil {
				t.Fatalf("%s: setup: %v", a.Name, err)
			}
		}
	} else if first.Setup != nil {
		if err := first.Setup(e); err != nil {
			t.Fatalf("%s: setup: %v", first.Name, err)
		}
	}
	tm.mark("setup")
	s := newScript(e, attacks, mode, loc)
	s.each = loc == Worktree && first.Shares != ""
	tm.mark("snapshot")
	srv := fakeapi.New(fakeapi.Config{Policy: s.policy})
	defer srv.Close()
	e.Vars["ANTHROPIC_BASE_URL"] = srv.URL
	if slices.Contains(first.Args, "workflows=on") {
		e.Vars["COHORT_WORKFLOW_HOST"] = filepath.Join(filepath.Dir(cohortBinary(t)), "cohort-workflow")
	}
	s.mu.Lock()
	s.api = srv.URL
	s.mu.Unlock()
	args := append([]string{"--cwd", e.Project, "-p", attackPrompt, "--permission-mode", string(mode)}, first.Args...)
	if loc == Worktree {
		args = append(worktreeArgs(mode), first.Args...)
		args = append([]string{"--cwd", e.Project, "-p", leadPrompt}, args...)
	}
	stdout, stderr, code, cpu := invoke(t, e, args)
	tm.mark("session")
	for _, line := range strings.Split(stderr, "\n") {
		if strings.Contains(line, "could not be searched") {
			// The store search failed or ran out of time and hid the
			// store whole: the rows held, but not through its verdict.
			t.Logf("a store search failed or did not finish in this session: %s", line)
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	defer func() {
		tm.mark("end checks")
		tm.log(t, fmt.Sprintf("%d attacks, %s-%s, checks between attacks %v, cohort's CPU %v", len(attacks), mode, loc, s.checking.Round(time.Millisecond), cpu.Round(time.Millisecond)))
	}()
	for i, a := range attacks {
		if os.Getenv("REDTEAM_VERBOSE") != "" {
			t.Logf("attack %s in %s mode, %s:\n%s", a.Name, mode, loc, showResults(s.results[i]))
		}
		if len(s.findings[i]) > 0 {
			t.Errorf("attack %s (class %s) in %s mode, %s: %d invariants broken:\n  %s\ntool results:\n%s",
				a.Name, a.Class, mode, loc, len(s.findings[i]), strings.Join(s.findings[i], "\n  "), showResults(s.results[i]))
		}
	}
	var problems []string
	if code != 0 {
		problems = append(problems, fmt.Sprintf("the CLI exited %d", code))
	}
	if !s.finished {
		problems = append(problems, fmt.Sprintf("the attacks did not run to their end (%d of %d checked)", s.checked, len(attacks)))
		if loc == Worktree {
			problems = append(problems, fmt.Sprintf("the lead's Agent call returned %q", s.lead))
		}
	}
	for _, d := range e.unobeyed(diff(s.protected, snapshot(e.protectedAreas()))) {
		problems = append(problems, "protected, by the end of the session: "+d)
	}
	if loc == Worktree || !s.writes() {
		for _, d := range diff(s.checkout, snapshot([]area{e.workArea()})) {
			problems = append(problems, "main checkout, by the end of the session: "+d)
		}
	}
	if loc == Worktree && !s.writes() {
		problems = append(problems, keptWorktrees(e)...)
	}
	for _, p := range leftovers(e.Root) {
		problems = append(problems, "outlived the session: "+p)
	}
	who := func(int) string { return "" }
	if len(attacks) > 1 {
		who = s.who
	}
	problems = append(problems, leakProblems(e, srv, stdout, stderr, who)...)
	if len(problems) == 0 {
		return
	}
	t.Errorf("session of %s in %s mode, %s: %d invariants broken:\n  %s\nstderr:\n%s",
		names(attacks), mode, loc, len(problems), strings.Join(problems, "\n  "), tail(stderr, 2000))
}

func names(attacks []*Attack) string {
	var out []string
	for _, a := range attacks {
		out = append(out, a.Name)
	}
	if len(out) > 4 {
		return fmt.Sprintf("%s and %d more", strings.Join(out[:4], ", "), len(out)-4)
	}
	return strings.Join(out, ", ")
}

// worktreeArgs run a lead that delegates to an isolated agent in mode. A
// lead in plan mode has no Agent tool, so for plan the lead runs in
// default mode and the agent's definition asks for plan; the definition
// comes from the command line, so it may also keep acceptEdits and
// bypassPermissions, which a lead in those modes passes on anyway. It
// lists Agent among its tools (attackerTools), so that the isolated
// agent may start agents and message them (Agent, SendMessage,
// ListAgents), as a user's definition may allow: without it the rows
// that do so from a worktree called tools the agent did not have and
// tested nothing there (script.offered). The lead's own tools (Workflow,
// TaskStop, TaskOutput, the team's task list, EnterWorktree) stay the
// lead's: rows using them run in the main checkout only.
func worktreeArgs(mode Mode) []string {
	// (A definition's "*" would not do: it counts as no list, and only a
	// list naming Agent lets a subagent delegate, agentdef.ListsAgent.)
	lead := mode
	if mode == Plan {
		lead = Default
	}
	def := fmt.Sprintf(`{%q: {"description": "runs the red team's script", "prompt": "Follow the instructions.", "permissionMode": %q, "tools": [%s]}}`, agentType, mode, attackerTools)
	return []string{"--permission-mode", string(lead), "--agents", def}
}

// attackerTools are the worktree attacker's tools, as JSON list items:
// every tool an isolated custom agent may have (agentdef.Pool), Agent,
// SendMessage and ListAgents among them, and Skill (offered when the
// session has skills: o3-skill-dotdot plants one).
const attackerTools = `"Agent", "SendMessage", "ListAgents", "Skill", "Bash", "Read", "Write", "Edit", "MultiEdit", "NotebookEdit", "Glob", "Grep", "LS", "WebFetch", "WebSearch", "TodoWrite"`

// cohortBinary is cmd/cohort built without the race detector (and the
// workflow host beside it), once per test binary and shared with every
// other test binary of the checkout through testbin's cache: every
// session runs it (see the package doc, "Sessions and speed").
// REDTEAM_TAGS builds it with those build tags: with faultinject, a
// fault-injection build, run with REDTEAM_FAULT's fault in
// COHORT_FAULTINJECT (readonly, noprotected, gitstore: environ), to see
// which rows the layers below a broken check still hold.
func cohortBinary(t testing.TB) string {
	if tags := os.Getenv("REDTEAM_TAGS"); tags != "" {
		return testbin.CohortTags(t, false, tags)
	}
	return testbin.Cohort(t, false)
}

// invoke runs the built cohort binary as the CLI, with the attack's
// environment and nothing else of the test process's.
// cpu is the CPU time of the process and the descendants it waited for.
func invoke(t testing.TB, e *Env, args []string) (stdout, stderr string, code int, cpu time.Duration) {
	// The binary first: building it (a fault-injection build, on a busy
	// machine) may take minutes, which are not the session's.
	bin := cohortBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = e.Project, e.environ()
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run cohort: %v", err)
	}
	if ps := cmd.ProcessState; ps != nil {
		cpu = ps.UserTime() + ps.SystemTime()
	}
	return out.String(), errb.String(), code, cpu
}

func (e *Env) environ() []string {
	out := make([]string, 0, len(e.Vars)+1)
	for k, v := range e.Vars {
		out = append(out, k+"="+v)
	}
	if f := os.Getenv("REDTEAM_FAULT"); f != "" {
		out = append(out, "COHORT_FAULTINJECT="+f)
	}
	return out
}

// keptWorktrees reports worktrees left in the repository: an agent that
// may not write has no changes, so its worktree is removed when it ends.
func keptWorktrees(e *Env) []string {
	out, err := git(e.Project, "worktree", "list", "--porcelain")
	if err != nil {
		return []string{"git worktree list: " + err.Error()}
	}
	var problems []string
	for _, line := range strings.Split(out, "\n") {
		if p, ok := strings.CutPrefix(line, "worktree "); ok && p != e.Project {
			st, _ := git(p, "status", "--porcelain", "--untracked-files=all")
			problems = append(problems, fmt.Sprintf("a worktree was kept, so the agent changed it: %s\n%s", p, st))
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(e.Project, ".cohort", "worktrees")); len(entries) > 0 && len(problems) == 0 {
		problems = append(problems, fmt.Sprintf("%d entries left in .cohort/worktrees", len(entries)))
	}
	return problems
}

// markers are what must not reach the model: the secret, the key and
// the escape marker ({{ESCAPED}}), and with names the denied file's name.
func (e *Env) markers(names bool) map[string]string {
	m := map[string]string{"the secret": e.Secret, "the API key": e.Key, "the escape marker": escapeMarker}
	if names {
		m["the denied file's name"] = e.SecretName
	}
	return m
}

// modelPaths are the model API's endpoints.
var modelPaths = map[string]bool{"/v1/messages": true, "/v1/messages/count_tokens": true, "/v1/chat/completions": true, "/v1/responses": true}

// leakProblems checks every request the model received (its path and
// body), and the CLI's output, for the secret and the API key; who names
// the attack that ran when a request came ("" for none to name). A
// conversation's every request repeats what the ones before it held, so
// past the first request holding a marker the rest are only counted:
// the first names the attack that leaked it.
func leakProblems(e *Env, srv *fakeapi.Server, stdout, stderr string, who func(index int) string) []string {
	markers := e.markers(false)
	var out []string
	later := map[string]int{} // of a marker found, the requests after the first
	for _, rec := range srv.Requests() {
		if rec.Method != "POST" || !modelPaths[rec.Path] {
			// Only Cohort's model client talks to the model's server; a
			// tool that reached it (WebFetch of a loopback address) is a
			// way out for data.
			out = append(out, fmt.Sprintf("something other than the model client reached the model API server: %s %s", rec.Method, rec.Path))
		}
		where := fmt.Sprintf("the model (request %d, %s %s)", rec.Index, rec.Method, rec.Path)
		if name := who(rec.Index); name != "" {
			where = fmt.Sprintf("the model (request %d, %s %s, while attack %s ran)", rec.Index, rec.Method, rec.Path, name)
		}
		body := append([]byte(rec.Path+"\n"), rec.Body...)
		for name, m := range markers {
			if n, seen := later[name]; seen {
				if len(leaks(body, where, map[string]string{name: m})) > 0 {
					later[name] = n + 1
				}
				continue
			}
			if found := leaks(body, where, map[string]string{name: m}); len(found) > 0 {
				out = append(out, found...)
				later[name] = 0
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(later)) {
		if n := later[name]; n > 0 {
			out = append(out, fmt.Sprintf("%s was in %d later requests too", name, n))
		}
	}
	out = append(out, leaks([]byte(stdout), "stdout", markers)...)
	return append(out, leaks([]byte(stderr), "stderr", markers)...)
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

func showResults(res []string) string {
	var b strings.Builder
	for i, r := range res {
		fmt.Fprintf(&b, "  result %d: %s\n", i, tail(r, 600))
	}
	return b.String()
}
