package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/permission"
	"github.com/cohort-dev/cohort/settings"
)

// Read deny rules that are patterns are enforced for what they match when
// the sandbox is set up: a hostile command reading the denied files by
// name, by a recursive grep and through a script gets none of their
// contents, while the rest of the project stays readable. What cannot be
// hidden (later matches, a path that does not exist yet) is in the report.
func TestDeniedReadPatternsHidden(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	project := filepath.Join(root, "project")
	writeFile(t, filepath.Join(project, "secrets", "key"), "s3cret-key\n")
	writeFile(t, filepath.Join(project, "sub", "a.pem"), "s3cret-pem\n")
	writeFile(t, filepath.Join(project, "deep", "er", "b.pem"), "s3cret-deep\n")
	writeFile(t, filepath.Join(project, "notes.txt"), "s3cret-free notes\n")
	c, err := permission.New(permission.Config{Env: settings.Env{Cwd: project, Home: filepath.Join(root, "home")},
		Deny: []string{"Read(./secrets/**)", "Read(**/*.pem)", "Read(./later/**)"}})
	if err != nil {
		t.Fatal(err)
	}
	denied := c.ReadDenials(t.Context(), "", permission.DefaultDenialLimits)
	e := newEnv(t, Config{DenyRead: denied.Paths, DenyReadUncovered: denied.Uncovered})
	out, _ := e.bash(project, `cat secrets/key; ls secrets; grep -r s3cret . ; cat sub/a.pem deep/er/b.pem;
		printf '#!/bin/sh\ncat secrets/key sub/a.pem\n' > "$TMPDIR/s.sh"; sh "$TMPDIR/s.sh";
		python3 -c 'print(open("sub/a.pem").read())' 2>&1 | tail -1; echo end`)
	for _, leak := range []string{"s3cret-key", "s3cret-pem", "s3cret-deep"} {
		if strings.Contains(out, leak) {
			t.Errorf("a hostile command read %s:\n%s", leak, out)
		}
	}
	if !strings.Contains(out, "s3cret-free notes") || !strings.Contains(out, "end") {
		t.Errorf("the rest of the project should stay readable:\n%s", out)
	}
	rep, err := e.sb.Report(t.Context(), project)
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(rep.NotEnforced, "\n")
	for _, want := range []string{"Read(**/*.pem)", "files that match it later in the session are readable",
		filepath.Join(project, "later") + " does not exist"} {
		if !strings.Contains(notes, want) {
			t.Errorf("the report does not say what is not enforced (%q):\n%s", want, notes)
		}
	}
	if strings.Contains(notes, "Read(./secrets/**)") {
		t.Errorf("the secrets directory is hidden whole, yet the report says it is not:\n%s", notes)
	}
	if !strings.Contains(strings.Join(rep.Enforced, "\n"), "the 3 paths they cover are hidden") {
		t.Errorf("enforced: %q", rep.Enforced)
	}
}

// TestDeniedReadsInALaterWorkingDirectory: a worktree made after the
// session started holds its own copy of what the rules cover; the policy
// of an agent working there hides that copy too (Config.DenyReadIn), so
// a command the permission check let through — a recursive grep, a list
// of files read from standard input — reads none of it.
func TestDeniedReadsInALaterWorkingDirectory(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	project, wt := filepath.Join(root, "project"), filepath.Join(root, "project", "wt")
	writeFile(t, filepath.Join(project, "secrets", "key"), "s3cret-main\n")
	c, err := permission.New(permission.Config{Env: settings.Env{Cwd: project, Home: filepath.Join(root, "home")},
		Deny: []string{"Read(./secrets/**)"}})
	if err != nil {
		t.Fatal(err)
	}
	denied := c.ReadDenials(t.Context(), "", permission.DefaultDenialLimits)
	writeFile(t, filepath.Join(wt, "secrets", "key"), "s3cret-worktree\n") // made later
	e := newEnv(t, Config{DenyRead: denied.Paths, Dirs: []string{wt}, DenyReadIn: func(cwd string) []string {
		return c.ReadDenials(t.Context(), cwd, permission.DefaultDenialLimits).Paths
	}})
	// In both profiles, and the read-only one first set up for the main
	// checkout: what it hides is per directory too.
	for _, prof := range []Profile{ReadOnly, Writing} {
		e.profile = prof
		e.bash(project, `true`)
		out, _ := e.bash(wt, `grep -r s3cret . ; printf 'secrets/key\0' | sort --files0-from=- ; echo end`)
		if strings.Contains(out, "s3cret-worktree") || !strings.Contains(out, "end") {
			t.Errorf("profile %v: a command in the worktree read its copy of the denied file:\n%s", prof, out)
		}
	}
}

// TestDeniedReadsInWorktreesMadeLater: an agent's worktree made after
// the lead's commands started holds a copy of what the rules cover; the
// lead's policy is set up again once the worktrees directory changes
// (Config.DenyReadWatch), so a command the permission check let through
// reads none of the copy.
func TestDeniedReadsInWorktreesMadeLater(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	project := filepath.Join(root, "project")
	writeFile(t, filepath.Join(project, "secrets", "key"), "s3cret-main\n")
	// The settings directories exist, so no frozen top rebuilds the
	// policy: only the watch can.
	for _, d := range []string{".claude", ".cohort/worktrees"} {
		if err := os.MkdirAll(filepath.Join(project, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	c, err := permission.New(permission.Config{Env: settings.Env{Cwd: project, Home: filepath.Join(root, "home")},
		Deny: []string{"Read(./secrets/**)"}})
	if err != nil {
		t.Fatal(err)
	}
	denied := c.ReadDenials(t.Context(), "", permission.DefaultDenialLimits)
	e := newEnv(t, Config{DenyRead: denied.Paths, DenyReadWatch: filepath.Join(project, permission.WorktreesDir), DenyReadIn: func(cwd string) []string {
		return c.ReadDenials(t.Context(), cwd, permission.DefaultDenialLimits).Paths
	}})
	if out, _ := e.bash(project, `cat secrets/key; echo first`); strings.Contains(out, "s3cret") {
		t.Fatalf("the command read the denied file:\n%s", out)
	}
	writeFile(t, filepath.Join(project, ".cohort", "worktrees", "agent-1", "secrets", "key"), "s3cret-worktree\n")
	out, _ := e.bash(project, `cat .cohort/worktrees/agent-1/secrets/key; grep -r s3cret .cohort; echo end`)
	if strings.Contains(out, "s3cret-worktree") || !strings.Contains(out, "end") {
		t.Errorf("a command of the lead read a worktree's copy of the denied file:\n%s", out)
	}
}
