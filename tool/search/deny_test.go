package search

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/tool"
)

// denyNames is a read policy denying files by their path's suffix.
type denyNames []string

func (denyNames) WriteRoots(string) []string { return nil }
func (denyNames) Protected(string) bool      { return false }

func (d denyNames) DeniedRead(cwd, path string) bool {
	for _, s := range d {
		if strings.HasSuffix(path, s) {
			return true
		}
	}
	return false
}

// TestGrepLeavesDeniedFilesOut is issue 36's escape 1: Grep never asked
// about the files under the path it was given, so a Read deny rule on a
// file inside the project did not keep its lines, its name or its count
// out of any output mode. Now a search with the policy prints exactly
// what the same search prints with the denied files gone, in every mode
// and with both backends.
func TestGrepLeavesDeniedFilesOut(t *testing.T) {
	t.Parallel()
	inputs := []map[string]any{
		{"pattern": "foo"},
		{"pattern": "foo", "output_mode": "content"},
		{"pattern": "foo", "output_mode": "content", "-n": false, "-C": 1},
		{"pattern": "foo", "output_mode": "content", "-A": 2, "-i": true},
		{"pattern": "foo", "output_mode": "count"},
		{"pattern": "foo\nbar", "output_mode": "content", "multiline": true},
		{"pattern": "foo", "output_mode": "content", "glob": "*.go"},
	}
	denied := denyNames{"/sub/x.go", "/d.md", "/multi.txt"}
	for _, bc := range backends(t) {
		t.Run(bc.name, func(t *testing.T) {
			t.Parallel()
			root := fixture(t)
			g := NewGrep(bc.cfg)
			with := &tool.Env{Caller: tool.Caller{Cwd: root}, Access: denied}
			var got []string
			for _, in := range inputs {
				out, isErr := grep(t, g, with, in)
				if isErr {
					t.Fatalf("%v: %s", in, out)
				}
				got = append(got, out)
			}
			for _, name := range []string{"sub/x.go", "d.md", "multi.txt"} {
				if err := os.Remove(filepath.Join(root, name)); err != nil {
					t.Fatal(err)
				}
			}
			for i, in := range inputs {
				want, _ := grep(t, g, &tool.Env{Caller: tool.Caller{Cwd: root}}, in)
				if diff := cmp.Diff(want, got[i]); diff != "" {
					t.Errorf("%v: with the policy the output differs from a tree without the denied files (-want +got):\n%s", in, diff)
				}
			}
			for _, in := range []map[string]any{{"pattern": "foo", "path": filepath.Join(root, "sub", "x.go")}} {
				os.WriteFile(filepath.Join(root, "sub", "x.go"), []byte("foo\n"), 0o644)
				if out, isErr := grep(t, g, with, in); !isErr || !strings.Contains(out, "Read deny rule") {
					t.Errorf("a denied file given as the path: %q", out)
				}
			}
		})
	}
}

// TestGlobAndLSLeaveDeniedNamesOut: names are what Glob and LS return;
// a file a Read deny rule covers is not among them.
func TestGlobAndLSLeaveDeniedNamesOut(t *testing.T) {
	t.Parallel()
	root := globTree(t, "a.go", "secrets/key.go", "secrets/other.txt", "b.go")
	env := &tool.Env{Caller: tool.Caller{Cwd: root}, Access: denyNames{"/secrets/key.go", "/secrets/other.txt"}}
	out, _ := globRun(t, NewGlob(GlobConfig{}), env, map[string]any{"pattern": "**/*"})
	if strings.Contains(out, "secrets/") || !strings.Contains(out, "a.go") {
		t.Errorf("Glob: %s", out)
	}
	res, err := NewLS(LSConfig{}).Run(t.Context(), env, []byte(`{"path": "`+root+`"}`))
	if err != nil || strings.Contains(res.TextOf(), "key.go") || strings.Contains(res.TextOf(), "other.txt") || !strings.Contains(res.TextOf(), "b.go") {
		t.Errorf("LS: %v %s", err, res.TextOf())
	}
	env.Access = denyNames{"/secrets"}
	res, _ = NewLS(LSConfig{}).Run(t.Context(), env, []byte(`{"path": "`+filepath.Join(root, "secrets")+`"}`))
	if !res.IsError || !strings.Contains(res.TextOf(), "Read deny rule") {
		t.Errorf("LS of a denied directory: %s", res.TextOf())
	}
}
