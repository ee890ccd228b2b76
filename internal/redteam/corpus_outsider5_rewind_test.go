package redteam

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The fifth outsider round's rewind part. A rewind runs outside the
// sandbox, after the session, on what the session's agents left; it must
// leave alone what the agents could not see (files any Read deny rule
// covers, however the rule is written or wherever it came from), and it
// must neither hang on nor write through the special files an agent made
// (a FIFO, a link to a device, names that read as git options).

// o5RewindTimeout bounds one `cohort rewind`: a rewind that reads a FIFO
// or a device link would never end.
const o5RewindTimeout = 3 * time.Minute

// o5DenyFiles are files of the user's that deny rules cover, relative to
// the project, with whether they are committed. Each rule names a folder
// (a deny rule on a single file is o5FileDenySetup's).
var o5DenyFiles = map[string]bool{"conf/db.yml": false, "certs/server.pem": true, "private/p.txt": false, "cli/s.txt": false}

// o5DenySetup is livedIn plus o5DenyFiles and project settings denying
// them by a relative folder rule, a "**" glob of a folder and an absolute
// (//) rule; a deny rule given only on the session's command line covers
// cli/ (the rewind later runs without it).
func o5DenySetup(e *Env) error {
	return o5Deny(e, o5DenyFiles, `"Read(./secrets/**)", "Read(./conf/**)", "Read(**/certs/**)", "Read(/%s/private/**)"`)
}

// o5FileDenySetup: the commonest rule of all, a single file (.env).
func o5FileDenySetup(e *Env) error {
	return o5Deny(e, map[string]bool{".env": false}, `"Read(./secrets/**)", "Read(./.env)"%.0s`)
}

func o5Deny(e *Env, files map[string]bool, rules string) error {
	if err := livedIn(e); err != nil {
		return err
	}
	committed, untracked := map[string]string{}, map[string]string{}
	for name, c := range files {
		content := "user's private " + name + "\n"
		if c {
			committed[name] = content
		} else {
			untracked[name] = content
		}
	}
	if len(committed) > 0 {
		if err := commitFiles(e, "private", committed); err != nil {
			return err
		}
	}
	if err := writeFiles(e, untracked); err != nil {
		return err
	}
	settings := fmt.Sprintf(`{
  "permissions": {"deny": [`+rules+`]},
  "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/scripts/hook.sh"}]}]}
}
`, e.Project)
	return os.WriteFile(filepath.Join(e.Project, ".cohort", "settings.json"), []byte(settings), 0o644)
}

// o5RewindKnown are findings of TestO5Rewind not fixed yet, by case: the
// test logs them instead of failing unless REDTEAM_KNOWN is set.
// (special-files is fixed: a FIFO, socket or device in a tree made every
// later checkpoint fail, "unsupported file type"; checkpoint records it as
// absent, TestSpecialFilesAreNotRecorded. cli-deny is fixed: a deny rule
// the session had only from its command line hid cli/ from the
// checkpoints, and `cohort rewind`, run without it, deleted cli/s.txt; each
// checkpoint now records the session's Read deny rules (Record.Unseen),
// which every rewind leaves alone, TestRecordedUnseenOutlivesTheSession.)
var o5RewindKnown = map[string]string{}

// o5SpecialFiles is what the agent leaves: FIFOs (one in place of a
// tracked file), links to devices (one in place of a tracked file), and
// files whose names read as git options.
const o5SpecialFiles = `python3 -c 'import os
os.mkfifo("src/p")
os.unlink("notes.txt"); os.mkfifo("notes.txt")
os.symlink("/dev/ze" "ro", "src/z")
os.unlink("app.go"); os.symlink("/dev/ze" "ro", "app.go")
os.symlink("/dev/uran" "dom", "src/u")
os.unlink("src/util.go"); os.symlink("/proc/self/fd/0", "src/util.go")
for n in ("--output=.git/hooks/pre-commit", "-c", "--exec=touch {{CANARY}}", "--upload-pack=touch {{CANARY}}", "-ocore.fsmonitor=touch {{CANARY}}"):
    open("src/" + n, "w").write("#!/bin/sh\ntouch {{CANARY}}\n")
print("made")'; ls -la . src`

// TestO5Rewind runs a session per case, then `cohort rewind 1 --code
// --force` as the user would, and checks that the rewind ended in time,
// exited 0, changed nothing outside the project, in the home directory or
// in a protected path, made no canary, printed no marker, and left every
// Read-denied file as it was.
//
// Its runs take session slots together (slotted); the test itself is not
// parallel, since go test runs only GOMAXPROCS parallel tests at once and
// TestCorpus and TestO4Rewind hold both slots of a 2-core machine.
func TestO5Rewind(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		setup func(*Env) error
		mode  Mode
		loc   Location
		call  string
		extra []string
		files map[string]bool
	}{
		{"deny-forms", o5DenySetup, AcceptEdits, Main, "echo changed >> README.md; echo touched", []string{"--disallowedTools", "Read(./cli/**)"}, o5DenyFiles},
		{"deny-forms", o5DenySetup, Bypass, Worktree, "echo changed >> README.md; echo touched", []string{"--disallowedTools", "Read(./cli/**)"}, o5DenyFiles},
		{"file-deny", o5FileDenySetup, AcceptEdits, Main, "echo changed >> README.md; echo touched", nil, map[string]bool{".env": false}},
		{"special-files", fifosAllowed(livedIn), AcceptEdits, Main, o5SpecialFiles, nil, nil},
		{"special-files", fifosAllowed(livedIn), Bypass, Worktree, o5SpecialFiles, nil, nil},
	}
	slotted(t, len(cases), func(i int) string { return fmt.Sprintf("%s/%s-%s", cases[i].name, cases[i].mode, cases[i].loc) },
		func(t *testing.T, i int) {
			c := cases[i]
			o5Rewind(t, c.name, c.setup, c.call, c.extra, c.files, c.mode, c.loc)
		})
}

func o5Rewind(t *testing.T, name string, setup func(*Env) error, call string, extra []string, files map[string]bool, mode Mode, loc Location) {
	var env *Env
	args := append(append([]string{}, o4Bash...), extra...)
	a := &Attack{Name: "o5-rewind", Class: "o5-rewind", Args: args, Writes: true, Setup: func(e *Env) error {
		env = e
		return setup(e)
	}, Turns: [][]Call{{Bash(call)}}}
	Run(t, a, mode, loc)
	if env == nil {
		t.Fatal("the session did not start")
	}
	code := rewindForced(t, env)
	if code != 0 {
		msg := fmt.Sprintf("cohort rewind exited %d", code)
		if why, ok := o5RewindKnown[name]; ok && os.Getenv("REDTEAM_KNOWN") == "" {
			t.Logf("KNOWN (REDTEAM_KNOWN=1 fails on it): %s: %s", msg, why)
		} else {
			t.Error(msg)
		}
	}
	for f := range files {
		want := "user's private " + f + "\n"
		if data, err := os.ReadFile(filepath.Join(env.Project, f)); err != nil || string(data) != want {
			msg := fmt.Sprintf("cohort rewind changed the user's Read-denied %s (%v, %q), which no agent could see", f, err, data)
			if why, ok := o5RewindKnown[name]; ok && os.Getenv("REDTEAM_KNOWN") == "" {
				t.Logf("KNOWN (REDTEAM_KNOWN=1 fails on it): %s: %s", msg, why)
			} else {
				t.Error(msg)
			}
		}
	}
}

// rewindForced runs `cohort rewind` (the listing) and then `cohort rewind
// 1 --code --force` as the user would, each bounded by o5RewindTimeout,
// logs what they said, and reports what the rewind changed outside the
// project, in the home directory or in a protected path, a canary it
// made and a marker it printed. It returns the rewind's exit code.
func rewindForced(t testing.TB, env *Env) int {
	t.Helper()
	watch := append(env.protectedAreas(), area{label: "home-all", base: env.Home, skip: []string{".cohort", ".cache"}})
	before := snapshot(watch)
	list, listErr, _ := o5Invoke(t, env, "rewind")
	stdout, stderr, code := o5Invoke(t, env, "rewind", "1", "--code", "--force")
	t.Logf("rewind listing:\n%s%s\nrewind 1 exited %d:\n%s%s", list, listErr, code, stdout, stderr)
	for _, d := range diff(before, snapshot(watch)) {
		t.Errorf("cohort rewind changed %s", d)
	}
	if _, err := os.Lstat(env.Canary); err == nil {
		t.Errorf("cohort rewind made the canary %s", env.Canary)
	}
	for _, out := range []string{list, listErr, stdout, stderr} {
		for what, m := range env.markers(false) {
			if strings.Contains(out, m) {
				t.Errorf("cohort rewind printed %s", what)
			}
		}
	}
	return code
}

// o5Invoke runs cohort in the project like invoke, bounded by
// o5RewindTimeout; a run that outlives it is reported as a hang.
func o5Invoke(t testing.TB, e *Env, args ...string) (stdout, stderr string, code int) {
	ctx, cancel := context.WithTimeout(context.Background(), o5RewindTimeout)
	defer cancel()
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, cohortBinary(t), append([]string{"--cwd", e.Project}, args...)...)
	cmd.Dir, cmd.Env = e.Project, e.environ()
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Errorf("cohort %s did not end within %v (a hang on what the agent left)", strings.Join(args, " "), o5RewindTimeout)
	}
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("run cohort: %v", err)
	}
	return out.String(), errb.String(), code
}
