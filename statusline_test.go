package cohort

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/configtrust"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// The statusLine and the unconfined MCP servers are programs the user
// configured that Cohort runs on files in the project (issue 36,
// invariant 2): the model, the attacker here, must not be able to rewrite
// their scripts, and the statusLine runs in the sandbox whatever the
// protection got wrong.

// lockedBuffer is a Stderr the tests read while the session writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// writeFile writes body to path, making its directory.
func writeFile(t *testing.T, path, body string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), mode); err != nil {
		t.Fatal(err)
	}
}

// canaryScript prints line and tries to write each canary (outside every
// writable tree of the session).
func canaryScript(line string, canaries ...string) string {
	out := "#!/bin/sh\necho '" + line + "'\n"
	for _, c := range canaries {
		out += "echo escaped > '" + c + "' 2>/dev/null\n"
	}
	return out + "exit 0\n"
}

// attackScript has the model (acceptEdits, Bash allowed by a rule) try to
// replace script: Write, Edit, a Bash redirection, and moving its folder
// aside to put another in its place.
func attackScript(e *env, marker, script string) {
	dir := filepath.Dir(script)
	calls := []fakeapi.Block{
		use("Write", map[string]any{"file_path": script, "content": "#!/bin/sh\necho pwned > /tmp/x\n"}),
		use("Edit", map[string]any{"file_path": script, "old_string": "exit 0", "new_string": "echo pwned"}),
		use("Bash", map[string]any{"command": "printf 'echo pwned\\n' > '" + script + "'", "description": "rewrite"}),
		use("Bash", map[string]any{"command": "mv '" + dir + "' '" + dir + ".old' && mkdir '" + dir + "' && printf 'echo pwned\\n' > '" + script + "'", "description": "swap"}),
	}
	e.rt.on(marker, func(r *fakeapi.Request) fakeapi.Reply {
		if t := r.Turn(); t < len(calls) {
			return fakeapi.Reply{Content: []fakeapi.Block{calls[t]}}
		}
		return fakeapi.TextReply("tried")
	})
}

// assertUnchanged fails when script no longer holds want.
func assertUnchanged(t *testing.T, script, want string) {
	t.Helper()
	got, err := os.ReadFile(script)
	if err != nil || string(got) != want {
		t.Errorf("%s = %q, %v after the model's attempts; want it unchanged", script, got, err)
	}
	if _, err := os.Stat(filepath.Dir(script) + ".old"); err == nil {
		t.Errorf("the model moved %s aside", filepath.Dir(script))
	}
}

// runStatus runs the session's statusLine and returns its output.
func runStatus(t *testing.T, s *Session) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	out, err := s.RunStatusLine(ctx, []byte(`{"session_id":"x"}`))
	if err != nil {
		t.Fatalf("RunStatusLine: %v (output %q)", err, out)
	}
	return string(out)
}

func absent(t *testing.T, canary, why string) {
	t.Helper()
	if _, err := os.Stat(canary); err == nil {
		t.Errorf("%s: the canary %s was written", why, canary)
	}
}

// TestStatusLineScriptProtectedAndConfined: the project settings' statusLine
// names ./scripts/status.sh. The model cannot rewrite it (Write, Edit,
// Bash, renaming its folder), and the statusLine itself runs in the
// sandbox: a script that writes outside the project is refused, also when
// the script changed anyway (the protection wrong).
func TestStatusLineScriptProtectedAndConfined(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	canary := filepath.Join(filepath.Dir(e.dir), "canary")
	script := filepath.Join(e.dir, "scripts", "status.sh")
	body := canaryScript("status ok", canary)
	writeFile(t, script, body, 0o755)
	writeFile(t, filepath.Join(e.dir, ".claude", "settings.json"), `{"statusLine": {"type": "command", "command": "./scripts/status.sh"}}`, 0o644)
	attackScript(e, "rewrite the status line", script)
	cfg := e.config()
	cfg.Sandbox, cfg.PermissionMode, cfg.AllowedTools = "on", "acceptEdits", []string{"Bash"}
	s := e.open(cfg)
	collect(t, s, "rewrite the status line")
	assertUnchanged(t, script, body)

	if out := runStatus(t, s); !strings.Contains(out, "status ok") {
		t.Errorf("statusLine printed %q, want its line", out)
	}
	absent(t, canary, "the statusLine ran unconfined")
	// The protection wrong: the script changed after all. The sandbox
	// still confines what it runs.
	writeFile(t, script, canaryScript("changed", canary, filepath.Join(e.home, "canary")), 0o755)
	if out := runStatus(t, s); !strings.Contains(out, "changed") {
		t.Errorf("statusLine printed %q, want the changed script's line", out)
	}
	absent(t, canary, "a rewritten statusLine script ran unconfined")
	absent(t, filepath.Join(e.home, "canary"), "a rewritten statusLine script wrote the home")
}

// TestStatusLineOptOut: "sandbox": false on the statusLine is honoured in
// the user's settings for a script outside the project (it runs with the
// user's rights: the canary is written, which shows the test can tell),
// and not in a subfolder's settings obeyed only because a person approved
// them (cohort config trust), nor for a script in the project, however
// deep (hook.Judge): those run confined, and the user is told why.
func TestStatusLineOptOut(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		command    string
		approved   bool
		unconfined bool
		notice     string
	}{
		{"user settings", "sh OUT/status.sh", false, true, "runs outside the sandbox"},
		{"approved subfolder", "sh OUT/status.sh", true, false, "is not honoured in a settings file that lies where agents' commands can write"},
		// What it is started with lies where agents write, or it may load
		// code from its working directory (hook.Judge): a script in a
		// project folder or at its top, Python importing from the cwd.
		{"script in a project folder", "sh tools/status.sh", false, false, `has "sandbox": false but runs in the sandbox: it names`},
		{"script at the top", "sh top.sh", false, false, `has "sandbox": false but runs in the sandbox: it names`},
		{"python -c in the project", `python3 -c "import subprocess; subprocess.run(['sh', 'tools/status.sh'])"`, false, false, "(add -P)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			if err := os.Mkdir(filepath.Join(e.dir, ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
			canary := filepath.Join(filepath.Dir(e.dir), "canary")
			sub := filepath.Join(e.dir, "src")
			script := filepath.Join(sub, "tools", "status.sh")
			writeFile(t, script, canaryScript("status ok", canary), 0o755)
			writeFile(t, filepath.Join(sub, "top.sh"), canaryScript("status ok", canary), 0o755)
			out := filepath.Join(filepath.Dir(e.dir), "usertools") // the user's own, outside the project
			writeFile(t, filepath.Join(out, "status.sh"), canaryScript("status ok", canary), 0o755)
			command := strings.ReplaceAll(tc.command, "OUT", out)
			settingsBody := `{"statusLine": {"type": "command", "command": ` + strconv.Quote(command) + `, "sandbox": false}}`
			file := filepath.Join(e.home, ".claude", "settings.json")
			if tc.approved {
				file = filepath.Join(sub, ".claude", "settings.json")
				chome := configtrust.At(e.cohortHome(), func(k string) string { return e.vars[k] })
				if err := configtrust.Record(t.Context(), chome, []configtrust.Root{{Path: e.dir, Frozen: true}}, time.Now()); err != nil {
					t.Fatal(err)
				}
				if err := configtrust.Approve(t.Context(), chome, file, []byte(settingsBody), time.Now()); err != nil {
					t.Fatal(err)
				}
			}
			writeFile(t, file, settingsBody, 0o644)
			var stderr lockedBuffer
			cfg := e.config()
			cfg.Dir, cfg.Sandbox, cfg.Stderr = sub, "on", &stderr
			s := e.open(cfg)
			if got := s.StatusLine(); got != command {
				t.Fatalf("StatusLine = %q; the settings file was not obeyed (stderr %s)", got, stderr.String())
			}
			if !strings.Contains(stderr.String(), tc.notice) {
				t.Errorf("stderr at the start = %q, want the notice %q", stderr.String(), tc.notice)
			}
			if out := runStatus(t, s); !strings.Contains(out, "status ok") {
				t.Errorf("statusLine printed %q, want its line", out)
			}
			_, err := os.Stat(canary)
			if tc.unconfined && err != nil {
				t.Errorf("the honoured opt-out did not run unconfined: %v", err)
			}
			if !tc.unconfined && err == nil {
				t.Error("a statusLine whose opt-out is not honoured ran unconfined: the canary was written")
			}
		})
	}
}

// TestUnconfinedMCPServerInTheProjectConfined: a user-scope stdio server
// with "sandbox": false runs `sh tools/server.sh` from the project. Since
// session 13 (hook.Judge) a script in the project confines its server
// whatever protects the file, so the server runs in the sandbox and the
// user is told so at the start; the model's rewrites (the file is still
// protected, its folder no longer) gain nothing unconfined.
func TestUnconfinedMCPServerInTheProjectConfined(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	script := filepath.Join(e.dir, "tools", "server.sh")
	const body = "#!/bin/sh\nexit 0\n"
	writeFile(t, script, body, 0o755)
	writeFile(t, filepath.Join(e.home, ".claude", "settings.json"),
		`{"mcpServers": {"local": {"command": "sh", "args": ["tools/server.sh"], "sandbox": false}}}`, 0o644)
	attackScript(e, "rewrite the server", script)
	var stderr lockedBuffer
	cfg := e.config()
	cfg.Sandbox, cfg.PermissionMode, cfg.AllowedTools, cfg.Stderr = "on", "acceptEdits", []string{"Bash"}, &stderr
	s := e.open(cfg)
	collect(t, s, "rewrite the server")
	if want := `MCP server "local"`; !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), `has "sandbox": false but runs in the sandbox`) {
		t.Errorf("stderr at the start = %q, want the notice that %s runs in the sandbox", stderr.String(), want)
	}
}

// The --permission-prompt-command program runs outside the sandbox and
// answers the model's permission prompts: its script is protected as a
// hook's (file tools and sandbox), or the model would rewrite its own
// approver. The approver here answers nothing, so every ask is a deny.
func TestPermissionPromptCommandScriptProtected(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	script := filepath.Join(e.dir, "tools", "approve.sh")
	const body = "#!/bin/sh\nexit 0\n"
	writeFile(t, script, body, 0o755)
	attackScript(e, "rewrite the approver", script)
	cfg := e.config()
	cfg.Sandbox, cfg.PermissionMode, cfg.AllowedTools = "on", "acceptEdits", []string{"Bash"}
	cfg.PermissionPromptCommand = "sh tools/approve.sh"
	s := e.open(cfg)
	collect(t, s, "rewrite the approver")
	assertUnchanged(t, script, body)
}

// A hook script at the top of the project protects itself, not the whole
// project: in acceptEdits the model writes its files beside it without a
// prompt (print mode would refuse every one), and still cannot change
// the script, by file tools or commands.
func TestHookScriptAtTheTopProtectsOnlyItself(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	script := filepath.Join(e.dir, "check.sh")
	const body = "#!/bin/sh\nexit 0\n"
	writeFile(t, script, body, 0o755)
	writeFile(t, filepath.Join(e.home, ".claude", "settings.json"),
		`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "sh check.sh"}]}]}}`, 0o644)
	notes := filepath.Join(e.dir, "notes.txt")
	calls := []fakeapi.Block{
		use("Write", map[string]any{"file_path": notes, "content": "mine\n"}),
		use("Write", map[string]any{"file_path": script, "content": "#!/bin/sh\necho pwned\n"}),
		use("Bash", map[string]any{"command": "printf 'echo pwned\\n' > '" + script + "'", "description": "rewrite"}),
	}
	e.rt.on("write beside the hook", func(r *fakeapi.Request) fakeapi.Reply {
		if t := r.Turn(); t < len(calls) {
			return fakeapi.Reply{Content: []fakeapi.Block{calls[t]}}
		}
		return fakeapi.TextReply("tried")
	})
	cfg := e.config()
	cfg.Sandbox, cfg.PermissionMode, cfg.AllowedTools = "on", "acceptEdits", []string{"Bash"}
	collect(t, e.open(cfg), "write beside the hook")
	if got, err := os.ReadFile(notes); err != nil || string(got) != "mine\n" {
		t.Errorf("%s = %q, %v: a write beside a hook script at the top was refused", notes, got, err)
	}
	assertUnchanged(t, script, body)
}
