package assemble

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// ruleStores hides the stores of repositories outside the project that a
// Read deny rule names by an absolute or home path, whether or not the
// folder it names still exists (attack9's o9-walk-absolute: the secret
// was deleted from the tree and kept in history), and the stores of
// clones below a rule's root, never the project's own.
func TestRuleStores(t *testing.T) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	initRepo := func(dir string, bare bool) {
		t.Helper()
		args := []string{"init", "-q"}
		if bare {
			args = append(args, "--bare")
		}
		cmd := exec.Command("git", append(args, dir)...)
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+root)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git init %s: %v\n%s", dir, err, out)
		}
	}
	project, extlib, clones, mirror := filepath.Join(root, "project"), filepath.Join(root, "src", "extlib"),
		filepath.Join(root, "clones"), filepath.Join(root, "mirror.git")
	for _, d := range []string{project, extlib, filepath.Join(clones, "a"), filepath.Join(clones, "deep", "b")} {
		initRepo(d, false)
	}
	initRepo(mirror, true)

	got := ruleStores([]string{
		filepath.Join(extlib, "secrets"),            // gone from the tree
		filepath.Join(project, "secrets"),           // the project's: searched elsewhere
		clones,                                      // a folder of clones
		filepath.Join(mirror, "refs", "heads"),      // inside a bare repository
		filepath.Join(root, "nowhere", "at", "all"), // no repository around it
	}, project, nil, nil)
	for _, want := range []string{filepath.Join(extlib, ".git"), filepath.Join(clones, "a", ".git"), filepath.Join(clones, "deep", "b", ".git"), mirror} {
		if !slices.Contains(got, want) {
			t.Errorf("%s is not hidden: %q", want, got)
		}
	}
	if slices.ContainsFunc(got, func(s string) bool { return within(s, project) }) {
		t.Errorf("the project's own store is hidden whole: %q", got)
	}

	// A rule whose root holds the project: the clones beside it are
	// hidden, the project's store is left to the search.
	got = ruleStores([]string{root}, project, nil, nil)
	if !slices.Contains(got, filepath.Join(extlib, ".git")) || slices.ContainsFunc(got, func(s string) bool { return within(s, project) }) {
		t.Errorf("a rule on the project's parent: %q", got)
	}
	// No project repository: every root counts.
	if got := ruleStores([]string{filepath.Join(extlib, "secrets")}, "", nil, nil); !slices.Contains(got, filepath.Join(extlib, ".git")) {
		t.Errorf("outside any repository: %q", got)
	}
}
