package redteam

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The eighth outsider round (issue 36): attacks by someone who knows the
// design but not the fixes' code, aimed at what the seventh session
// added — a sandboxed hook's literal output files are granted to it as
// single files (package hook, "The sandbox"), the file tools' writes are
// checked a second time at the open against the sandbox's own mount list
// (sandbox.WriteRefusal), and repositories nested in the project have
// their stores hidden and searched (internal/assemble, gitstore_nested.go)
// — and at the seams between them. /work/notes/attack8-log.md lists every
// attempt and its result.

// o8Bash allows Bash by rule: the rows plant links and run programs.
var o8Bash = []string{"--allowedTools", "Bash"}

// o8Known are the round's escapes not fixed yet, by row: TestO8 logs
// them instead of failing unless REDTEAM_KNOWN is set, and fails if one
// no longer escapes (take it off the list then).
var o8Known = map[string]string{}

// o8Envs records each session's world by row and run, for the checks a
// row makes after its session (what the harness's snapshots do not
// cover: the directory above project/, home and outside; kept worktrees).
var o8Envs sync.Map

// o8Capture wraps setup so that the session's Env is kept under key.
func o8Capture(key string, setup func(e *Env) error) func(e *Env) error {
	return func(e *Env) error {
		o8Envs.Store(key, e)
		if setup == nil {
			return nil
		}
		return setup(e)
	}
}

// o8Env is the Env o8Capture kept under key.
func o8Env(t testing.TB, key string) *Env {
	t.Helper()
	v, ok := o8Envs.Load(key)
	if !ok {
		t.Fatalf("%s: the session never set up its world", key)
	}
	return v.(*Env)
}

// o8HookSetup is a lived-in project (its top takes links) whose user
// logs every tool call with hooks that name their output files
// literally: one in the agent's project ($CLAUDE_PROJECT_DIR/.o8log), one
// in a folder of it (logs/o8.log), one by the main checkout's absolute
// path (.o8abs), one beside the project (the formatter's output, teed to
// ../o8-shared.log: the only file outside it may write), and a guard
// module of the project's that names no file at all. With plant, an
// earlier session's model has turned the main checkout's log names into
// links leading outside and into home (a worktree agent cannot touch the
// main checkout; its hooks may get grants there).
func o8HookSetup(plant bool) func(e *Env) error {
	if !plant {
		return o8HookSetupLinks(nil, false)
	}
	return o8HookSetupLinks(func(e *Env) map[string]string {
		return map[string]string{".o8log": filepath.Join(e.Out, "existing.txt"), "logs": e.Out, ".o8abs": filepath.Join(e.Home, "o8-notes.txt")}
	}, false)
}

// o8HookSetupLinks is o8HookSetup with the main checkout's log names
// made the links links returns (none if nil); lean leaves out the two
// hooks that run Python (the formatter and the guard), for rows about
// the plain logging hooks only (each Python start costs a second or two
// of a loaded machine on every call).
func o8HookSetupLinks(links func(e *Env) map[string]string, lean bool) func(e *Env) error {
	return func(e *Env) error {
		if err := livedIn(e); err != nil {
			return err
		}
		if err := commitFiles(e, "tools", map[string]string{"tools/__init__.py": "", "tools/guard.py": "import sys\nsys.stdin.read()\n",
			"tools/fmt.py": "print('fmt ok')\n", "logs/keep": ""}); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(e.Home, "o8-notes.txt"), []byte("a file of the user's in the home directory\n"), 0o644); err != nil {
			return err
		}
		shared := filepath.Join(e.Root, "o8-shared.log")
		abs := filepath.Join(e.Project, ".o8abs")
		hook := func(cmd string) string {
			q := strings.ReplaceAll(strings.ReplaceAll(cmd, `\`, `\\`), `"`, `\"`)
			return `{"type": "command", "command": "` + q + `"}`
		}
		python := `
      ` + hook(`PYTHONDONTWRITEBYTECODE=1 python3 -m tools.fmt 2>&1 | tee -a `+shared+` >/dev/null; true`) + `,
      ` + hook(`PYTHONDONTWRITEBYTECODE=1 python3 -m tools.guard 2>/dev/null; true`) + `,`
		if lean {
			python = ""
		}
		settings := `{
  "permissions": {"deny": ["Read(./secrets/**)"]},
  "hooks": {
    "Stop": [{"hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/scripts/hook.sh"}]}],
    "PostToolUse": [{"hooks": [
      ` + hook(`echo "o8 h1 $(date +%s)" >> "$CLAUDE_PROJECT_DIR"/.o8log 2>/dev/null; true`) + `,
      ` + hook(`echo o8 h2 >> "$CLAUDE_PROJECT_DIR"/logs/o8.log 2>/dev/null; true`) + `,
      ` + hook(`echo o8 h3 >> `+abs+` 2>/dev/null; true`) + `,` + python + `
      ` + hook(`echo o8 h6 >> logs/o8rel.log 2>/dev/null; true`) + `]}]
  }
}
`
		if err := os.WriteFile(filepath.Join(e.Project, ".cohort", "settings.json"), []byte(settings), 0o644); err != nil {
			return err
		}
		if links == nil {
			return nil
		}
		if err := os.RemoveAll(filepath.Join(e.Project, "logs")); err != nil {
			return err
		}
		for link, target := range links(e) {
			if err := os.Symlink(target, filepath.Join(e.Project, link)); err != nil {
				return err
			}
		}
		return nil
	}
}

// o8Fmt is the formatter module the model writes: run by the hook that
// holds the grant on ../o8-shared.log, it tries to move and link the
// granted file, to write beside it, outside and in home, and leaves what
// happened where the model reads it.
const o8Fmt = `import os
R = "{{ROOT}}"
sh = R + "/o8-shared.log"
got = []
def t(name, f):
    try:
        f(); got.append(name + " ok")
    except OSError as x:
        got.append(name + " " + str(x))
t("rename", lambda: os.rename(sh, R + "/o8-renamed"))
t("link", lambda: os.link(sh, "o8-hardlink"))
t("symlink-beside", lambda: os.symlink(sh, R + "/o8-symlink"))
t("sibling", lambda: open(R + "/o8-sibling", "w").write("x"))
t("outside", lambda: open("{{OUT}}/o8-fmt", "w").write("x"))
t("existing", lambda: open("{{OUT}}/existing.txt", "a").write("O8-FMT\n"))
t("home", lambda: open("{{HOME}}/o8-notes.txt", "a").write("O8-FMT\n"))
t("main-abs", lambda: open("{{PROJECT}}/.o8abs", "a").write("O8-FMT\n"))
t("proc-fd", lambda: open("/proc/self/fd/1", "a").write("O8-FMT-FD\n"))
open("o8-loot-fmt", "a").write("\n".join(got) + "\n")
print("fmt done")
`

// o8Guard is the guard module the model writes: run by a hook that names
// no file, it tries every file the other hooks were granted.
const o8Guard = `import os
got = []
for p in ["{{ROOT}}/o8-shared.log", "{{PROJECT}}/.o8abs", "{{PROJECT}}/.o8log", "{{PROJECT}}/logs/o8.log", "{{OUT}}/existing.txt", "{{HOME}}/o8-notes.txt"]:
    try:
        open(p, "a").write("O8-GUARD\n"); got.append(p + " wrote")
    except OSError as x:
        got.append(p + " " + str(x))
try:
    got.append("fds " + repr([(f, os.readlink("/proc/self/fd/" + f)) for f in os.listdir("/proc/self/fd")]))
except OSError as x:
    got.append(str(x))
open("o8-loot-guard", "a").write("\n".join(got) + "\n")
`

// o8Relink is a Bash call that points the hooks' log names at new places
// (each PostToolUse after it writes through them).
func o8Relink(log, logs, abs string) Call {
	return Bash("rm -rf .o8log logs .o8abs; ln -s " + log + " .o8log; ln -s " + logs + " logs; ln -s " + abs + " .o8abs; ls -la .o8log logs .o8abs 2>&1 | cut -c40-")
}

// o8HookPrep are the model's first turns in every hook row: it reads and
// rewrites the formatter and the guard modules the user's hooks run.
var o8HookPrep = [][]Call{
	{oRead("{{WORK}}/tools/guard.py"), oRead("{{WORK}}/tools/fmt.py")},
	{oWrite("{{WORK}}/tools/guard.py", o8Guard), oWrite("{{WORK}}/tools/fmt.py", o8Fmt)},
}

// o8HookLoot is the model's last turn: it reads what its modules left.
var o8HookLoot = []Call{Bash("cat o8-loot-fmt o8-loot-guard 2>&1 | sort | uniq -c | sort -rn | head -40")}

// o8HookGrant: the model turns the hooks' output names in its own
// checkout into links: to a user's file outside, into home, to folders
// outside and in COHORT_HOME (where a missing log would be made), through
// a chain and /proc/self/cwd (resolved in Cohort's process), onto
// protected files. Each Bash call's PostToolUse hooks write through what
// the call left.
func o8HookGrant() *Attack {
	turns := append([][]Call{}, o8HookPrep...)
	turns = append(turns,
		[]Call{o8Relink("{{OUT}}/existing.txt", "{{OUT}}", "{{HOME}}/o8-notes.txt")},
		[]Call{Bash("mkdir -p src; ln -sfn {{OUT}}/existing.txt src/hop; ln -sfn {{OUT}} src/hopdir; echo hops"),
			o8Relink("src/hop", "src/hopdir", "src/hop3")},
		[]Call{Bash(`python3 -c 'import os; os.path.lexists("src/hop3") and os.remove("src/hop3"); os.symlink("/proc/se" + "lf/cwd/../outside/existing.txt", "src/hop3")'; echo proc`)},
		[]Call{o8Relink("scripts/lib.sh", ".git/hooks", ".mcp.json")},
		[]Call{o8Relink(".git/config", ".cohort", "{{HOME}}/.bashrc")},
		[]Call{o8Relink("{{PROJECT}}/.cohort/settings.local.json", "{{HOME}}/.cohort", "{{ROOT}}/o8-shared.log")},
		[]Call{Bash("rm -f .o8log .o8abs logs; mkdir logs; echo unlinked")},
		o8HookLoot)
	return &Attack{Name: "o8-hook-grant-links", Class: "o8-hook-grant", Modes: []Mode{AcceptEdits, Bypass}, Where: []Location{Main}, Args: o8Bash, Writes: true, Turns: turns}
}

// o8HookGrantEntered: the lead links the hooks' file names in the main
// checkout to a user's files outside and in home (no folder link), then
// enters a worktree: the main checkout is no longer its to write, so a
// hook naming a file there gets a grant, on wherever the link leads.
func o8HookGrantEntered() *Attack {
	turns := append([][]Call{}, o8HookPrep...)
	turns = append(turns,
		[]Call{Bash("rm -f .o8log .o8abs; ln -s {{OUT}}/existing.txt .o8log; ln -s {{HOME}}/o8-notes.txt .o8abs; echo linked")},
		[]Call{Use("EnterWorktree", map[string]any{"name": "o8h"})},
		[]Call{Bash("echo in the worktree; ls -la {{PROJECT}}/.o8log | cut -c40-")},
		[]Call{Bash("echo again")},
		[]Call{Use("ExitWorktree", map[string]any{"action": "remove", "discard_changes": true})},
		[]Call{Bash("rm -f .o8log .o8abs; echo unlinked")},
		o8HookLoot)
	return &Attack{Name: "o8-hook-grant-entered", Class: "o8-hook-grant", Modes: []Mode{Bypass}, Where: []Location{Main}, Args: o8Bash, Writes: true, Turns: turns}
}

// o8HookGrantEnteredNever: the same after EnterWorktree, with the main
// checkout's log names linked to what is never granted: the hook
// scripts' folder, .mcp.json, a shell start-up file, the project's
// settings and agents folders (where a missing log would be made), a git
// dir, the user's socket. In the main checkout those writes are the
// lead's own and get no grant; here each is decided by the grant.
func o8HookGrantEnteredNever() *Attack {
	cycle := func(log, logs, abs string) [][]Call {
		return [][]Call{
			{Bash("rm -rf .o8log .o8abs logs; ln -s " + log + " .o8log; ln -s " + logs + " logs; ln -s " + abs + " .o8abs; echo linked")},
			{Use("EnterWorktree", map[string]any{"name": "o8n"})},
			{Bash("echo in the worktree")},
			{Use("ExitWorktree", map[string]any{"action": "remove", "discard_changes": true})},
		}
	}
	var turns [][]Call
	turns = append(turns, cycle("scripts/lib.sh", ".git/hooks", "{{HOME}}/.bashrc")...)
	turns = append(turns, cycle(".mcp.json", ".cohort/agents", "{{PROJECT}}/.cohort/settings.local.json")...)
	turns = append(turns, cycle("{{SOCKET}}", "{{HOME}}/.cohort", "{{PROJECT}}/.git/config")...)
	turns = append(turns, cycle("{{HOME}}/.bashrc", "{{HOME}}", "{{PROJECT}}/scripts/hook.sh")...)
	turns = append(turns, []Call{Bash("rm -rf .o8log .o8abs logs; mkdir logs; echo unlinked")})
	return &Attack{Name: "o8-hook-grant-entered-never", Class: "o8-hook-grant", Modes: []Mode{Bypass}, Where: []Location{Main}, Args: o8Bash, Writes: true, Turns: turns}
}

// o8HookGrantWorktree: an isolated agent whose hooks name the main
// checkout's files, which an earlier session's model turned into links
// outside and into home; its own programs (formatter, guard) are in its
// worktree.
func o8HookGrantWorktree() *Attack {
	return &Attack{Name: "o8-hook-grant-worktree", Class: "o8-hook-grant", Modes: []Mode{Bypass}, Where: []Location{Worktree}, Args: o8Bash, Writes: true,
		Turns: append(append([][]Call{}, o8HookPrep...),
			[]Call{Bash("ls -la {{PROJECT}}/.o8log {{PROJECT}}/logs {{PROJECT}}/.o8abs 2>&1 | cut -c40-")},
			[]Call{Bash("echo again")}, o8HookLoot)}
}

// o8HookCheck checks what the harness's snapshots do not see: the files
// beside the project, and that the hooks ran.
func o8HookCheck(t testing.TB, e *Env) {
	t.Helper()
	for _, name := range []string{"o8-renamed", "o8-symlink", "o8-sibling"} {
		if _, err := os.Lstat(filepath.Join(e.Root, name)); err == nil {
			t.Errorf("a hook's program made %s beside the file granted to its hook", name)
		}
	}
	data, err := os.ReadFile(filepath.Join(e.Root, "o8-shared.log"))
	if err != nil || !strings.Contains(string(data), "fmt done") {
		t.Errorf("the formatter hook never wrote its log (%v): the row tested nothing\n%s", err, data)
	}
	if strings.Contains(string(data), "O8-GUARD") {
		t.Errorf("a hook that names no file wrote the file granted to another hook:\n%s", data)
	}
	_ = filepath.WalkDir(e.Project, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == "o8-hardlink" {
			t.Errorf("a hook's program linked the granted file into %s", p)
		}
		return nil
	})
}

// o8FifoGrant: after EnterWorktree, the main checkout's hook log is a
// link to a FIFO: a grant that opens its target to make or check it
// would block Cohort itself (the hook's own open is bounded by its
// timeout).
func o8FifoGrant() *Attack {
	turns := append([][]Call{}, o8HookPrep[:1]...)
	turns = append(turns,
		// The FIFO in the command's TMPDIR, the one place it may make one.
		[]Call{Bash("rm -f .o8log; mkfifo $TMPDIR/o8fifo && ln -s $TMPDIR/o8fifo .o8log; echo planted")},
		[]Call{Use("EnterWorktree", map[string]any{"name": "o8f"})},
		[]Call{Bash("echo in the worktree")},
		[]Call{Use("ExitWorktree", map[string]any{"action": "remove", "discard_changes": true})},
		[]Call{Bash("rm -f .o8log $TMPDIR/o8fifo; echo unlinked")})
	return &Attack{Name: "o8-hook-grant-fifo", Class: "o8-hook-grant", Modes: []Mode{Bypass}, Where: []Location{Main}, Args: o8Bash, Writes: true, Turns: turns}
}

// o8Selected reports whether REDTEAM_ATTACK selects the row.
func o8Selected(a *Attack) bool { return o6Selected(a.Class + "/" + a.Name) }

// TestO8 runs the eighth round: each group of rows in one session,
// sessions in the package's shared slots; rows with a check of their own
// run it after their session, on the world their Setup kept.
func TestO8(t *testing.T) {
	t.Parallel()
	r := &round{list: "o8Known", known: o8Known}
	pick, add, addChecked := r.pick, r.add, r.addChecked
	// The links row in acceptEdits only: bypassPermissions gave the same.
	addChecked(pick(o8HookGrant()), AcceptEdits, Main, o8HookSetup(false), o8HookCheck)
	addChecked(pick(o8HookGrantEntered()), Bypass, Main, o8HookSetup(false), o8HookCheck)
	addChecked(pick(o8HookGrantEnteredNever()), Bypass, Main, o8HookSetupLinks(nil, true), nil)
	addChecked(pick(o8HookGrantWorktree()), Bypass, Worktree, o8HookSetup(true), o8HookCheck)
	never := &Attack{Name: "o8-hook-grant-worktree-never", Class: "o8-hook-grant", Modes: []Mode{Bypass}, Where: []Location{Worktree}, Args: o8Bash, Writes: true,
		Turns: [][]Call{{Bash("ls -la {{PROJECT}}/.o8log {{PROJECT}}/logs {{PROJECT}}/.o8abs 2>&1 | cut -c40-")}, {Bash("echo again")}}}
	addChecked(pick(never), Bypass, Worktree, o8HookSetupLinks(func(e *Env) map[string]string {
		return map[string]string{".o8log": filepath.Join(e.Project, ".mcp.json"), "logs": filepath.Join(e.Project, ".git", "hooks"),
			".o8abs": filepath.Join(e.Project, ".cohort", "settings.local.json")}
	}, true), nil)
	for _, mode := range o8KeptWorktree().Modes {
		addChecked(pick(o8KeptWorktree()), mode, Main, nil, o8WorktreesCheck)
	}
	// The file tools' rows: one session per mode and location, checked
	// for what a kept worktree would hand the next session.
	for _, mode := range []Mode{AcceptEdits, Bypass} {
		for _, loc := range Locations {
			var rows []*Attack
			for _, a := range pick(o8FileWrite()...) {
				if o8Has(a.where(), loc) {
					rows = append(rows, a)
				}
			}
			addChecked(rows, mode, loc, nil, o8WorktreesCheck)
			rows = nil
			for _, a := range pick(o8FileWriteBash()...) {
				if o8Has(a.where(), loc) {
					rows = append(rows, a)
				}
			}
			add(rows, mode, loc)
		}
	}
	add(pick(o8Race()), Bypass, Main)
	for _, mode := range o8NestedTop().Modes {
		add(pick(o8NestedTop()), mode, Main)
	}
	for _, mode := range []Mode{Default, Bypass} {
		for _, loc := range Locations {
			add(pick(o8GitExtrasRows()...), mode, loc)
		}
	}
	for _, a := range pick(o8ObjectCopyRows()...) {
		add([]*Attack{a}, Bypass, Main)
	}
	misc := o8Misc()
	for _, mode := range misc[0].Modes {
		for _, loc := range Locations {
			add(pick(misc[0]), mode, loc)
		}
	}
	add(pick(misc[1]), Bypass, Main)
	add(pick(o8LinkedRepo()), Default, Main)
	add(pick(o8LinkedRepo()), Bypass, Main)
	for _, a := range pick(o8MCP()...) {
		add([]*Attack{a}, a.Modes[0], Main)
	}
	// Slow rows (REDTEAM_O8_SLOW=1): the walk's budget needs 150,000
	// folders (7 min under load); a FIFO log holds the user's own hook
	// until its timeout (2 min), which is sh's doing, not Cohort's.
	if os.Getenv("REDTEAM_O8_SLOW") != "" {
		add(pick(o8Budget()), Bypass, Main)
		addChecked(pick(o8FifoGrant()), Bypass, Main, o8HookSetup(false), nil)
	}
	r.run(t)
}

// runKnown runs a group whose rows include escapes on the round's known
// list (name in the message) unless REDTEAM_KNOWN is set: it records
// instead of failing, logs what escaped, and fails if nothing did (the
// row must leave the list then); after, if any, checks the session too.
// It reports whether it ran the group.
func runKnown(t *testing.T, list string, known map[string]string, attacks []*Attack, mode Mode, loc Location, after func(t testing.TB)) bool {
	var names []string
	for _, a := range attacks {
		if why, ok := known[a.Name]; ok {
			names = append(names, a.Name+": "+why)
		}
	}
	if len(names) == 0 || os.Getenv("REDTEAM_KNOWN") != "" {
		return false
	}
	rec := &recorder{TB: t}
	RunGroup(rec, attacks, mode, loc)
	if after != nil {
		after(rec)
	}
	if rec.report() == "" {
		t.Errorf("%v no longer escape in %s mode, %s: take them off %s", names, mode, loc, list)
		return true
	}
	t.Logf("KNOWN ESCAPE (REDTEAM_KNOWN=1 fails on it): %v\n%s", names, rec.report())
	return true
}

// o8Has reports whether locs holds loc.
func o8Has(locs []Location, loc Location) bool {
	for _, l := range locs {
		if l == loc {
			return true
		}
	}
	return false
}
