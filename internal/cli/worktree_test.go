package cli

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

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// gitRepo turns the harness's project directory into a git repository
// with one commit holding files, and gives the CLI a hermetic git
// environment (no global or system config, an identity, HOME elsewhere).
func gitRepo(t *testing.T, h *harness, files map[string]string) {
	t.Helper()
	for k, v := range map[string]string{
		"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com",
		"GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.com",
		"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.DevNull,
		"GIT_CEILING_DIRECTORIES": filepath.Dir(h.dir),
	} {
		h.vars[k] = v
	}
	h.git("init", "--quiet", "--initial-branch=main")
	for name, content := range files {
		h.write(name, content)
	}
	h.git("add", ".")
	h.git("commit", "--quiet", "-m", "start")
}

// git runs git in the project directory with the harness environment.
func (h *harness) git(args ...string) string {
	h.t.Helper()
	out, err := h.gitErr(args...)
	if err != nil {
		h.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (h *harness) gitErr(args ...string) (string, error) {
	cmd := exec.CommandContext(h.t.Context(), "git", args...)
	cmd.Dir, cmd.Env = h.dir, h.environ()
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

var systemCwd = regexp.MustCompile(`Working directory: (\S+)`)

// agentCwd is the working directory a request's system prompt states.
func agentCwd(r *fakeapi.Request) string {
	if m := systemCwd.FindStringSubmatch(r.SystemText()); m != nil {
		return m[1]
	}
	return ""
}

// worktreeNotices returns the worktree paths and branches named by the
// task notifications in msgs, by branch.
func worktreeNotices(msgs []fakeapi.Message) map[string]string {
	out := map[string]string{}
	for _, m := range msgs {
		for _, b := range m.Content {
			for _, blk := range noticeBlock.FindAllString(b.Text, -1) {
				if br := noticeField(blk, "worktreeBranch"); br != "" {
					out[br] = noticeField(blk, "worktreePath")
				}
			}
		}
	}
	return out
}

// commitCmd commits everything in the agent's worktree with an identity
// given on the command line (Bash runs with the test process's
// environment, not the harness's).
func commitCmd(msg string) string {
	return "git add -A && GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 git -c user.name=Agent -c user.email=agent@example.com -c commit.gpgsign=false -c core.hooksPath=/dev/null commit -q -m '" + msg + "'"
}

// TestTwoBackgroundAgentsEditOneFileInTheirWorktrees is issue 9's
// end-to-end test: two background agents with isolation "worktree" edit
// the same file differently at the same time; the main checkout is
// untouched, each branch holds its agent's edit, and both notifications
// name their kept worktree.
func TestTwoBackgroundAgentsEditOneFileInTheirWorktrees(t *testing.T) {
	t.Parallel()
	rt := &router{}
	h := newHarness(t, rt.policy)
	gitRepo(t, h, map[string]string{"shared.txt": "original\n"})
	together := newBarrier(2)
	var launches []fakeapi.Block
	for i := 1; i <= 2; i++ {
		launches = append(launches, use("Agent", map[string]any{
			"description": fmt.Sprintf("editor %d", i), "run_in_background": true, "isolation": "worktree",
			"prompt": fmt.Sprintf("WT-%d: change shared.txt", i)}))
	}
	rt.on("LEAD-wt:", func(r *fakeapi.Request) fakeapi.Reply {
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
		rt.on("WT-"+n+":", func(r *fakeapi.Request) fakeapi.Reply {
			file := filepath.Join(agentCwd(r), "shared.txt")
			switch r.Turn() {
			case 0:
				return fakeapi.Reply{Content: []fakeapi.Block{use("Read", map[string]any{"file_path": file})}}
			case 1:
				if !together.wait(r.Context()) {
					return fakeapi.TextReply("the editors did not run at the same time")
				}
				return fakeapi.Reply{Content: []fakeapi.Block{use("Edit", map[string]any{
					"file_path": file, "old_string": "original", "new_string": "edited by " + n})}}
			case 2:
				return fakeapi.Reply{Content: []fakeapi.Block{use("Bash", map[string]any{"command": commitCmd("editor " + n)})}}
			}
			return fakeapi.TextReply("editor " + n + ": " + r.LastToolResultText())
		})
	}
	out, errOut, code := h.run("-p", "LEAD-wt: edit in parallel", "--output-format", "stream-json", "--permission-mode", "bypassPermissions")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if got := h.read("shared.txt"); got != "original\n" {
		t.Errorf("main checkout's shared.txt = %q", got)
	}
	if st := h.git("status", "--porcelain"); st != "" {
		t.Errorf("main checkout is not clean:\n%s", st)
	}
	got := worktreeNotices(finalHistory(t, h.srv, "LEAD-wt:"))
	if len(got) != 2 {
		t.Fatalf("notifications name %d worktrees, want 2: %v", len(got), got)
	}
	var edits []string
	for branch, path := range got {
		if !strings.HasPrefix(branch, "cohort/editor-") || path != filepath.Join(h.dir, ".cohort", "worktrees", strings.TrimPrefix(branch, "cohort/")) {
			t.Errorf("worktree %s on %s", path, branch)
		}
		edits = append(edits, h.git("show", branch+":shared.txt"))
		if log := h.git("log", "--format=%s", "-1", branch); !strings.HasPrefix(log, "editor ") {
			t.Errorf("%s's last commit is %q", branch, log)
		}
	}
	sort.Strings(edits)
	if d := cmp.Diff([]string{"edited by 1", "edited by 2"}, edits); d != "" {
		t.Errorf("the branches' shared.txt (-want +got):\n%s", d)
	}
	if r := parseStream(t, out).result; r.IsError || r.Result != "seen 2" {
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
	var h *harness
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
					use("Write", map[string]any{"file_path": filepath.Join(dir[1], "fork.txt"), "content": "from the fork\n"}),
					use("Write", map[string]any{"file_path": filepath.Join(h.dir, "fork.txt"), "content": "escaped\n"}),
				}}
			}
			forkSaw = toolResults(r)
			return fakeapi.TextReply("Scope: wrote fork.txt in my worktree")
		}
		switch r.Turn() {
		case 0:
			return fakeapi.Reply{Content: []fakeapi.Block{use("Agent", map[string]any{
				"description": "isolated fork", "prompt": "FORK: write fork.txt", "isolation": "worktree"})}}
		case 1:
			leadReq = r
			return fakeapi.TextReply("forked")
		}
		return fakeapi.TextReply("noted " + fmt.Sprint(len(worktreeNotices(r.Messages))))
	}
	h = newHarness(t, policy)
	gitRepo(t, h, map[string]string{"README.md": "# project\n"})
	out, errOut, code := h.run("-p", "LEAD-fork: fork once", "--output-format", "json",
		"--permission-mode", "bypassPermissions", "--flag", "fork_subagent=on")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if forkReq == nil || leadReq == nil {
		t.Fatal("the fork or the lead's second turn never reached the fake")
	}
	if string(mustJSON(t, forkReq.System)) != string(mustJSON(t, leadReq.System)) {
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
	if _, err := os.Stat(filepath.Join(h.dir, "fork.txt")); err == nil {
		t.Fatal("the fork wrote into the main checkout")
	}
	// The fork's requests share the lead's first message; the lead's own
	// have no directive.
	var leadHist []fakeapi.Message
	for _, r := range convRequests(h.srv, "LEAD-fork:") {
		if !strings.Contains(string(mustJSON(t, r.Messages)), "Your directive:") && len(r.Messages) > len(leadHist) {
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
	if st := h.git("status", "--porcelain"); st != "" {
		t.Errorf("main checkout is not clean:\n%s", st)
	}
}

// TestIsolatedAgentCannotWriteTheMainCheckout: Write to an absolute path
// in the main checkout, and Bash after a cd into it, are refused; the same
// work inside the worktree goes through.
func TestIsolatedAgentCannotWriteTheMainCheckout(t *testing.T) {
	t.Parallel()
	c := newConv()
	h := newHarness(t, c.policy)
	gitRepo(t, h, map[string]string{"app.go": "package app\n"})
	var saw []string
	var leadSaw string
	c.on("LEAD-guard:", calls(use("Agent", map[string]any{"description": "guarded", "isolation": "worktree",
		"prompt": "GUARD: try to escape"})), func(r *fakeapi.Request) fakeapi.Reply {
		leadSaw = r.LastToolResultText()
		return fakeapi.TextReply("ok")
	})
	c.on("GUARD:", func(r *fakeapi.Request) fakeapi.Reply {
		wt := agentCwd(r)
		return fakeapi.Reply{Content: []fakeapi.Block{
			use("Write", map[string]any{"file_path": filepath.Join(h.dir, "escape.txt"), "content": "x\n"}),
			use("Bash", map[string]any{"command": "cd " + h.dir + " && touch escape2.txt"}),
			use("Bash", map[string]any{"command": "echo x > " + filepath.Join(h.dir, "escape3.txt")}),
			use("Write", map[string]any{"file_path": filepath.Join(wt, "inside.txt"), "content": "fine\n"}),
			use("Bash", map[string]any{"command": "touch inside2.txt && ls"}),
		}}
	}, func(r *fakeapi.Request) fakeapi.Reply {
		saw = toolResults(r)
		return fakeapi.TextReply("tried")
	})
	out, errOut, code := h.run("-p", "LEAD-guard: go", "--permission-mode", "bypassPermissions")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if len(saw) != 5 {
		t.Fatalf("results: %q", saw)
	}
	for i, want := range []string{"ERROR:writing " + filepath.Join(h.dir, "escape.txt") + " is not allowed",
		"ERROR:Command refused: ", "ERROR:Command refused: ", "", ""} {
		if want == "" && strings.HasPrefix(saw[i], "ERROR:") || !strings.HasPrefix(saw[i], want) {
			t.Errorf("result %d = %q, want it to start with %q", i, saw[i], want)
		}
	}
	if !strings.Contains(saw[4], "inside.txt\ninside2.txt") {
		t.Errorf("ls in the worktree: %q", saw[4])
	}
	for _, f := range []string{"escape.txt", "escape2.txt", "escape3.txt", "inside.txt"} {
		if _, err := os.Stat(filepath.Join(h.dir, f)); err == nil {
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
			c := newConv()
			h := newHarness(t, c.policy)
			if tc.repo {
				gitRepo(t, h, map[string]string{"a.txt": "a\n"})
			}
			if tc.path != "" {
				h.vars["PATH"] = t.TempDir()
			}
			var got string
			c.on("LEAD-err:", calls(use("Agent", map[string]any{"description": "cannot isolate", "isolation": "worktree",
				"run_in_background": true, "prompt": "NEVER: run"})), func(r *fakeapi.Request) fakeapi.Reply {
				got = toolResults(r)[0]
				return fakeapi.TextReply("understood")
			})
			out, errOut, code := h.run("-p", "LEAD-err: go", "--permission-mode", "bypassPermissions")
			if code != 0 {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
			}
			if !strings.HasPrefix(got, `ERROR:isolation: "worktree" was requested but is not possible, so the agent was not started`) ||
				!strings.Contains(got, tc.want) {
				t.Errorf("result = %q", got)
			}
			if len(convRequests(h.srv, "NEVER:")) > 0 {
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
	c := newConv()
	h := newHarness(t, c.policy)
	gitRepo(t, h, map[string]string{"a.txt": "a\n"})
	head := h.git("rev-parse", "HEAD")
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
		h.git("worktree", "add", "--quiet", "--lock", "--reason", reason(wt.pid),
			filepath.Join(h.dir, ".cohort", "worktrees", wt.slug), "-b", "cohort/"+wt.slug)
	}
	h.write(".cohort/worktrees/orphan-dirty/work.txt", "unsaved\n")
	c.on("LEAD-sweep:", func(*fakeapi.Request) fakeapi.Reply { return fakeapi.TextReply("hello") })
	out, errOut, code := h.run("-p", "LEAD-sweep: hi", "--verbose")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	exists := func(slug string) bool {
		_, err := os.Stat(filepath.Join(h.dir, ".cohort", "worktrees", slug))
		return err == nil
	}
	if exists("orphan-clean") || !exists("orphan-dirty") || !exists("alive") {
		t.Errorf("after the sweep: clean %v, dirty %v, alive %v", exists("orphan-clean"), exists("orphan-dirty"), exists("alive"))
	}
	if b := h.git("for-each-ref", "--format=%(refname:short)", "refs/heads/cohort/"); b != "cohort/alive\ncohort/orphan-dirty" {
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
	c := newConv()
	h := newHarness(t, c.policy)
	gitRepo(t, h, map[string]string{".gitignore": "deps/\n", "a.txt": "a\n"})
	h.write("deps/lib.txt", "big dependency\n")
	h.write(".cohort/settings.json", `{
  "worktree": {
    "symlinkDirectories": ["deps", "/abs", "../up"],
    "baseRef": "sideways"
  }
}
`)
	var saw string
	c.on("LEAD-set:", calls(use("Agent", map[string]any{"description": "uses deps", "isolation": "worktree",
		"prompt": "DEPS: read the dependency"})), text("ok"))
	c.on("DEPS:", func(r *fakeapi.Request) fakeapi.Reply {
		return fakeapi.Reply{Content: []fakeapi.Block{use("Bash", map[string]any{"command": "cat deps/lib.txt && test -L deps && echo linked"})}}
	}, func(r *fakeapi.Request) fakeapi.Reply { saw = r.LastToolResultText(); return fakeapi.TextReply("read") })
	out, errOut, code := h.run("-p", "LEAD-set: go", "--permission-mode", "bypassPermissions")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if saw != "big dependency\nlinked" {
		t.Errorf("the agent saw %q", saw)
	}
	settingsPath := filepath.Join(h.dir, ".cohort", "settings.json")
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
	var h *harness
	var saw [][]string
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() > 0 {
			saw = append(saw, toolResults(r))
		}
		steps := [][]fakeapi.Block{
			{use("EnterWorktree", map[string]any{"name": "topic"})},
			{use("Bash", map[string]any{"command": "pwd && echo work > work.txt"}),
				use("Bash", map[string]any{"command": "echo no > " + filepath.Join(h.dir, "main.txt")})},
			{use("ExitWorktree", map[string]any{"action": "keep"})},
			{use("Bash", map[string]any{"command": "pwd"})},
		}
		if r.Turn() < len(steps) {
			return fakeapi.Reply{Content: steps[r.Turn()]}
		}
		return fakeapi.TextReply("done")
	}
	h = newHarness(t, policy)
	gitRepo(t, h, map[string]string{"a.txt": "a\n"})
	out, errOut, code := h.run("-p", "LEAD-enter: work apart", "--permission-mode", "bypassPermissions")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	wt := filepath.Join(h.dir, ".cohort", "worktrees", "topic")
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
	if saw[3][0] != h.dir {
		t.Errorf("after exit the lead runs in %q", saw[3][0])
	}
	if _, err := os.Stat(filepath.Join(wt, "work.txt")); err != nil {
		t.Errorf("the kept worktree lost its file: %v", err)
	}
	if _, err := os.Stat(filepath.Join(h.dir, "main.txt")); err == nil {
		t.Error("the lead wrote into the main checkout from its worktree")
	}
}

// TestWorktreeHooksOverTheCLI: the settings' WorktreeCreate and
// WorktreeRemove hooks run around an isolated agent's worktree, and a
// WorktreeCreate hook that exits 2 refuses the isolation.
func TestWorktreeHooksOverTheCLI(t *testing.T) {
	t.Parallel()
	c := newConv()
	h := newHarness(t, c.policy)
	gitRepo(t, h, map[string]string{"a.txt": "a\n"})
	log := filepath.Join(t.TempDir(), "hooks.log")
	hooks := map[string]any{"hooks": map[string]any{
		"WorktreeCreate": []any{map[string]any{"hooks": []any{map[string]any{"type": "command",
			"command": `input=$(cat); echo "$input" >> ` + log + `; case "$input" in *refused*) echo "not this one" >&2; exit 2;; esac`}}}},
		"WorktreeRemove": []any{map[string]any{"hooks": []any{map[string]any{"type": "command",
			"command": `cat >> ` + log + `; echo >> ` + log}}}},
	}}
	h.write(".cohort/settings.local.json", string(mustJSON(t, hooks)))
	var results []string
	c.on("LEAD-hooks:", calls(
		use("Agent", map[string]any{"description": "clean", "isolation": "worktree", "prompt": "CLEAN: nothing to do"}),
		use("Agent", map[string]any{"description": "refused", "isolation": "worktree", "prompt": "REFUSED: never"}),
	), func(r *fakeapi.Request) fakeapi.Reply {
		results = toolResults(r)
		return fakeapi.TextReply("ok")
	})
	c.on("CLEAN:", text("nothing changed"))
	out, errOut, code := h.run("-p", "LEAD-hooks: go", "--permission-mode", "bypassPermissions")
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
		if err := jsonUnmarshal(line, &in); err != nil {
			t.Fatalf("hook input %q: %v", line, err)
		}
		if !strings.HasPrefix(in.Path, filepath.Join(h.dir, ".cohort", "worktrees")+"/") {
			t.Errorf("%s hook got worktree_path %q", in.Event, in.Path)
		}
		events = append(events, in.Event+" "+strings.SplitN(strings.TrimPrefix(in.Branch, "cohort/"), "-", 2)[0])
	}
	sort.Strings(events)
	if d := cmp.Diff([]string{"WorktreeCreate clean", "WorktreeCreate refused", "WorktreeRemove clean"}, events); d != "" {
		t.Errorf("hook events (-want +got):\n%s", d)
	}
	if b := h.git("for-each-ref", "refs/heads/cohort/"); b != "" {
		t.Errorf("branches left: %s", b)
	}
}
