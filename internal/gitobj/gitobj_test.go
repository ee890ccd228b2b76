package gitobj

import (
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return gitIn(t, dir, "", args...)
}

func gitIn(t *testing.T, dir, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@x", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@x", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// Has finds a blob loose, packed (index version 2 and 1), and not when
// it is absent; BlobIDs names it as git does, in both formats.
func TestHas(t *testing.T) {
	for _, format := range []string{"sha1", "sha256"} {
		t.Run(format, func(t *testing.T) {
			dir := t.TempDir()
			git(t, dir, "init", "-q", "--object-format="+format)
			objects := filepath.Join(dir, ".git", "objects")
			data := []byte("REDTEAM secret\n")
			if err := os.WriteFile(filepath.Join(dir, "f"), data, 0o644); err != nil {
				t.Fatal(err)
			}
			want := git(t, dir, "hash-object", "-w", "f")
			id := BlobIDs(data)[0]
			if format == "sha256" {
				id = BlobIDs(data)[1]
			}
			if hex.EncodeToString(id) != want {
				t.Fatalf("BlobIDs: %x, git says %s", id, want)
			}
			has := func(what string, id []byte, wantHas bool) {
				t.Helper()
				got, err := Has(objects, id)
				if err != nil || got != wantHas {
					t.Errorf("%s: Has = %v, %v; want %v", what, got, err, wantHas)
				}
			}
			has("loose", id, true)
			// Many blobs in the pack, so the search has entries around it.
			var paths []string
			for i := range 300 {
				p := filepath.Join(dir, "g"+strings.Repeat("x", i%10)+string(rune('a'+i/10)))
				os.WriteFile(p, []byte(strings.Repeat("x", i)), 0o644)
				paths = append(paths, p)
			}
			gitIn(t, dir, strings.Join(paths, "\n")+"\n", "hash-object", "-w", "--stdin-paths")
			pack := func(args ...string) {
				all := git(t, dir, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
				gitIn(t, dir, all+"\n", append(args, "pack-objects", "-q", filepath.Join(objects, "pack", "pack"))...)
				git(t, dir, "prune-packed")
			}
			pack()
			if _, err := os.Stat(filepath.Join(objects, want[:2], want[2:])); err == nil {
				t.Fatal("the blob is still loose")
			}
			has("packed", id, true)
			has("absent", BlobIDs([]byte("other"))[map[string]int{"sha1": 0, "sha256": 1}[format]], false)
			if format == "sha1" {
				os.RemoveAll(filepath.Join(objects, "pack"))
				os.Mkdir(filepath.Join(objects, "pack"), 0o755)
				// The objects are gone with the pack; write them again.
				gitIn(t, dir, strings.Join(append(paths, filepath.Join(dir, "f")), "\n")+"\n", "hash-object", "-w", "--stdin-paths")
				pack("-c", "pack.indexVersion=1")
				has("index version 1", id, true)
			}
		})
	}
}

// An index that is not one is an error, never "absent".
func TestHasBadIndex(t *testing.T) {
	objects := t.TempDir()
	os.MkdirAll(filepath.Join(objects, "pack"), 0o755)
	os.WriteFile(filepath.Join(objects, "pack", "pack-x.idx"), []byte("\xfftOc\x00\x00\x00\x09"), 0o644)
	if _, err := Has(objects, BlobIDs([]byte("x"))[0]); err == nil {
		t.Error("an index of an unknown version answered")
	}
	os.WriteFile(filepath.Join(objects, "pack", "pack-x.idx"), []byte("short"), 0o644)
	if _, err := Has(objects, BlobIDs([]byte("x"))[0]); err == nil {
		t.Error("a truncated index answered")
	}
}
