package assemble

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/gitrepo"
)

// strays hides what git's directory holds beyond its structure (the
// copies a proven-free store may still hold in plain text) and nothing of
// the structure itself.
func TestStrays(t *testing.T) {
	top, _ := filepath.EvalSymlinks(t.TempDir())
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = top
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x", "GIT_CONFIG_NOSYSTEM=1", "HOME="+top)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	os.WriteFile(filepath.Join(top, "f"), []byte("x\n"), 0o644)
	run("init", "-q")
	run("add", "f")
	run("commit", "-q", "-m", "start")
	run("gc", "-q")
	os.WriteFile(filepath.Join(top, "g"), []byte("loose\n"), 0o644)
	run("hash-object", "-w", "g") // a loose object, which stays shown
	run("worktree", "add", "-q", filepath.Join(top, ".cohort", "worktrees", "a"))
	git := filepath.Join(top, ".git")
	for _, p := range []string{"lost-found/other/abc", "rr-cache/x/preimage", "objects/pack/tmp_pack_1", "objects/incoming-x/y", "objects/ab/tmp_obj_Xy12", "worktrees/a/MERGE_MSG", "modules/s/config"} {
		os.MkdirAll(filepath.Dir(filepath.Join(git, p)), 0o755)
		os.WriteFile(filepath.Join(git, p), []byte("copy\n"), 0o644)
	}
	lay, err := gitrepo.Read(top)
	if err != nil {
		t.Fatal(err)
	}
	got := strays(lay)
	for _, want := range []string{"COMMIT_EDITMSG", "lost-found", "rr-cache", "objects/pack/tmp_pack_1", "objects/incoming-x", "objects/ab/tmp_obj_Xy12", "worktrees/a/MERGE_MSG", "modules"} {
		if !slices.Contains(got, filepath.Join(git, want)) {
			t.Errorf("%s is not hidden: %q", want, got)
		}
	}
	for _, p := range got {
		for _, keep := range []string{"HEAD", "config", "refs", "logs", "index", "objects/info", "worktrees/a/gitdir", "worktrees/a/HEAD"} {
			if p == filepath.Join(git, keep) {
				t.Errorf("git's structure hidden: %s", p)
			}
		}
		if len(filepath.Base(p)) == 38 {
			t.Errorf("a loose object hidden: %s", p)
		}
		if filepath.Dir(p) == filepath.Join(git, "objects", "pack") && filepath.Ext(p) != "" && filepath.Base(p)[:5] == "pack-" {
			t.Errorf("a pack hidden: %s", p)
		}
	}
}

// nestedRepos finds repositories below the top however deep (under
// ignored and hidden directories too), does not enter git dirs or skipped
// directories, hides whole the stores a link out of the project reaches
// (a repository inside the link's target, or around it), and says where
// it stopped when out of time.
func TestNestedRepos(t *testing.T) {
	top, _ := filepath.EvalSymlinks(t.TempDir())
	for _, d := range []string{".git", "vendor/lib/.git", "node_modules/x/y/.git", ".cache/deep/.git", "skip/me/.git", "vendor/lib/inner/.git"} {
		if err := os.MkdirAll(filepath.Join(top, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	outside, _ := filepath.EvalSymlinks(t.TempDir())
	os.MkdirAll(filepath.Join(outside, "r", ".git"), 0o755)
	os.MkdirAll(filepath.Join(outside, "s", ".git"), 0o755)
	os.MkdirAll(filepath.Join(outside, "s", "sub"), 0o755)
	os.Symlink(outside, filepath.Join(top, "link"))
	os.Symlink(outside, filepath.Join(top, "again")) // each real directory once
	os.Symlink(filepath.Join(outside, "s", "sub"), filepath.Join(top, "into"))
	os.Symlink(top, filepath.Join(outside, "back")) // a loop back into the project
	for _, d := range []string{"backup/p.git/objects", "backup/p.git/refs"} {
		os.MkdirAll(filepath.Join(top, d), 0o755)
	}
	os.WriteFile(filepath.Join(top, "backup/p.git/HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	found, bare, cut := nestedRepos(top, []string{filepath.Join(top, "skip")}, time.Minute)
	var got []string
	for _, l := range found {
		rel, _ := filepath.Rel(top, l.WorkTree)
		got = append(got, rel)
	}
	slices.Sort(got)
	want := []string{".cache/deep", "node_modules/x/y", "vendor/lib", "vendor/lib/inner"}
	if cut != "" || !slices.Equal(got, want) {
		t.Errorf("nestedRepos = %q (cut %q), want %q", got, cut, want)
	}
	slices.Sort(bare)
	if want := []string{filepath.Join(top, "backup/p.git"), filepath.Join(outside, "r", ".git"), filepath.Join(outside, "s", ".git")}; !slices.Equal(slices.Compact(bare), want) {
		t.Errorf("stores hidden whole: %q, want %q (the bare one, and the two reached through links)", bare, want)
	}
	if _, _, cut := nestedRepos(top, nil, -time.Second); cut != top {
		t.Errorf("with no time left the walk stopped at %q, want the top %q", cut, top)
	}
}
