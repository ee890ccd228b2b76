package crew

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/flags"
	"github.com/cohort-dev/cohort/hook"
	"github.com/cohort-dev/cohort/internal/gitrepo"
	"github.com/cohort-dev/cohort/internal/safegit"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/claude"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/prompt"
	"github.com/cohort-dev/cohort/task"
	"github.com/cohort-dev/cohort/tool"
	"github.com/cohort-dev/cohort/tool/builtin"
	"github.com/cohort-dev/cohort/worktree"
)

// isoRig is a runtime on the fake API whose cwd is a git repository, with
// worktree isolation, the worktree tools and recording hooks.
type isoRig struct {
	t     *testing.T
	dir   string
	env   []string
	srv   *fakeapi.Server
	reg   *task.Registry
	rt    *Crew
	lead  *Agent
	hooks *recHooks
}

type isoConfig struct {
	policy fakeapi.Policy
	flags  []string
	noRepo bool // the cwd is not a git repository
	// gitSnapshot gives the session the main checkout's git snapshot, as
	// the CLI does.
	gitSnapshot bool
	mates       TeammateSpawner
}

func newIsoRig(t *testing.T, ic isoConfig) *isoRig {
	t.Helper()
	r := &isoRig{t: t, dir: canonicalDir(t), hooks: &recHooks{}}
	home := t.TempDir()
	r.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "GIT_CONFIG_GLOBAL=" + os.DevNull,
		"GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CEILING_DIRECTORIES=" + filepath.Dir(r.dir)}
	if !ic.noRepo {
		r.git("init", "--quiet", "--initial-branch=main")
		r.write("shared.txt", "original\n")
		r.git("add", ".")
		r.git("commit", "--quiet", "-m", "start")
	}
	r.srv = fakeapi.New(fakeapi.Config{Policy: ic.policy})
	t.Cleanup(r.srv.Close)
	model, err := claude.New(claude.Config{APIKey: "k", BaseURL: r.srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := flags.Resolve(flags.Config{CLI: ic.flags})
	if err != nil {
		t.Fatal(err)
	}
	r.reg, err = task.NewRegistry(task.Config{Home: home, SessionID: "s1"})
	if err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	var mgr *worktree.Manager
	var mgrErr error
	var rt *Crew
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = r.reg.Close(ctx)
		_ = rt.Workspaces().Close(ctx)
	})
	snapshot := ""
	if ic.gitSnapshot {
		repo, err := gitrepo.Find(r.dir)
		if err != nil {
			t.Fatal(err)
		}
		snapshot = prompt.GitSnapshot(t.Context(), &safegit.Runner{}, repo, r.dir, nil)
	}
	rt, err = New(Config{
		GitSnapshot: snapshot,
		Model:       model, Catalog: agentdef.NewCatalog(append(agentdef.BuiltIns(fs), delegator, loner)), Flags: fs,
		Tools: func(rt *Crew) []tool.Tool {
			return withAgentTool(ic.mates, append(builtin.All(builtin.Config{}), rt.Workspaces().Tools()...)...)(rt)
		},
		Tasks: r.reg, Cwd: r.dir, SessionID: "s1",
		Environment: prompt.Environment{Platform: "linux", Date: "2026-11-30"},
		Hooks:       func(a *Agent) engine.Hooks { return r.hooks },
		Worktrees: func(ctx context.Context) (*worktree.Manager, error) {
			once.Do(func() { mgr, mgrErr = worktree.New(ctx, worktree.Config{Dir: r.dir, Env: r.env}) })
			return mgr, mgrErr
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	r.rt = rt
	r.lead, err = rt.NewLead(t.Context(), LeadConfig{Model: "claude-sonnet-5-5", Mode: "bypassPermissions"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.lead.Close)
	return r
}

// delegator is an agent type whose definition lists Agent: the one way a
// subagent starts agents of its own.
var delegator = &agentdef.Definition{Name: "delegator", Description: "starts agents",
	Tools: []string{"Agent", "Bash", "Read", "Write", "Edit", "Glob", "Grep"}}

func canonicalDir(t *testing.T) string {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func (r *isoRig) git(args ...string) string {
	r.t.Helper()
	cmd := exec.CommandContext(r.t.Context(), "git", args...)
	cmd.Dir, cmd.Env = r.dir, r.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func (r *isoRig) write(name, content string) {
	r.t.Helper()
	if err := os.WriteFile(filepath.Join(r.dir, name), []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
}

func (r *isoRig) read(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(data)
}

// send runs one lead turn and returns the tool results the lead saw last.
func (r *isoRig) send(text string) {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(r.t.Context(), 60*time.Second)
	defer cancel()
	if _, err := r.lead.Engine().Send(ctx, []llm.Block{llm.Text(text)}, ""); err != nil {
		r.t.Fatalf("lead: %v", err)
	}
}

// recHooks records worktree hook events and refuses branches containing
// "blocked". It is the engine hooks of every agent.
type recHooks struct {
	mu     sync.Mutex
	events []string
}

func (h *recHooks) PreToolUse(context.Context, *engine.Call) engine.HookVerdict {
	return engine.HookVerdict{}
}
func (h *recHooks) PostToolUse(context.Context, *engine.Call, *tool.Result) string {
	return ""
}

func (h *recHooks) WorktreeCreate(_ context.Context, path, branch string) hook.Outcome {
	h.add("create " + branch)
	if strings.Contains(branch, "blocked") {
		return hook.Outcome{Block: true, Reason: "policy says no"}
	}
	return hook.Outcome{}
}

func (h *recHooks) WorktreeRemove(_ context.Context, path, branch string) hook.Outcome {
	h.add("remove " + branch)
	return hook.Outcome{}
}

func (h *recHooks) add(s string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, s)
}

func (h *recHooks) list() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.events...)
}

var workingDir = regexp.MustCompile(`Working directory: (\S+)`)

// cwdOf returns the working directory a request's system prompt states.
func cwdOf(r *fakeapi.Request) string {
	if m := workingDir.FindStringSubmatch(r.SystemText()); m != nil {
		return m[1]
	}
	return ""
}

// turnScript answers a conversation (keyed by a marker in its first user
// message) turn by turn.
func turnScript(steps ...func(*fakeapi.Request) fakeapi.Reply) func(*fakeapi.Request) fakeapi.Reply {
	return func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() >= len(steps) {
			return fakeapi.TextReply("no more steps")
		}
		return steps[r.Turn()](r)
	}
}

// router answers by the marker in the first user message.
func routes(m map[string]func(*fakeapi.Request) fakeapi.Reply) fakeapi.Policy {
	return func(r *fakeapi.Request) fakeapi.Reply {
		first := r.FirstUserText()
		for marker, f := range m {
			if strings.Contains(first, marker) {
				return f(r)
			}
		}
		return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "no route for " + first}}
	}
}

func TestIsolatedSubagentIsConfinedToItsWorktree(t *testing.T) {
	var leadSaw, childSaw []string
	var mu sync.Mutex
	var childCwd, childSystem, leadSystem string
	var r *isoRig
	r = newIsoRig(t, isoConfig{gitSnapshot: true, policy: routes(map[string]func(*fakeapi.Request) fakeapi.Reply{
		"LEAD:": turnScript(
			func(q *fakeapi.Request) fakeapi.Reply {
				mu.Lock()
				leadSystem = q.SystemText()
				mu.Unlock()
				return reply(call("Agent", map[string]any{"description": "edit in isolation", "prompt": "CHILD: change shared.txt",
					"isolation": "worktree"}))(q)
			},
			func(q *fakeapi.Request) fakeapi.Reply {
				mu.Lock()
				leadSaw = append(leadSaw, q.LastToolResultText())
				mu.Unlock()
				return fakeapi.TextReply("done")
			}),
		"CHILD:": turnScript(
			func(q *fakeapi.Request) fakeapi.Reply {
				mu.Lock()
				childCwd, childSystem = cwdOf(q), q.SystemText()
				mu.Unlock()
				wt := cwdOf(q)
				return fakeapi.Reply{Content: []fakeapi.Block{
					call("Write", map[string]any{"file_path": filepath.Join(wt, "child.txt"), "content": "child's file\n"}),
					call("Write", map[string]any{"file_path": filepath.Join(r.dir, "escaped.txt"), "content": "escaped\n"}),
					call("Bash", map[string]any{"command": "cd " + r.dir + " && echo escaped > shared.txt"}),
					call("Bash", map[string]any{"command": "echo escaped > " + filepath.Join(r.dir, "new.txt")}),
					call("Bash", map[string]any{"command": "pwd && echo changed > shared.txt && cat shared.txt child.txt"}),
				}}
			},
			func(q *fakeapi.Request) fakeapi.Reply {
				mu.Lock()
				childSaw = append(childSaw, lastToolResultBlocks(q)...)
				mu.Unlock()
				return fakeapi.TextReply("child finished")
			}),
	})})
	r.send("LEAD: delegate")

	wt := filepath.Join(r.dir, ".cohort", "worktrees", childCwd[strings.LastIndex(childCwd, "/")+1:])
	if childCwd != wt || !strings.Contains(childSystem, "Isolated git worktree: "+wt) {
		t.Fatalf("child cwd %q, system prompt:\n%s", childCwd, childSystem)
	}
	// Each is told about the checkout it works in.
	if !strings.Contains(leadSystem, "Current branch: main\n") {
		t.Errorf("the lead's git snapshot does not show main:\n%s", leadSystem)
	}
	if !strings.Contains(childSystem, "Current branch: cohort/"+filepath.Base(wt)+"\n") || strings.Contains(childSystem, "Current branch: main") {
		t.Errorf("the isolated child's git snapshot is not its worktree's:\n%s", childSystem)
	}
	if len(childSaw) != 5 {
		t.Fatalf("child saw %d results: %q", len(childSaw), childSaw)
	}
	wantPrefixes := []string{"", "ERROR:", "ERROR:Command refused", "ERROR:Command refused", ""}
	for i, p := range wantPrefixes {
		if p == "" && strings.HasPrefix(childSaw[i], "ERROR:") || p != "" && !strings.HasPrefix(childSaw[i], p) {
			t.Errorf("result %d = %q, want prefix %q", i, childSaw[i], p)
		}
	}
	if !strings.Contains(childSaw[1], "isolated in the worktree") || !strings.Contains(childSaw[4], wt+"\nchanged\nchild's file") {
		t.Errorf("results: %q", childSaw)
	}
	if got := r.read(filepath.Join(r.dir, "shared.txt")); got != "original\n" {
		t.Errorf("main checkout's shared.txt = %q", got)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "new.txt")); err == nil {
		t.Error("a Bash redirect wrote into the main checkout")
	}
	if st := r.git("status", "--porcelain"); st != "" {
		t.Errorf("main checkout is not clean:\n%s", st)
	}
	branch := "cohort/" + filepath.Base(wt)
	if len(leadSaw) != 1 || !strings.Contains(leadSaw[0], `worktreePath="`+wt+`" worktreeBranch="`+branch+`"`) {
		t.Errorf("lead saw %q", leadSaw)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "escaped.txt")); err == nil {
		t.Error("Write wrote into the main checkout")
	}
	if got := r.read(filepath.Join(wt, "shared.txt")); got != "changed\n" {
		t.Errorf("worktree's shared.txt = %q", got)
	}
	if d := cmp.Diff([]string{"create " + branch}, r.hooks.list()); d != "" {
		t.Errorf("hooks (-want +got):\n%s", d)
	}
	if !strings.HasPrefix(filepath.Base(wt), "edit-in-isolation-") {
		t.Errorf("slug %q is not derived from the description", filepath.Base(wt))
	}
}

// lastToolResultBlocks returns the texts of the last message's tool
// results, "ERROR:"-prefixed when is_error.
func lastToolResultBlocks(q *fakeapi.Request) []string {
	last := q.Messages[len(q.Messages)-1]
	var out []string
	for _, b := range last.Content {
		if b.Type != "tool_result" {
			continue
		}
		var parts []string
		for _, c := range b.Content {
			parts = append(parts, c.Text)
		}
		s := strings.Join(parts, "")
		if b.IsError {
			s = "ERROR:" + s
		}
		out = append(out, s)
	}
	return out
}

// loner is an agent type whose definition asks for a worktree of its own.
var loner = &agentdef.Definition{Name: "loner", Description: "works in a worktree of its own", Isolation: "worktree",
	Tools: []string{"Bash", "Read"}}

// TestDefinitionsIsolationApplies: a definition's isolation: worktree
// starts its agents in a worktree of their own when the Agent call names
// none, as Claude Code does.
func TestDefinitionsIsolationApplies(t *testing.T) {
	var childCwd string
	r := newIsoRig(t, isoConfig{policy: routes(map[string]func(*fakeapi.Request) fakeapi.Reply{
		"LEAD:": turnScript(
			reply(call("Agent", map[string]any{"description": "alone", "prompt": "CHILD: look", "subagent_type": "loner"})),
			say("ok")),
		"CHILD:": turnScript(func(q *fakeapi.Request) fakeapi.Reply {
			childCwd = cwdOf(q)
			return fakeapi.TextReply("looked")
		}),
	})})
	r.send("LEAD: go")
	if childCwd == "" || childCwd == r.dir || !strings.HasPrefix(filepath.Base(childCwd), "alone-") {
		t.Fatalf("the loner worked in %q, not in a worktree of its own (the lead's is %s)", childCwd, r.dir)
	}
}

func TestCleanIsolatedAgentLeavesNoWorktree(t *testing.T) {
	var leadSaw string
	var childCwd string
	var grandCwd string
	var grandSaw []string
	var r *isoRig
	r = newIsoRig(t, isoConfig{policy: routes(map[string]func(*fakeapi.Request) fakeapi.Reply{
		"LEAD:": turnScript(
			reply(call("Agent", map[string]any{"description": "look around", "prompt": "CHILD: read only",
				"isolation": "worktree", "name": "scout", "subagent_type": "delegator"})),
			func(q *fakeapi.Request) fakeapi.Reply {
				leadSaw = q.LastToolResultText()
				return fakeapi.TextReply("ok")
			}),
		"CHILD:": turnScript(
			func(q *fakeapi.Request) fakeapi.Reply {
				childCwd = cwdOf(q)
				return fakeapi.Reply{Content: []fakeapi.Block{call("Agent", map[string]any{"description": "grandchild", "prompt": "GRAND: try"})}}
			},
			say("child finished")),
		// A child of an isolated agent works in the same worktree, under the
		// same guard.
		"GRAND:": turnScript(
			func(q *fakeapi.Request) fakeapi.Reply {
				grandCwd = cwdOf(q)
				return fakeapi.Reply{Content: []fakeapi.Block{
					call("Write", map[string]any{"file_path": filepath.Join(r.dir, "x.txt"), "content": "no\n"}),
					call("Bash", map[string]any{"command": "touch " + filepath.Join(r.dir, "y.txt")}),
				}}
			},
			func(q *fakeapi.Request) fakeapi.Reply {
				grandSaw = lastToolResultBlocks(q)
				return fakeapi.TextReply("grand done")
			}),
	})})
	r.send("LEAD: go")
	if !strings.Contains(filepath.Base(childCwd), "scout-") || grandCwd != childCwd {
		t.Fatalf("child cwd %q, grandchild cwd %q", childCwd, grandCwd)
	}
	if len(grandSaw) != 2 || !strings.HasPrefix(grandSaw[0], "ERROR:") || !strings.HasPrefix(grandSaw[1], "ERROR:Command refused") {
		t.Fatalf("grandchild saw %q", grandSaw)
	}
	if strings.Contains(leadSaw, "worktreePath") {
		t.Errorf("a worktree without changes was reported: %q", leadSaw)
	}
	if _, err := os.Stat(childCwd); err == nil {
		t.Errorf("the clean worktree %s is still there", childCwd)
	}
	if b := r.git("for-each-ref", "refs/heads/cohort/"); b != "" {
		t.Errorf("branches left: %s", b)
	}
	branch := "cohort/" + filepath.Base(childCwd)
	if d := cmp.Diff([]string{"create " + branch, "remove " + branch}, r.hooks.list()); d != "" {
		t.Errorf("hooks (-want +got):\n%s", d)
	}
}

func TestIsolationThatCannotHappenIsAnError(t *testing.T) {
	for _, tc := range []struct {
		name   string
		noRepo bool
		desc   string
		want   string
	}{
		{"not a repository", true, "anything", "is not inside a git repository"},
		{"hook refuses", false, "blocked work", "a WorktreeCreate hook refused the worktree"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			r := newIsoRig(t, isoConfig{noRepo: tc.noRepo, policy: routes(map[string]func(*fakeapi.Request) fakeapi.Reply{
				"LEAD:": turnScript(
					reply(call("Agent", map[string]any{"description": tc.desc, "prompt": "CHILD: must not run",
						"isolation": "worktree", "run_in_background": true})),
					func(q *fakeapi.Request) fakeapi.Reply {
						got = lastToolResultBlocks(q)[0]
						return fakeapi.TextReply("ok")
					}),
			})})
			r.send("LEAD: go")
			if !strings.HasPrefix(got, `ERROR:isolation: "worktree" was requested but is not possible, so the agent was not started`) ||
				!strings.Contains(got, tc.want) {
				t.Fatalf("result = %q", got)
			}
			for _, rec := range r.srv.Requests() {
				if rec.Request != nil && strings.Contains(rec.Request.FirstUserText(), "CHILD:") {
					t.Fatal("the agent ran although it could not be isolated")
				}
			}
		})
	}
}

var forkWorktree = regexp.MustCompile(`your working directory is (\S+)\. Read and change`)

func TestIsolatedForkKeepsTheParentsPrefix(t *testing.T) {
	var forkFirst, leadNext *fakeapi.Request
	var forkSaw []string
	var mu sync.Mutex
	var r *isoRig
	r = newIsoRig(t, isoConfig{flags: []string{"fork_subagent=on"}, policy: func(q *fakeapi.Request) fakeapi.Reply {
		mu.Lock()
		defer mu.Unlock()
		last := q.Messages[len(q.Messages)-1]
		if i := directiveIndex(q); i >= 0 {
			m := forkWorktree.FindStringSubmatch(q.Messages[i].Content[len(q.Messages[i].Content)-1].Text)
			switch len(q.Messages) - i {
			case 1:
				forkFirst = q
				if m == nil {
					return fakeapi.TextReply("Scope: no worktree note")
				}
				return fakeapi.Reply{Content: []fakeapi.Block{
					call("Write", map[string]any{"file_path": filepath.Join(m[1], "forked.txt"), "content": "fork\n"}),
					call("Write", map[string]any{"file_path": filepath.Join(r.dir, "forked.txt"), "content": "fork\n"}),
				}}
			default:
				forkSaw = lastToolResultBlocks(q)
				return fakeapi.TextReply("Scope: wrote forked.txt")
			}
		}
		switch q.Turn() {
		case 0:
			return fakeapi.Reply{Content: []fakeapi.Block{call("Agent", map[string]any{
				"description": "isolated fork", "prompt": "write forked.txt", "isolation": "worktree"})}}
		case 1:
			leadNext = q
			_ = last
			return fakeapi.TextReply("forked")
		}
		return fakeapi.TextReply("noted")
	}})
	r.send("LEAD: fork one")
	deadline := time.Now().Add(30 * time.Second)
	for r.reg.Outstanding(r.lead.Queue()) > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	items := r.lead.Queue().Drain()
	mu.Lock()
	defer mu.Unlock()
	if forkFirst == nil || leadNext == nil {
		t.Fatal("the fork or the lead's next turn never reached the fake")
	}
	if string(mustMarshal(t, forkFirst.System)) != string(mustMarshal(t, leadNext.System)) ||
		string(stripCache(t, forkFirst.Tools)) != string(stripCache(t, leadNext.Tools)) {
		t.Fatal("an isolated fork's system prompt or tools differ from its parent's")
	}
	if len(forkSaw) != 2 || strings.HasPrefix(forkSaw[0], "ERROR:") || !strings.HasPrefix(forkSaw[1], "ERROR:") {
		t.Fatalf("fork saw %q", forkSaw)
	}
	if _, err := os.Stat(filepath.Join(r.dir, "forked.txt")); err == nil {
		t.Fatal("the fork wrote into the main checkout")
	}
	if len(items) != 1 || items[0].Notification == nil {
		t.Fatalf("lead queue = %+v", items)
	}
	n := items[0].Notification
	if n.WorktreePath == "" || !strings.HasPrefix(n.WorktreeBranch, "cohort/isolated-fork-") ||
		r.read(filepath.Join(n.WorktreePath, "forked.txt")) != "fork\n" {
		t.Fatalf("notification worktree %q %q", n.WorktreePath, n.WorktreeBranch)
	}
	if !strings.Contains(items[0].ModelText(), "<worktree><worktreePath>"+n.WorktreePath+"</worktreePath>") {
		t.Errorf("notification text lacks the worktree:\n%s", items[0].ModelText())
	}
}

// directiveIndex returns the index of the fork directive message, or -1.
func directiveIndex(q *fakeapi.Request) int {
	for i, m := range q.Messages {
		if m.Role == "user" && strings.Contains(joinTexts(m.Content), "Your directive: ") {
			return i
		}
	}
	return -1
}

func joinTexts(bs []fakeapi.Block) string {
	var parts []string
	for _, b := range bs {
		parts = append(parts, b.Text)
	}
	return strings.Join(parts, "")
}

func TestLeadEntersAndLeavesAWorktree(t *testing.T) {
	var saw [][]string
	var r *isoRig
	r = newIsoRig(t, isoConfig{policy: routes(map[string]func(*fakeapi.Request) fakeapi.Reply{
		"LEAD:": func(q *fakeapi.Request) fakeapi.Reply {
			if q.Turn() > 0 {
				saw = append(saw, lastToolResultBlocks(q))
			}
			wt := filepath.Join(r.dir, ".cohort", "worktrees", "topic")
			steps := [][]fakeapi.Block{
				{call("EnterWorktree", map[string]any{"name": "topic"})},
				{call("Bash", map[string]any{"command": "pwd; echo new > made.txt"}),
					call("Write", map[string]any{"file_path": filepath.Join(r.dir, "escaped.txt"), "content": "no\n"}),
					call("Agent", map[string]any{"description": "helper", "prompt": "CHILD: where am I"})},
				{call("ExitWorktree", map[string]any{"action": "remove"})},
				{call("ExitWorktree", map[string]any{"action": "remove", "discard_changes": true})},
				{call("Bash", map[string]any{"command": "pwd; ls " + wt + " 2>&1 || true"})},
			}
			if q.Turn() < len(steps) {
				return fakeapi.Reply{Content: steps[q.Turn()]}
			}
			return fakeapi.TextReply("done")
		},
		"CHILD:": func(q *fakeapi.Request) fakeapi.Reply { return fakeapi.TextReply("child cwd " + cwdOf(q)) },
	})})
	r.send("LEAD: work in a worktree")
	wt := filepath.Join(r.dir, ".cohort", "worktrees", "topic")
	if len(saw) != 5 {
		t.Fatalf("lead saw %d turns of results: %q", len(saw), saw)
	}
	if !strings.HasPrefix(saw[0][0], "Created and entered the worktree "+wt+" on branch cohort/topic.") {
		t.Errorf("enter: %q", saw[0])
	}
	if saw[1][0] != wt || !strings.HasPrefix(saw[1][1], "ERROR:") || !strings.Contains(saw[1][2], "child cwd "+wt) {
		t.Errorf("in the worktree: %q", saw[1])
	}
	if !strings.HasPrefix(saw[2][0], "ERROR:The worktree "+wt+" was not removed") || !strings.Contains(saw[2][0], "made.txt") {
		t.Errorf("dirty remove: %q", saw[2])
	}
	if !strings.HasPrefix(saw[3][0], "Removed the worktree "+wt+" and its branch cohort/topic, discarding:") {
		t.Errorf("discard: %q", saw[3])
	}
	if !strings.HasPrefix(saw[4][0], r.dir+"\n") || !strings.Contains(saw[4][0], "No such file") {
		t.Errorf("after exit: %q", saw[4])
	}
	if got := r.read(filepath.Join(r.dir, "shared.txt")); got != "original\n" {
		t.Errorf("shared.txt = %q", got)
	}
}

// fakeMates records teammate spawns.
type fakeMates struct {
	mu      sync.Mutex
	spawned []string
}

func (f *fakeMates) SpawnTeammate(_ context.Context, _ *Crew, _ *Agent, _ *tool.Env, in AgentInput) (tool.Result, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.spawned = append(f.spawned, in.Name)
	return tool.Text("spawned " + in.Name), nil
}

type isolatingMates struct{ *fakeMates }

func (isolatingMates) IsolatesTeammates() bool { return true }

func TestIsolatedTeammateNeedsASpawnerThatIsolates(t *testing.T) {
	for _, isolates := range []bool{false, true} {
		mates := &fakeMates{}
		var spawner TeammateSpawner = mates
		if isolates {
			spawner = isolatingMates{mates}
		}
		var got string
		r := newIsoRig(t, isoConfig{mates: spawner, policy: routes(map[string]func(*fakeapi.Request) fakeapi.Reply{
			"LEAD:": turnScript(
				reply(call("Agent", map[string]any{"description": "mate", "prompt": "work", "name": "alice",
					"team_name": "t1", "isolation": "worktree"})),
				func(q *fakeapi.Request) fakeapi.Reply {
					got = lastToolResultBlocks(q)[0]
					return fakeapi.TextReply("ok")
				}),
		})})
		r.send("LEAD: spawn")
		if isolates {
			if got != "spawned alice" || len(mates.spawned) != 1 {
				t.Errorf("an isolating spawner was not used: %q", got)
			}
			continue
		}
		if !strings.HasPrefix(got, `ERROR:isolation: "worktree" is not available for teammates in this session, so "alice" was not started`) || len(mates.spawned) != 0 {
			t.Errorf("a teammate that cannot be isolated: %q, spawned %v", got, mates.spawned)
		}
	}
}
