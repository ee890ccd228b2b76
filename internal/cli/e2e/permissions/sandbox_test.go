package permissions

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestSandboxHostileBash runs a scripted model's hostile Bash calls
// through the CLI in default and bypassPermissions mode: aimed outside the
// project they create nothing; aimed inside, in bypassPermissions, they
// work.
func TestSandboxHostileBash(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"default", "bypassPermissions"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			var h *clitest.Harness
			var mu sync.Mutex
			var results []string
			c := clitest.NewConv()
			c.On("attack outside", func(*fakeapi.Request) fakeapi.Reply {
				return fakeapi.Reply{Content: clitest.HostileCalls(filepath.Join(filepath.Dir(h.Dir), "outside"))}
			}, func(r *fakeapi.Request) fakeapi.Reply {
				mu.Lock()
				results = clitest.ToolResults(r)
				mu.Unlock()
				return fakeapi.TextReply("done")
			})
			c.On("work inside", func(*fakeapi.Request) fakeapi.Reply {
				return fakeapi.Reply{Content: clitest.HostileCalls(filepath.Join(h.Dir, "inside"))}
			}, clitest.Text("done"))
			h = clitest.New(t, c.Policy)
			outside := filepath.Join(filepath.Dir(h.Dir), "outside")
			if err := os.MkdirAll(outside, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(h.Dir, "inside"), 0o755); err != nil {
				t.Fatal(err)
			}
			out, errOut, code := h.Run("-p", "attack outside", "--permission-mode", mode)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
			}
			entries, _ := os.ReadDir(outside)
			for _, e := range entries {
				t.Errorf("%s mode: %s was created outside the project", mode, e.Name())
			}
			mu.Lock()
			if mode == "bypassPermissions" && !strings.Contains(strings.Join(results, "\n"), "blocked by the sandbox: "+outside) {
				t.Errorf("no result tells the model the sandbox blocked the write: %q", results)
			}
			mu.Unlock()
			if mode != "bypassPermissions" {
				return
			}
			out, errOut, code = h.Run("-p", "work inside", "--permission-mode", mode)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
			}
			for _, name := range clitest.HostileNames {
				if _, err := os.Stat(filepath.Join(h.Dir, "inside", name)); err != nil {
					t.Errorf("inside the project, the %s route did not work: %v", name, err)
				}
			}
		})
	}
}

// TestSandboxWorktreeAgentCannotWriteMainCheckout: an agent isolated in a
// worktree, in bypassPermissions, tries routes the worktree guard cannot
// read (python, a script, a cd through a variable); the main checkout
// stays as it was, and the agent's own work in the worktree lands.
func TestSandboxWorktreeAgentCannotWriteMainCheckout(t *testing.T) {
	t.Parallel()
	c := clitest.NewConv()
	h := clitest.New(t, c.Policy)
	clitest.GitRepo(t, h, map[string]string{"app.go": "package app\n"})
	var saw []string
	c.On("LEAD-iso:", clitest.Calls(clitest.Use("Agent", map[string]any{"description": "isolated", "isolation": "worktree",
		"prompt": "ISO: try to escape"})), clitest.Text("ok"))
	c.On("ISO:", func(r *fakeapi.Request) fakeapi.Reply {
		return fakeapi.Reply{Content: []fakeapi.Block{
			clitest.Use("Bash", map[string]any{"command": `python3 -c "import os; open(os.path.join('..','..','..','py-escape'),'w').write('x')"`}),
			clitest.Use("Bash", map[string]any{"command": `printf 'cd ../../.. && touch script-escape\n' > s.sh && chmod +x s.sh && ./s.sh`}),
			clitest.Use("Bash", map[string]any{"command": `up=..; cd $up/$up/$up && touch cd-escape`}),
			clitest.Use("Bash", map[string]any{"command": `python3 -c "open('../../../app.go','a').write('// pwned')"`}),
			clitest.Use("Bash", map[string]any{"command": `echo mine > mine.txt && git add mine.txt && git commit -qm 'agent work' && git log --oneline -1`}),
		}}
	}, func(r *fakeapi.Request) fakeapi.Reply {
		saw = clitest.ToolResults(r)
		return fakeapi.TextReply("tried")
	})
	out, errOut, code := h.Run("-p", "LEAD-iso: go", "--permission-mode", "bypassPermissions")
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	for _, f := range []string{"py-escape", "script-escape", "cd-escape"} {
		if _, err := os.Stat(filepath.Join(h.Dir, f)); err == nil {
			t.Errorf("%s was written into the main checkout", f)
		}
	}
	if got := h.Read("app.go"); got != "package app\n" {
		t.Errorf("app.go in the main checkout changed: %q", got)
	}
	if st := h.Git("status", "--porcelain"); st != "" {
		t.Errorf("the main checkout is not clean:\n%s", st)
	}
	if len(saw) != 5 || !strings.Contains(saw[4], "agent work") {
		t.Errorf("the commit in the worktree should work; results %q", saw)
	}
}

// TestSandboxSettingsProblems: a malformed sandbox block is reported with
// its file and line and the sandbox stays on; an allowWrite entry that
// does not exist is reported and skipped. After both, the session's
// commands still run, still confined: a write inside the project lands,
// the same write outside is blocked and the model is told so.
func TestSandboxSettingsProblems(t *testing.T) {
	t.Parallel()
	var h *clitest.Harness
	var mu sync.Mutex
	var results []string
	c := clitest.NewConv().On("write", func(*fakeapi.Request) fakeapi.Reply {
		return fakeapi.Reply{Content: []fakeapi.Block{
			clitest.Use("Bash", map[string]any{"command": "touch " + filepath.Join(filepath.Dir(h.Dir), "escaped")}),
			clitest.Use("Bash", map[string]any{"command": "touch inside && echo wrote-inside"}),
		}}
	}, func(r *fakeapi.Request) fakeapi.Reply {
		mu.Lock()
		results = clitest.ToolResults(r)
		mu.Unlock()
		return fakeapi.TextReply("done")
	})
	h = clitest.New(t, c.Policy)
	h.Write(".cohort/settings.json", "{\n  \"sandbox\": {\"enabled\": \"no\"}\n}\n")
	h.Write(".cohort/settings.local.json", `{"sandbox": {"allowWrite": ["/no/such/dir"]}}`)
	out, errOut, code := h.Run("-p", "write", "--permission-mode", "bypassPermissions")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	settings := filepath.Join(h.Dir, ".cohort", "settings.json")
	if !strings.Contains(errOut, settings+":2") || !strings.Contains(errOut, "the sandbox stays on") {
		t.Errorf("stderr does not report the malformed block with file and line:\n%s", errOut)
	}
	if !strings.Contains(errOut, "/no/such/dir does not exist") {
		t.Errorf("stderr does not report the missing allowWrite entry:\n%s", errOut)
	}
	if strings.Contains(errOut, "sandbox is off") || strings.Contains(errOut, "not available") {
		t.Errorf("the sandbox did not stay on:\n%s", errOut)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(h.Dir), "escaped")); err == nil {
		t.Errorf("the sandbox was off after a malformed block")
	}
	if _, err := os.Stat(filepath.Join(h.Dir, "inside")); err != nil {
		t.Errorf("a command writing inside the project did not run: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(results) != 2 {
		t.Fatalf("tool results %q, want two", results)
	}
	if !strings.Contains(results[0], "blocked by the sandbox: "+filepath.Dir(h.Dir)) {
		t.Errorf("the outside write's result does not say the sandbox blocked it: %q", results[0])
	}
	if !strings.Contains(results[1], "wrote-inside") {
		t.Errorf("the inside write's result: %q", results[1])
	}
}

// TestSandboxOff: --sandbox off runs Bash unconfined and says so.
func TestSandboxOff(t *testing.T) {
	t.Parallel()
	var h *clitest.Harness
	c := clitest.NewConv().On("write", func(*fakeapi.Request) fakeapi.Reply {
		return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Bash", map[string]any{"command": "touch " + filepath.Join(filepath.Dir(h.Dir), "unconfined")})}}
	}, clitest.Text("done"))
	h = clitest.New(t, c.Policy)
	out, errOut, code := h.Run("-p", "write", "--permission-mode", "bypassPermissions", "--sandbox", "off")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "the sandbox is off") {
		t.Errorf("stderr does not say the sandbox is off:\n%s", errOut)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(h.Dir), "unconfined")); err != nil {
		t.Errorf("with --sandbox off the write should happen: %v", err)
	}
}

// TestDangerouslyDisableSandbox: the flag follows Claude Code's
// sandbox.allowUnsandboxedCommands. Absent (issue 36: bypassPermissions
// skips prompts, never the sandbox), the call asks a person in every mode,
// so print mode refuses it even in bypassPermissions and with an allow
// rule for the command; true, as Claude Code, bypassPermissions runs it
// unsandboxed; false, the flag is ignored and the command runs sandboxed.
func TestDangerouslyDisableSandbox(t *testing.T) {
	t.Parallel()
	var h *clitest.Harness
	var mu sync.Mutex
	var results []string
	c := clitest.NewConv().On("escape", func(*fakeapi.Request) fakeapi.Reply {
		return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Bash", map[string]any{
			"command": "touch " + filepath.Join(filepath.Dir(h.Dir), "unsandboxed"), "dangerouslyDisableSandbox": true})}}
	}, func(r *fakeapi.Request) fakeapi.Reply {
		mu.Lock()
		results = append(results, clitest.ToolResults(r)...)
		mu.Unlock()
		return fakeapi.TextReply("done")
	})
	h = clitest.New(t, c.Policy)
	target := filepath.Join(filepath.Dir(h.Dir), "unsandboxed")
	run := func(args ...string) {
		t.Helper()
		if _, errOut, code := h.Run(append([]string{"-p", "escape"}, args...)...); code != 0 {
			t.Fatalf("exit %d\n%s", code, errOut)
		}
	}
	run("--allowedTools", "Bash(touch:*)")
	run("--permission-mode", "bypassPermissions")
	if _, err := os.Stat(target); err == nil {
		t.Fatalf("without sandbox.allowUnsandboxedCommands the unsandboxed call ran without asking")
	}
	h.Write(".cohort/settings.local.json", `{"sandbox": {"allowUnsandboxedCommands": false}}`)
	run("--permission-mode", "bypassPermissions")
	if _, err := os.Stat(target); err == nil {
		t.Fatalf("with allowUnsandboxedCommands false the command ran outside the sandbox")
	}
	h.Write(".cohort/settings.local.json", `{"sandbox": {"allowUnsandboxedCommands": true}}`)
	run("--permission-mode", "bypassPermissions")
	if _, err := os.Stat(target); err != nil {
		t.Errorf("with allowUnsandboxedCommands true, bypassPermissions: the unsandboxed call did not run: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(results) != 4 {
		t.Fatalf("results %q, want four", results)
	}
	for i, want := range []string{"outside the sandbox", "outside the sandbox", "blocked by the sandbox", ""} {
		if !strings.Contains(results[i], want) {
			t.Errorf("result %d %q lacks %q", i, results[i], want)
		}
	}
}

// TestDoctor prints what the sandbox enforces here.
func TestDoctor(t *testing.T) {
	t.Parallel()
	h := clitest.New(t, nil)
	out, errOut, code := h.Run("doctor")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"Bash sandbox for " + h.Dir, "Landlock ABI: ", "writable: " + h.Dir, "enforced: writes only in the writable directories"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
}

// TestSandboxNoLandlockFallback runs the real binary with a credential in
// its environment from the start, on a kernel without Landlock (emulated
// with COHORT_SANDBOX_DISABLE): Cohort says at start what is not enforced,
// and a command cannot read the credential from its parent's environment,
// the launcher's, which holds nothing of Cohort's. With the sandbox off
// the command cannot read it from Cohort's either (Cohort is non-dumpable
// and the command lacks the capabilities that would read it anyway); the
// control run, Cohort left dumpable, shows the same command does.
func TestSandboxNoLandlockFallback(t *testing.T) {
	t.Parallel()
	bin := clitest.BuildBinary(t)
	const secret = "sk-ant-e2e-fallback-secret"
	var mu sync.Mutex
	var results []string
	// The parent's environment, then the grandparent's.
	peek := `tr '\0' '\n' < /proc/$PPID/environ; tr '\0' ' ' < /proc/$PPID/cmdline; echo ---; gp=$(awk '{print $4}' /proc/$PPID/stat); tr '\0' '\n' < /proc/$gp/environ 2>/dev/null; echo end`
	c := clitest.NewConv().On("peek", clitest.Calls(clitest.Use("Bash", map[string]any{"command": peek})),
		func(r *fakeapi.Request) fakeapi.Reply {
			mu.Lock()
			results = append(results, clitest.ToolResults(r)...)
			mu.Unlock()
			return fakeapi.TextReply("done")
		})
	h := clitest.New(t, c.Policy)
	h.Vars["ANTHROPIC_API_KEY"] = secret
	h.Vars["COHORT_SANDBOX_DISABLE"] = "landlock"
	run := func(args ...string) string {
		cmd := exec.CommandContext(t.Context(), bin, append([]string{"--cwd", h.Dir, "-p", "peek", "--permission-mode", "bypassPermissions"}, args...)...)
		cmd.Env = h.Environ()
		var errb strings.Builder
		cmd.Stderr = &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("cohort: %v\n%s", err, errb.String())
		}
		return errb.String()
	}
	errOut := run()
	if !strings.Contains(errOut, "not enforced on this machine: writes outside the writable directories are not blocked") {
		t.Errorf("stderr does not say what is not enforced:\n%s", errOut)
	}
	run("--sandbox", "off")
	h.Vars["COHORT_SANDBOX_DISABLE"] = "landlock,dumpable"
	run("--sandbox", "off")
	mu.Lock()
	defer mu.Unlock()
	if len(results) != 3 {
		t.Fatalf("results %q", results)
	}
	if strings.Contains(results[0], secret) || !strings.Contains(results[0], "end") {
		t.Errorf("in the fallback, /proc/$PPID/environ shows the credential: %q", results[0])
	}
	// With the sandbox off the parent is the unconfined launcher, which
	// holds nothing of Cohort's either; the grandparent is Cohort, whose
	// environment the command cannot read (issue 36: before, it could).
	parent, grand, _ := strings.Cut(results[1], "---")
	if strings.Contains(parent, secret) || !strings.Contains(parent, "cohort-sandbox-launcher") {
		t.Errorf("with the sandbox off, the command's parent is not the launcher, or holds the credential: %q", parent)
	}
	if strings.Contains(grand, secret) || !strings.Contains(grand, "end") {
		t.Errorf("with the sandbox off, a command read the credential from Cohort's environment: %q", grand)
	}
	if _, grand, _ := strings.Cut(results[2], "---"); !strings.Contains(grand, secret) {
		t.Errorf("control: with Cohort left dumpable the grandparent's environment holds the credential, yet the command did not see it: %q", grand)
	}
}

// TestDoctorNoIsolation: on a machine with neither Landlock nor namespaces
// (emulated), cohort doctor names what a command can then do to Cohort:
// signal it, and (when Cohort runs as root, which a non-dumpable process
// does not keep out) read its environment. It runs the real binary: the
// fallback makes the process non-dumpable, which must not leak into the
// test process.
func TestDoctorNoIsolation(t *testing.T) {
	t.Parallel()
	bin := clitest.BuildBinary(t)
	h := clitest.New(t, nil)
	h.Vars["COHORT_SANDBOX_DISABLE"] = "landlock,namespaces"
	cmd := exec.CommandContext(t.Context(), bin, "--cwd", h.Dir, "doctor")
	cmd.Env = h.Environ()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("cohort doctor: %v\n%s", err, out)
	}
	wants := []string{"NOT enforced: signals are not blocked: commands can signal (stop, kill) Cohort",
		"NOT enforced: writes outside the writable directories are not blocked",
		"NOT enforced: commands can see every process on the machine in /proc"}
	if os.Geteuid() == 0 {
		wants = append(wants, "NOT enforced: Cohort's environment (/proc/PID/environ")
	} else {
		wants = append(wants, "enforced: Cohort's environment, memory and file descriptors are closed to commands")
	}
	for _, want := range wants {
		if !strings.Contains(string(out), want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
}

// TestSandboxBackgroundAndExcluded: run_in_background commands are sandboxed
// like foreground ones; sandbox.excludedCommands run outside.
func TestSandboxBackgroundAndExcluded(t *testing.T) {
	t.Parallel()
	var h *clitest.Harness
	c := clitest.NewConv().On("background", func(*fakeapi.Request) fakeapi.Reply {
		out := filepath.Dir(h.Dir)
		return fakeapi.Reply{Content: []fakeapi.Block{
			clitest.Use("Bash", map[string]any{"command": "touch ran-in-background; touch " + filepath.Join(out, "from-background"), "run_in_background": true}),
			clitest.Use("Bash", map[string]any{"command": "touch " + filepath.Join(out, "excluded")}),
		}}
	}, clitest.Text("started"), clitest.Text("done"), clitest.Text("done"), clitest.Text("done"))
	h = clitest.New(t, c.Policy)
	h.Write(".cohort/settings.json", `{"sandbox": {"excludedCommands": ["touch `+filepath.Join(filepath.Dir(h.Dir), "excluded")+`"]}}`)
	out, errOut, code := h.Run("-p", "background", "--permission-mode", "bypassPermissions")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(h.Dir, "ran-in-background")); err != nil {
		t.Fatalf("the background shell did not run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(h.Dir), "from-background")); err == nil {
		t.Errorf("a background shell wrote outside the project")
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(h.Dir), "excluded")); err != nil {
		t.Errorf("an excluded command should run outside the sandbox: %v", err)
	}
}

// TestSandboxReadDenyPatterns: Read deny rules that are patterns bind
// Bash too. A scripted model reads the denied files by routes the
// permission check lets through in bypassPermissions (a recursive grep,
// python, a script it wrote) and gets none of their contents. At start and
// in cohort doctor, Cohort names what it cannot hide.
func TestSandboxReadDenyPatterns(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var results []string
	c := clitest.NewConv().On("read", clitest.Calls(
		clitest.Use("Bash", map[string]any{"command": "grep -r s3cret . ; echo end"}),
		clitest.Use("Bash", map[string]any{"command": `python3 -c 'print(open("secrets/key").read(), open("sub/a.pem").read())' 2>&1 | tail -1; echo end`}),
		clitest.Use("Bash", map[string]any{"command": `printf '#!/bin/sh\ncat secrets/key sub/a.pem\n' > s.sh; chmod +x s.sh; ./s.sh; echo end`}),
	), func(r *fakeapi.Request) fakeapi.Reply {
		mu.Lock()
		results = clitest.ToolResults(r)
		mu.Unlock()
		return fakeapi.TextReply("done")
	})
	h := clitest.New(t, c.Policy)
	h.Write("secrets/key", "s3cret-key\n")
	h.Write("sub/a.pem", "s3cret-pem\n")
	h.Write("notes.txt", "s3cret-free notes\n")
	h.Write(".cohort/settings.json", `{"permissions": {"deny": ["Read(./secrets/**)", "Read(**/*.pem)", "Read(./later.key)"]}}`)
	out, errOut, code := h.Run("-p", "read", "--permission-mode", "bypassPermissions")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	mu.Lock()
	got := results
	mu.Unlock()
	if len(got) != 3 {
		t.Fatalf("tool results %q, want three", got)
	}
	for i, r := range got {
		if strings.Contains(r, "s3cret-key") || strings.Contains(r, "s3cret-pem") || !strings.Contains(r, "end") {
			t.Errorf("call %d read a denied file, or did not run: %q", i, r)
		}
	}
	if !strings.Contains(got[0], "s3cret-free notes") {
		t.Errorf("grep should still read the rest of the project: %q", got[0])
	}
	settings := filepath.Join(h.Dir, ".cohort", "settings.json")
	wants := []string{"Read(**/*.pem) (" + settings + ":1): what it matches now under " + h.Dir + " is hidden; files that match it later",
		"Read(./later.key) (" + settings + ":1): " + filepath.Join(h.Dir, "later.key") + " does not exist"}
	for _, want := range wants {
		if !strings.Contains(errOut, "not enforced on this machine: "+want) {
			t.Errorf("stderr at start does not say what is not enforced (%q):\n%s", want, errOut)
		}
	}
	doc, errOut, code := h.Run("doctor")
	if code != 0 {
		t.Fatalf("doctor: exit %d\n%s\n%s", code, doc, errOut)
	}
	for _, want := range append(wants, "enforced: Read deny rules: the 2 paths they cover are hidden") {
		if !strings.Contains(doc, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, doc)
		}
	}
	if !strings.Contains(doc, "NOT enforced: Read(**/*.pem)") {
		t.Errorf("doctor does not list the pattern as not enforced:\n%s", doc)
	}
}
