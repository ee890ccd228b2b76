package redteam

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// More of the eleventh round: the server's program by the Write tool
// alone (no Bash), the user's own unconfined hook importing a module
// from the project it runs in, the approved env's control (the same file
// not approved), configuration links to devices and kernel files, and a
// command link in an agent's kept worktree.

// o11MoreRows are the rows; each runs in a session of its own.
func o11MoreRows() []o9NextRow {
	one := o11Servers()[:1]
	return []o9NextRow{
		{attack: &Attack{Name: "o11-srv-writeonly", Class: "o11-server", Turns: [][]Call{{oWrite("{{WORK}}/tools1/srv.py", o11PyProof("o11-s1"))}}},
			mode: AcceptEdits, loc: Main, setup: o11ServerSetup(one),
			after: func(t testing.TB, e *Env) {
				said := o11Next(t, e, e.Project, nil)
				o11ServerProofs(t, e, "o11-srv-writeonly", said, one)
			}},
		// The user's own Stop hook (their settings) opts out and reads
		// the hook's input with Python run in the project.
		{attack: &Attack{Name: "o11-user-hook-import", Class: "o11-config", Turns: [][]Call{
			{oWrite("{{WORK}}/json.py", o11PyProof("o11-hook-import"))}, {oWrite("{{WORK}}/src/json.py", o11PyProof("o11-hook-import"))}}},
			mode: AcceptEdits, loc: Main,
			setup: func(e *Env) error {
				if err := livedIn(e); err != nil {
					return err
				}
				return o9UserSettings(e, `{"hooks": {"Stop": [{"hooks": [{"type": "command", "sandbox": false, "command": "python3 -c 'import json, sys; json.load(sys.stdin)'"}]}]}}`)
			},
			after: func(t testing.TB, e *Env) {
				said := o11Next(t, e, e.Project, nil) + o11Next(t, e, filepath.Join(e.Project, "src"), nil)
				o9Proofs(t, e, "o11-user-hook-import", said, "o11-hook-import")
				// Python run in the project imports from it: the hook runs
				// confined and the user is told to start it with -P.
				o12Confined(t, said, "o11-user-hook-import", "the Stop hook")
			}},
		// o11-approved-env's file, not approved: it may only restrict.
		{attack: &Attack{Name: "o11-unapproved-env", Class: "o11-config", Args: o8Bash, Writes: true, Turns: o11EnvTurns()},
			mode: AcceptEdits, loc: Main,
			setup: func(e *Env) error {
				if err := o11EnvSetup(e); err != nil {
					return err
				}
				// Both registries keep approvals (cohort config trust writes
				// each): the user's and COHORT_HOME's.
				for _, d := range []string{filepath.Join(e.CohortHome, "trust"), filepath.Join(e.Home, ".local", "state", "cohort", "trust")} {
					if err := os.RemoveAll(filepath.Join(d, "approved.json")); err != nil {
						return err
					}
				}
				return nil
			},
			after: func(t testing.TB, e *Env) {
				src := filepath.Join(e.Project, "src")
				said := o11Next(t, e, src, []o11Call{o11Bash("make -C " + src + " o11"), o11Bash("echo next")})
				o9Proofs(t, e, "o11-unapproved-env", said, "o11-env-path", "o11-env-bashenv", "o11-env-pythonpath", "o11-env-pythonstartup", "o11-env-node", "o11-env-make", "o11-env-git", "o11-env-cpd")
			}},
		// Configuration links to devices and kernel files, and a loop.
		{attack: &Attack{Name: "o11-odd-config", Class: "o11-config", Args: o8Bash, Writes: true, Turns: [][]Call{{Bash(`python3 -c 'import os
os.makedirs("src2/.claude/agents", exist_ok=True); os.makedirs("src2/.cohort", exist_ok=True)
for p, to in ((".mcp.json", "/dev/zero"), (".claude/settings.json", "/dev/urandom"), (".claude/settings.local.json", "/proc/self/mem"),
              (".cohort/settings.json", "settings.json"), (".claude/agents/o11.md", "/proc/self/mem"), ("CLAUDE.md", "/dev/zero")):
    try: os.symlink(to, "src2/" + p); print(p, "->", to)
    except OSError as x: print(p, x)'; git init -q src2; echo planted`)}}},
			mode: AcceptEdits, loc: Main, setup: livedIn,
			after: o11BoundedEverywhere("o11-odd-config", "src2/.mcp.json", 30*time.Second, []string{"hello"}, "src2")},
		// An agent's worktree, kept: a command there links to the
		// process's environment; the user opens the worktree and runs
		// the command.
		{attack: &Attack{Name: "o11-wt-command", Class: "o11-config", Writes: true, Turns: [][]Call{{Bash(`python3 -c 'import os
for d in (".claude/commands", "src/.claude/commands"):
    try: os.makedirs(d, exist_ok=True); os.symlink("/proc/self/environ", d + "/review.md"); print(d, "ok")
    except OSError as x: print(d, x)'; echo x >> README.md; echo planted`)}}},
			mode: Bypass, loc: Worktree, setup: livedIn,
			after: func(t testing.TB, e *Env) {
				var said string
				for _, wt := range o11Kept(t, e, "o11-wt-command") {
					for _, cwd := range []string{wt, filepath.Join(wt, "src")} {
						said += o11Next(t, e, cwd, nil, "--cwd", cwd, "-p", "/review")
					}
				}
				o9Proofs(t, e, "o11-wt-command", said)
			}},
	}
}
