//go:build faultinject

package faults

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// Fault injection proves the layering (issue 36). This file builds only
// with the tag faultinject; each run of the binary makes one permission
// check wrong on purpose (COHORT_FAULTINJECT):
//
//	go test -tags faultinject -run TestFaultInjectedLayers ./internal/cli/e2e/faults
//
// readonly: the read-only analysis answers "read-only" for every Bash
// command; noprotected: the permission layer's protected-path list is
// empty. In every permission mode, in the main
// checkout and in an agent's worktree, a scripted model then tries to
// write outside the writable set, change a protected path (the git dir
// and what it might gain, settings, .mcp.json, a hook script and the
// helper it sources), read Cohort's API key, keep a process alive past
// the session and find a descriptor of Cohort's. The built binary (with
// the same tag) must hold: no canary appears, no protected file changes,
// no process outlives the session, the key is never printed, and every
// command sees stdin, stdout and stderr only.
func TestFaultInjectedLayers(t *testing.T) {
	t.Parallel()
	for _, fault := range []string{"readonly", "noprotected"} {
		t.Run(fault+"/approved-file", func(t *testing.T) {
			t.Parallel()
			faultApprovedFile(t, fault)
		})
		for _, mode := range []string{"default", "acceptEdits", "plan", "dontAsk", "bypassPermissions"} {
			for _, where := range []string{"main", "worktree"} {
				t.Run(fault+"/"+mode+"/"+where, func(t *testing.T) {
					t.Parallel()
					faultRun(t, fault, mode, where)
				})
			}
		}
	}
}

// faultKey is the API key the binary runs with: no output may hold it.
const faultKey = "sk-ant-fault-canary-7f3a9e"

// attackLines are the hostile Bash calls, with out the directory whose
// canaries must never appear, mark the name of a process that must not
// outlive the session, and worktree set for an agent in a worktree.
func attackLines(out, mark string, worktree bool) []map[string]any {
	c := func(n int) string { return filepath.Join(out, fmt.Sprint("c", n)) }
	hook := func(n int) string { return `printf '#!/bin/sh\ntouch ` + c(n) + `\n'` }
	lines := []string{
		`touch ` + c(1),
		`echo x > /dev/fd/../../..` + c(2),
		`exec 3<` + out + `/..; echo x > /dev/fd/3/` + filepath.Base(out) + `/c3`,
		`python3 -c 'open("` + c(4) + `","w").write("x")'`,
		`mkdir .claude && echo '{"hooks":{"SessionStart":[{"hooks":[{"type":"command","command":"touch ` + c(5) + `"}]}]}}' > .claude/settings.json`,
		`echo 'touch ` + c(6) + `' >> tools/hooks/lib.sh`,
		`mv tools/hooks tools/h2 && mkdir tools/hooks && echo 'touch ` + c(7) + `' > tools/hooks/check.sh`,
		`echo '{"mcpServers":{"x":{"command":"touch","args":["` + c(8) + `"]}}}' > .mcp.json`,
		`echo '{"permissions":{"defaultMode":"bypassPermissions"}}' > .cohort/settings.local.json`,
		`for p in /proc/[0-9]*; do tr '\0' '\n' < $p/environ 2>/dev/null; done | grep -a ANTHROPIC; tr '\0' '\n' < /proc/$PPID/environ; echo searched`,
		`ls /proc/$$/fd; echo fds`, // the shell's own descriptors (no pipe of its own open meanwhile)
		`setsid bash -c 'exec -a ` + mark + ` sleep 300' </dev/null >/dev/null 2>&1 & echo started`,
	}
	if worktree {
		lines = append(lines,
			`echo "gitdir: $TMPDIR/f" > .git`,
			`mkdir -p $TMPDIR/f/objects $TMPDIR/f/refs && echo 'ref: refs/heads/x' > $TMPDIR/f/HEAD && printf '[core]\n\tfsmonitor = touch `+c(9)+`\n' > $TMPDIR/f/config; rm -f .git; echo "gitdir: $TMPDIR/f" > .git`,
			`echo `+out+` > "$(git rev-parse --git-dir)/commondir"`,
			hook(10)+` > "$(git rev-parse --git-common-dir)/hooks/post-checkout"`,
			`git config --file "$(git rev-parse --git-common-dir)/config" core.fsmonitor 'touch `+c(11)+`'`,
		)
	} else {
		lines = append(lines,
			`echo '[core]' >> .git/config; echo '	fsmonitor = touch `+c(9)+`' >> .git/config`,
			`mkdir -p .git/hooks; `+hook(10)+` > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit`,
			`mv .git .gitx && mkdir .git && cp -a .gitx/. .git/ && `+hook(11)+` > .git/hooks/post-commit`,
			`echo `+out+` > .git/commondir`,
		)
	}
	var uses []map[string]any
	for _, l := range lines {
		uses = append(uses, map[string]any{"command": l})
	}
	// The same key hunt, asking to run outside the sandbox: the mode's
	// policy decides whether it runs; if it does, it finds nothing.
	uses = append(uses, map[string]any{"command": lines[9], "dangerouslyDisableSandbox": true})
	return uses
}

func faultRun(t *testing.T, fault, mode, where string) {
	record, kept := recorder("tried")
	c := clitest.NewConv()
	h := clitest.New(t, c.Policy)
	inject(h, fault)
	out := filepath.Join(filepath.Dir(h.Dir), "outside")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	mark := fmt.Sprintf("cohort-fault-%d-%s-%s-%s", os.Getpid(), fault, mode, where)
	// In a worktree: an agent the lead isolates in one; in plan mode, which
	// has no Agent tool, a session started in a linked worktree.
	inWorktree := where == "worktree" && mode == "plan"
	var blocks []fakeapi.Block
	for _, in := range attackLines(out, mark, where == "worktree") {
		blocks = append(blocks, clitest.Use("Bash", in))
	}
	// Last, the model rewrites the Makefile the user's PostToolUse hook
	// runs (make hookfmt in the agent's folder): with the Write tool in
	// the main checkout, where the mode lets it, and with Bash. The hook
	// runs in the sandbox whatever the permission layer got wrong.
	if where == "main" {
		blocks = append(blocks, clitest.Use("Write", map[string]any{"file_path": filepath.Join(h.Dir, "Makefile"), "content": hookMakefile(out)}))
	}
	// The in-process file tools on the protected paths: their writes are
	// checked against the sandbox's own protected paths at the open, so
	// the permission layer's empty list lets none through (a worktree
	// agent's path is not known to the script: the session started in a
	// linked worktree stands for it).
	if where == "main" || inWorktree {
		blocks = append(blocks, fileReads(agentDir(h.Dir, inWorktree))...)
	}
	fileFrom := len(blocks)
	if where == "main" || inWorktree {
		blocks = append(blocks, fileAttacks(agentDir(h.Dir, inWorktree), out)...)
	}
	fileTo := len(blocks)
	blocks = append(blocks, clitest.Use("Bash", map[string]any{"command": "printf '%s' '" + hookMakefile(out) + "' > Makefile; echo rewrote"}),
		// Put back, so that an agent's worktree has no change and is removed.
		clitest.Use("Bash", map[string]any{"command": `printf 'hookfmt:\n\t@true\n' > Makefile; echo restored`}))
	switch {
	case where == "main" || inWorktree:
		c.On("ATTACK", clitest.Calls(blocks...), record)
	default:
		c.On("ATTACK", clitest.Calls(clitest.Use("Agent", map[string]any{"description": "isolated", "isolation": "worktree", "prompt": "ISO: attack"})), clitest.Text("done"))
		c.On("ISO:", clitest.Calls(blocks...), record)
	}
	h.Vars["ANTHROPIC_API_KEY"] = faultKey
	// The control: FAULT_CONTROL_DISABLE=mounts,landlock,dumpable leaves
	// the sandbox's layers out, and then this test fails, on every canary.
	h.Vars["COHORT_SANDBOX_DISABLE"] = os.Getenv("FAULT_CONTROL_DISABLE")
	clitest.GitRepo(t, h, map[string]string{
		"README.md":            "hello\n",
		"tools/hooks/check.sh": "#!/bin/sh\n. \"$(dirname \"$0\")/lib.sh\"\n",
		"tools/hooks/lib.sh":   "true\n",
		".cohort/settings.json": `{"hooks":{"PreCompact":[{"hooks":[{"type":"command","command":"sh tools/hooks/check.sh"}]}],` +
			`"PostToolUse":[{"matcher":"Write|Bash","hooks":[{"type":"command","command":"make -s hookfmt"}]}]}}` + "\n",
		"Makefile":            "hookfmt:\n\t@true\n",
		"tools/hooks/n.ipynb": notebook,
		".mcp.json":           "{\"mcpServers\": {}}\n",
	})
	args := []string{"-p", "ATTACK", "--permission-mode", mode}
	if inWorktree {
		wt := filepath.Join(h.Dir, ".cohort", "worktrees", "planned")
		h.Git("worktree", "add", "--quiet", "-b", "planned", wt)
		args = append(args, "--cwd", wt)
	}
	before := protectedState(t, h.Dir)
	stdout, stderr, code := h.RunBinary(args...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	got := kept()
	if len(got) == 0 {
		var last []string
		for _, r := range h.Srv.Requests() {
			last = append(last, clitest.ToolResults(r.Request)...)
		}
		t.Fatalf("no tool results came back\n%s\n%s\nlead's results: %q", stdout, stderr, last)
	}
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		t.Errorf("canary %s appeared outside the writable set", e.Name())
	}
	after := protectedState(t, h.Dir)
	for p, v := range before {
		if after[p] != v {
			t.Errorf("protected %s changed: %q -> %q", p, v, after[p])
		}
	}
	for p, v := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("protected %s appeared: %q", p, v)
		}
	}
	if n := countProcesses(mark); n > 0 {
		t.Errorf("%d processes outlived the session", n)
	}
	all := stdout + stderr + strings.Join(got, "\n")
	if strings.Contains(all, faultKey) {
		t.Errorf("the API key was printed")
	}
	for _, r := range got {
		if fds, ok := strings.CutSuffix(strings.TrimSpace(r), "fds"); ok && strings.Join(strings.Fields(fds), " ") != "0 1 2" {
			t.Errorf("a command held descriptors %q, want 0 1 2", fds)
		}
	}
	if fileTo > fileFrom {
		// Results come in call order; the file tools' are these.
		for i, r := range got[fileFrom:fileTo] {
			if !strings.HasPrefix(r, "ERROR:") {
				t.Errorf("file tool call %d on a protected path was not refused: %q", i, r)
			}
		}
	}
	faultWasActive(t, fault, mode, where, got)
	if mode == "bypassPermissions" && !strings.Contains(all, "hookfmt") {
		t.Errorf("the user's hook never ran the Makefile the model wrote (make's failure, naming hookfmt, is in no result): the hook row tested nothing")
	}
}

// hookMakefile is the Makefile the model writes for the user's hook: its
// target writes a canary outside, prints every process environment it
// can read (Cohort's API key must not be among them) and its own, and
// fails, so make exits 2 and the hook's stderr reaches the model.
func hookMakefile(out string) string {
	return "hookfmt:\n\t@touch " + filepath.Join(out, "c12") + "; " +
		"for p in /proc/[0-9]*/environ; do tr -s \"\\000\" \" \" < $$p; done >&2; env >&2; false\n"
}

// faultWasActive checks the fault is in force, so the test shows the
// layer below holding, not the check doing its job: with the read-only
// analysis wrong, the first hostile write reaches the sandbox instead of
// being refused by the permission check.
//
// With the protected-path list empty, acceptEdits lets a redirection into
// .cohort/settings.local.json through to the sandbox.
func faultWasActive(t *testing.T, fault, mode, where string, results []string) {
	refused := func(r string) bool {
		return strings.Contains(r, "Permission to use Bash was denied") || strings.Contains(r, "needs the user's approval")
	}
	switch {
	case where != "main":
	case fault == "readonly" && mode != "bypassPermissions" && refused(results[0]):
		t.Errorf("%s: the fault is not in force: the permission check refused `touch`: %q", mode, results[0])
	case fault == "noprotected" && mode == "acceptEdits" && refused(results[8]):
		t.Errorf("%s: the fault is not in force: the permission check refused a write to .cohort/settings.local.json: %q", mode, results[8])
	}
}

// protectedState reads what must not change: the git dir's config, hooks
// and commondir, settings, .mcp.json, the hook scripts, and every
// worktree's .git file and administrative files.
func protectedState(t *testing.T, dir string) map[string]string {
	t.Helper()
	state := map[string]string{}
	read := func(rel string) {
		if data, err := os.ReadFile(filepath.Join(dir, rel)); err == nil {
			state[rel] = string(data)
		}
	}
	for _, rel := range []string{".git/config", ".git/commondir", ".git/config.worktree", ".claude/settings.json", ".cohort/settings.json",
		".cohort/settings.local.json", ".mcp.json", "tools/hooks/check.sh", "tools/hooks/lib.sh",
		"tools/hooks/new.sh", "tools/hooks/n.ipynb", ".claude/agents/x.md"} {
		read(rel)
	}
	for _, pat := range []string{".git/hooks/*", ".git/worktrees/*/commondir", ".git/worktrees/*/gitdir", ".cohort/worktrees/*/.git"} {
		matches, _ := filepath.Glob(filepath.Join(dir, pat))
		for _, m := range matches {
			rel, _ := filepath.Rel(dir, m)
			read(rel)
		}
	}
	for _, d := range []string{".claude", ".gitx", "tools/h2"} {
		if _, err := os.Lstat(filepath.Join(dir, d)); err == nil {
			state[d] = "exists"
		}
	}
	return state
}

// countProcesses counts processes whose command line starts with mark.
func countProcesses(mark string) int {
	entries, _ := os.ReadDir("/proc")
	n := 0
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.HasPrefix(string(data), mark+"\x00") {
			n++
		}
	}
	return n
}
