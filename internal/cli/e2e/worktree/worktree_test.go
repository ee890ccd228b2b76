package worktree

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// worktreeNotices returns the worktree paths and branches named by the
// task notifications in msgs, by branch.
func worktreeNotices(msgs []fakeapi.Message) map[string]string {
	out := map[string]string{}
	for _, m := range msgs {
		for _, b := range m.Content {
			for _, blk := range clitest.NoticeBlock.FindAllString(b.Text, -1) {
				if br := clitest.NoticeField(blk, "worktreeBranch"); br != "" {
					out[br] = clitest.NoticeField(blk, "worktreePath")
				}
			}
		}
	}
	return out
}

// TestTwoBackgroundAgentsEditOneFileInTheirWorktrees is issue 9's
// end-to-end test: two background agents with isolation "worktree" edit
// the same file differently at the same time; the main checkout is
// untouched, each branch holds its agent's edit, and both notifications
// name their kept worktree.
func TestTwoBackgroundAgentsEditOneFileInTheirWorktrees(t *testing.T) {
	t.Parallel()
	rt := &clitest.Router{}
	h := clitest.New(t, rt.Policy)
	clitest.GitRepo(t, h, map[string]string{"shared.txt": "original\n"})
	together := clitest.NewBarrier(2)
	var launches []fakeapi.Block
	for i := 1; i <= 2; i++ {
		launches = append(launches, clitest.Use("Agent", map[string]any{
			"description": fmt.Sprintf("editor %d", i), "run_in_background": true, "isolation": "worktree",
			"prompt": fmt.Sprintf("WT-%d: change shared.txt", i)}))
	}
	rt.On("LEAD-wt:", func(r *fakeapi.Request) fakeapi.Reply {
		switch r.Turn() {
		case 0:
			return fakeapi.Reply{Content: launches}
		case 1:
			return fakeapi.TextReply("two editors are working")
		}
		return fakeapi.TextReply(fmt.Sprintf("seen %d", len(worktreeNotices(r.Messages))))
	})
	for i := 1; i <= 2; i++ {
		n := fmt.Sprint(i)
		rt.On("WT-"+n+":", func(r *fakeapi.Request) fakeapi.Reply {
			file := filepath.Join(clitest.AgentCwd(r), "shared.txt")
			switch r.Turn() {
			case 0:
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Read", map[string]any{"file_path": file})}}
			case 1:
				if !together.Wait(r.Context()) {
					return fakeapi.TextReply("the editors did not run at the same time")
				}
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Edit", map[string]any{
					"file_path": file, "old_string": "original", "new_string": "edited by " + n})}}
			case 2:
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Bash", map[string]any{"command": clitest.CommitCmd("editor " + n)})}}
			}
			return fakeapi.TextReply("editor " + n + ": " + r.LastToolResultText())
		})
	}
	out, errOut, code := h.Run("-p", "LEAD-wt: edit in parallel", "--output-format", "stream-json", "--permission-mode", "bypassPermissions")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if got := h.Read("shared.txt"); got != "original\n" {
		t.Errorf("main checkout's shared.txt = %q", got)
	}
	if st := h.Git("status", "--porcelain"); st != "" {
		t.Errorf("main checkout is not clean:\n%s", st)
	}
	got := worktreeNotices(clitest.FinalHistory(t, h.Srv, "LEAD-wt:"))
	if len(got) != 2 {
		t.Fatalf("notifications name %d worktrees, want 2: %v", len(got), got)
	}
	var edits []string
	for branch, path := range got {
		if !strings.HasPrefix(branch, "cohort/editor-") || path != filepath.Join(h.Dir, ".cohort", "worktrees", strings.TrimPrefix(branch, "cohort/")) {
			t.Errorf("worktree %s on %s", path, branch)
		}
		edits = append(edits, h.Git("show", branch+":shared.txt"))
		if log := h.Git("log", "--format=%s", "-1", branch); !strings.HasPrefix(log, "editor ") {
			t.Errorf("%s's last commit is %q", branch, log)
		}
	}
	sort.Strings(edits)
	if d := cmp.Diff([]string{"edited by 1", "edited by 2"}, edits); d != "" {
		t.Errorf("the branches' shared.txt (-want +got):\n%s", d)
	}
	if r := clitest.ParseStream(t, out).Result; r.IsError || r.Result != "seen 2" {
		t.Errorf("result = %+v", r)
	}
}

var forkDir = regexp.MustCompile(`your working directory is (\S+)\. Read and change`)

// TestIsolatedForkEditsOnlyItsWorktree: a fork with isolation "worktree"
// keeps its parent's system prompt and tools (the cached prefix), learns
// its worktree from its directive, and writes only there.
func TestIsolatedForkEditsOnlyItsWorktree(t *testing.T) {
	t.Parallel()
	var forkReq, leadReq *fakeapi.Request
	var forkSaw []string
	var h *clitest.Harness
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		for i, m := range r.Messages {
			if m.Role != "user" || len(m.Content) == 0 || !strings.Contains(m.Content[len(m.Content)-1].Text, "Your directive: FORK:") {
				continue
			}
			if len(r.Messages) == i+1 {
				forkReq = r
				dir := forkDir.FindStringSubmatch(m.Content[len(m.Content)-1].Text)
				if dir == nil {
					return fakeapi.TextReply("Scope: the directive has no worktree note")
				}
				return fakeapi.Reply{Content: []fakeapi.Block{
					clitest.Use("Write", map[string]any{"file_path": filepath.Join(dir[1], "fork.txt"), "content": "from the fork\n"}),
					clitest.Use("Write", map[string]any{"file_path": filepath.Join(h.Dir, "fork.txt"), "content": "escaped\n"}),
				}}
			}
			forkSaw = clitest.ToolResults(r)
			return fakeapi.TextReply("Scope: wrote fork.txt in my worktree")
		}
		switch r.Turn() {
		case 0:
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Agent", map[string]any{
				"description": "isolated fork", "prompt": "FORK: write fork.txt", "isolation": "worktree"})}}
		case 1:
			leadReq = r
			return fakeapi.TextReply("forked")
		}
		return fakeapi.TextReply("noted " + fmt.Sprint(len(worktreeNotices(r.Messages))))
	}
	h = clitest.New(t, policy)
	clitest.GitRepo(t, h, map[string]string{"README.md": "# project\n"})
	out, errOut, code := h.Run("-p", "LEAD-fork: fork once", "--output-format", "json",
		"--permission-mode", "bypassPermissions", "--flag", "fork_subagent=on")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if forkReq == nil || leadReq == nil {
		t.Fatal("the fork or the lead's second turn never reached the fake")
	}
	if string(clitest.MustJSON(t, forkReq.System)) != string(clitest.MustJSON(t, leadReq.System)) {
		t.Error("the isolated fork's system prompt differs from its parent's")
	}
	var forkTools, leadTools []string
	for _, tl := range forkReq.Tools {
		forkTools = append(forkTools, tl.Name+"\n"+tl.Description+"\n"+string(tl.InputSchema))
	}
	for _, tl := range leadReq.Tools {
		leadTools = append(leadTools, tl.Name+"\n"+tl.Description+"\n"+string(tl.InputSchema))
	}
	if d := cmp.Diff(leadTools, forkTools); d != "" {
		t.Errorf("the isolated fork's tools differ from its parent's:\n%s", d)
	}
	if len(forkSaw) != 2 || strings.HasPrefix(forkSaw[0], "ERROR:") || !strings.HasPrefix(forkSaw[1], "ERROR:") {
		t.Fatalf("the fork's write results: %q", forkSaw)
	}
	if _, err := os.Stat(filepath.Join(h.Dir, "fork.txt")); err == nil {
		t.Fatal("the fork wrote into the main checkout")
	}
	// The fork's requests share the lead's first message; the lead's own
	// have no directive.
	var leadHist []fakeapi.Message
	for _, r := range clitest.ConvRequests(h.Srv, "LEAD-fork:") {
		if !strings.Contains(string(clitest.MustJSON(t, r.Messages)), "Your directive:") && len(r.Messages) > len(leadHist) {
			leadHist = r.Messages
		}
	}
	got := worktreeNotices(leadHist)
	if len(got) != 1 {
		t.Fatalf("notifications name worktrees %v, want one", got)
	}
	for branch, path := range got {
		data, err := os.ReadFile(filepath.Join(path, "fork.txt"))
		if err != nil || string(data) != "from the fork\n" || !strings.HasPrefix(branch, "cohort/isolated-fork-") {
			t.Errorf("kept worktree %s (%s): fork.txt = %q, %v", path, branch, data, err)
		}
	}
	if st := h.Git("status", "--porcelain"); st != "" {
		t.Errorf("main checkout is not clean:\n%s", st)
	}
}

// TestIsolatedAgentCannotWriteTheMainCheckout: Write to an absolute path
// in the main checkout, and Bash after a cd into it, are refused; the same
// work inside the worktree goes through.
func TestIsolatedAgentCannotWriteTheMainCheckout(t *testing.T) {
	t.Parallel()
	c := clitest.NewConv()
	h := clitest.New(t, c.Policy)
	clitest.GitRepo(t, h, map[string]string{"app.go": "package app\n"})
	var saw []string
	var leadSaw string
	c.On("LEAD-guard:", clitest.Calls(clitest.Use("Agent", map[string]any{"description": "guarded", "isolation": "worktree",
		"prompt": "GUARD: try to escape"})), func(r *fakeapi.Request) fakeapi.Reply {
		leadSaw = r.LastToolResultText()
		return fakeapi.TextReply("ok")
	})
	c.On("GUARD:", func(r *fakeapi.Request) fakeapi.Reply {
		wt := clitest.AgentCwd(r)
		return fakeapi.Reply{Content: []fakeapi.Block{
			clitest.Use("Write", map[string]any{"file_path": filepath.Join(h.Dir, "escape.txt"), "content": "x\n"}),
			clitest.Use("Bash", map[string]any{"command": "cd " + h.Dir + " && touch escape2.txt"}),
			clitest.Use("Bash", map[string]any{"command": "echo x > " + filepath.Join(h.Dir, "escape3.txt")}),
			clitest.Use("Write", map[string]any{"file_path": filepath.Join(wt, "inside.txt"), "content": "fine\n"}),
			clitest.Use("Bash", map[string]any{"command": "touch inside2.txt && ls"}),
		}}
	}, func(r *fakeapi.Request) fakeapi.Reply {
		saw = clitest.ToolResults(r)
		return fakeapi.TextReply("tried")
	})
	out, errOut, code := h.Run("-p", "LEAD-guard: go", "--permission-mode", "bypassPermissions")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if len(saw) != 5 {
		t.Fatalf("results: %q", saw)
	}
	for i, want := range []string{"ERROR:writing " + filepath.Join(h.Dir, "escape.txt") + " is not allowed",
		"ERROR:Command refused: ", "ERROR:Command refused: ", "", ""} {
		if want == "" && strings.HasPrefix(saw[i], "ERROR:") || !strings.HasPrefix(saw[i], want) {
			t.Errorf("result %d = %q, want it to start with %q", i, saw[i], want)
		}
	}
	if !strings.Contains(saw[4], "inside.txt\ninside2.txt") {
		t.Errorf("ls in the worktree: %q", saw[4])
	}
	for _, f := range []string{"escape.txt", "escape2.txt", "escape3.txt", "inside.txt"} {
		if _, err := os.Stat(filepath.Join(h.Dir, f)); err == nil {
			t.Errorf("%s was written into the main checkout", f)
		}
	}
	if !strings.Contains(leadSaw, `worktreeBranch="cohort/guarded-`) {
		t.Errorf("the lead's result does not name the kept worktree: %q", leadSaw)
	}
}

// TestIsolationWithoutRepositoryOrGit: isolation that cannot happen is an
// is_error result at spawn, and the agent never runs.
func TestIsolationWithoutRepositoryOrGit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		repo bool
		path string
		want string
	}{
		{"not a repository", false, "", "is not inside a git repository, so the agent cannot be isolated in a worktree"},
		{"git missing", true, "empty", "worktree: git not found: worktree isolation was requested but"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := clitest.NewConv()
			h := clitest.New(t, c.Policy)
			if tc.repo {
				clitest.GitRepo(t, h, map[string]string{"a.txt": "a\n"})
			}
			if tc.path != "" {
				h.Vars["PATH"] = t.TempDir()
			}
			var got string
			c.On("LEAD-err:", clitest.Calls(clitest.Use("Agent", map[string]any{"description": "cannot isolate", "isolation": "worktree",
				"run_in_background": true, "prompt": "NEVER: run"})), func(r *fakeapi.Request) fakeapi.Reply {
				got = clitest.ToolResults(r)[0]
				return fakeapi.TextReply("understood")
			})
			out, errOut, code := h.Run("-p", "LEAD-err: go", "--permission-mode", "bypassPermissions")
			if code != 0 {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
			}
			if !strings.HasPrefix(got, `ERROR:isolation: "worktree" was requested but is not possible, so the agent was not started`) ||
				!strings.Contains(got, tc.want) {
				t.Errorf("result = %q", got)
			}
			if len(clitest.ConvRequests(h.Srv, "NEVER:")) > 0 {
				t.Error("the agent ran unisolated")
			}
		})
	}
}

// TestStartupSweepRemovesOrphanedCleanWorktrees: a session's start-up
// sweep removes a clean worktree whose owner died, keeps one with changes,
// and leaves one a live process holds.
func TestStartupSweepRemovesOrphanedCleanWorktrees(t *testing.T) {
	t.Parallel()
	c := clitest.NewConv()
	h := clitest.New(t, c.Policy)
	clitest.GitRepo(t, h, map[string]string{"a.txt": "a\n"})
	head := h.Git("rev-parse", "HEAD")
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	reason := func(pid int) string {
		return fmt.Sprintf("cohort pid=%d session=old agent=x host=%s base=%s", pid, host, head)
	}
	for _, wt := range []struct {
		slug string
		pid  int
	}{{"orphan-clean", dead.Process.Pid}, {"orphan-dirty", dead.Process.Pid}, {"alive", os.Getpid()}} {
		h.Git("worktree", "add", "--quiet", "--lock", "--reason", reason(wt.pid),
			filepath.Join(h.Dir, ".cohort", "worktrees", wt.slug), "-b", "cohort/"+wt.slug)
	}
	h.Write(".cohort/worktrees/orphan-dirty/work.txt", "unsaved\n")
	c.On("LEAD-sweep:", func(*fakeapi.Request) fakeapi.Reply { return fakeapi.TextReply("hello") })
	out, errOut, code := h.Run("-p", "LEAD-sweep: hi", "--verbose")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	exists := func(slug string) bool {
		_, err := os.Stat(filepath.Join(h.Dir, ".cohort", "worktrees", slug))
		return err == nil
	}
	if exists("orphan-clean") || !exists("orphan-dirty") || !exists("alive") {
		t.Errorf("after the sweep: clean %v, dirty %v, alive %v", exists("orphan-clean"), exists("orphan-dirty"), exists("alive"))
	}
	if b := h.Git("for-each-ref", "--format=%(refname:short)", "refs/heads/cohort/"); b != "cohort/alive\ncohort/orphan-dirty" {
		t.Errorf("branches left: %q", b)
	}
	if !strings.Contains(errOut, "orphan-clean (cohort/orphan-clean): removed") {
		t.Errorf("--verbose does not report the removal:\n%s", errOut)
	}
}

// TestWorktreeSettings: symlinkDirectories from the project settings are
// linked into agents' worktrees; bad entries are warnings with file and
// line.
func TestWorktreeSettings(t *testing.T) {
	t.Parallel()
	c := clitest.NewConv()
	h := clitest.New(t, c.Policy)
	clitest.GitRepo(t, h, map[string]string{".gitignore": "deps/\n", "a.txt": "a\n"})
	h.Write("deps/lib.txt", "big dependency\n")
	h.Write(".cohort/settings.json", `{
  "worktree": {
    "symlinkDirectories": ["deps", "/abs", "../up"],
    "baseRef": "sideways"
  }
}
`)
	var saw string
	c.On("LEAD-set:", clitest.Calls(clitest.Use("Agent", map[string]any{"description": "uses deps", "isolation": "worktree",
		"prompt": "DEPS: read the dependency"})), clitest.Text("ok"))
	c.On("DEPS:", func(r *fakeapi.Request) fakeapi.Reply {
		return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Bash", map[string]any{"command": "cat deps/lib.txt && test -L deps && echo linked"})}}
	}, func(r *fakeapi.Request) fakeapi.Reply { saw = r.LastToolResultText(); return fakeapi.TextReply("read") })
	out, errOut, code := h.Run("-p", "LEAD-set: go", "--permission-mode", "bypassPermissions")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if saw != "big dependency\nlinked" {
		t.Errorf("the agent saw %q", saw)
	}
	settingsPath := filepath.Join(h.Dir, ".cohort", "settings.json")
	for _, want := range []string{
		settingsPath + `:3: worktree.symlinkDirectories: "/abs" is absolute`,
		settingsPath + `:3: worktree.symlinkDirectories: "../up" leaves the repository`,
		settingsPath + `:4: worktree.baseRef: "sideways" is not "head" or "fresh"`,
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

// TestLeadEntersAndExitsAWorktree: EnterWorktree moves the lead (Bash runs
// in the worktree, writes to the main checkout are refused), ExitWorktree
// keep leaves it in place and moves the lead back.
func TestLeadEntersAndExitsAWorktree(t *testing.T) {
	t.Parallel()
	var h *clitest.Harness
	var saw [][]string
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() > 0 {
			saw = append(saw, clitest.ToolResults(r))
		}
		steps := [][]fakeapi.Block{
			{clitest.Use("EnterWorktree", map[string]any{"name": "topic"})},
			{clitest.Use("Bash", map[string]any{"command": "pwd && echo work > work.txt"}),
				clitest.Use("Bash", map[string]any{"command": "echo no > " + filepath.Join(h.Dir, "main.txt")})},
			{clitest.Use("ExitWorktree", map[string]any{"action": "keep"})},
			{clitest.Use("Bash", map[string]any{"command": "pwd"})},
		}
		if r.Turn() < len(steps) {
			return fakeapi.Reply{Content: steps[r.Turn()]}
		}
		return fakeapi.TextReply("done")
	}
	h = clitest.New(t, policy)
	clitest.GitRepo(t, h, map[string]string{"a.txt": "a\n"})
	out, errOut, code := h.Run("-p", "LEAD-enter: work apart", "--permission-mode", "bypassPermissions")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	wt := filepath.Join(h.Dir, ".cohort", "worktrees", "topic")
	if len(saw) != 4 {
		t.Fatalf("results: %q", saw)
	}
	if !strings.HasPrefix(saw[0][0], "Created and entered the worktree "+wt+" on branch cohort/topic.") {
		t.Errorf("enter: %q", saw[0])
	}
	if saw[1][0] != wt || !strings.HasPrefix(saw[1][1], "ERROR:Command refused") {
		t.Errorf("in the worktree: %q", saw[1])
	}
	if !strings.Contains(saw[2][0], "stays in place on branch cohort/topic with these changes:") || !strings.Contains(saw[2][0], "work.txt") {
		t.Errorf("exit: %q", saw[2])
	}
	if saw[3][0] != h.Dir {
		t.Errorf("after exit the lead runs in %q", saw[3][0])
	}
	if _, err := os.Stat(filepath.Join(wt, "work.txt")); err != nil {
		t.Errorf("the kept worktree lost its file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(h.Dir, "main.txt")); err == nil {
		t.Error("the lead wrote into the main checkout from its worktree")
	}
}

// TestWorktreeHooksOverTheCLI: the settings' WorktreeCreate and
// WorktreeRemove hooks run around an isolated agent's worktree, and a
// WorktreeCreate hook that exits 2 refuses the isolation.
func TestWorktreeHooksOverTheCLI(t *testing.T) {
	t.Parallel()
	c := clitest.NewConv()
	h := clitest.New(t, c.Policy)
	clitest.GitRepo(t, h, map[string]string{"a.txt": "a\n"})
	log := filepath.Join(t.TempDir(), "hooks.log")
	// The hooks run in the sandbox: the log's folder is one they may write.
	hooks := map[string]any{"sandbox": map[string]any{"allowWrite": []string{filepath.Dir(log)}}, "hooks": map[string]any{
		"WorktreeCreate": []any{map[string]any{"hooks": []any{map[string]any{"type": "command",
			"command": `input=$(cat); echo "$input" >> ` + log + `; case "$input" in *refused*) echo "not this one" >&2; exit 2;; esac`}}}},
		"WorktreeRemove": []any{map[string]any{"hooks": []any{map[string]any{"type": "command",
			"command": `cat >> ` + log + `; echo >> ` + log}}}},
	}}
	h.Write(".cohort/settings.local.json", string(clitest.MustJSON(t, hooks)))
	var results []string
	c.On("LEAD-hooks:", clitest.Calls(
		clitest.Use("Agent", map[string]any{"description": "clean", "isolation": "worktree", "prompt": "CLEAN: nothing to do"}),
		clitest.Use("Agent", map[string]any{"description": "refused", "isolation": "worktree", "prompt": "REFUSED: never"}),
	), func(r *fakeapi.Request) fakeapi.Reply {
		results = clitest.ToolResults(r)
		return fakeapi.TextReply("ok")
	})
	c.On("CLEAN:", clitest.Text("nothing changed"))
	out, errOut, code := h.Run("-p", "LEAD-hooks: go", "--permission-mode", "bypassPermissions")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if len(results) != 2 || strings.HasPrefix(results[0], "ERROR:") ||
		!strings.HasPrefix(results[1], `ERROR:isolation: "worktree" was requested but is not possible`) || !strings.Contains(results[1], "not this one") {
		t.Fatalf("results: %q", results)
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var events []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line == "" {
			continue
		}
		var in struct {
			Event  string `json:"hook_event_name"`
			Branch string `json:"branch"`
			Path   string `json:"worktree_path"`
		}
		if err := clitest.JSONUnmarshal(line, &in); err != nil {
			t.Fatalf("hook input %q: %v", line, err)
		}
		if !strings.HasPrefix(in.Path, filepath.Join(h.Dir, ".cohort", "worktrees")+"/") {
			t.Errorf("%s hook got worktree_path %q", in.Event, in.Path)
		}
		events = append(events, in.Event+" "+strings.SplitN(strings.TrimPrefix(in.Branch, "cohort/"), "-", 2)[0])
	}
	sort.Strings(events)
	if d := cmp.Diff([]string{"WorktreeCreate clean", "WorktreeCreate refused", "WorktreeRemove clean"}, events); d != "" {
		t.Errorf("hook events (-want +got):\n%s", d)
	}
	if b := h.Git("for-each-ref", "refs/heads/cohort/"); b != "" {
		t.Errorf("branches left: %s", b)
	}
}
