package conformance

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// repoRoot is the repository this test file belongs to.
func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the test's source file")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// sharedCorpus returns shared/compat from the nearest ancestor of the
// repository that has one, or "".
func sharedCorpus(root string) string {
	for dir := filepath.Dir(root); ; dir = filepath.Dir(dir) {
		cand := filepath.Join(dir, "shared", "compat")
		if fi, err := os.Stat(filepath.Join(cand, "expected")); err == nil && fi.IsDir() {
			return cand
		}
		if filepath.Dir(dir) == dir {
			return ""
		}
	}
}

// corpus locates the corpus (see the package doc) and says which one it
// uses.
func corpus(t *testing.T) string {
	t.Helper()
	if d := os.Getenv("COHORT_COMPAT_DIR"); d != "" {
		t.Logf("corpus: %s (COHORT_COMPAT_DIR)", d)
		return d
	}
	root := repoRoot(t)
	if d := sharedCorpus(root); d != "" {
		t.Logf("corpus: %s (the project's shared directory)", d)
		return d
	}
	d := filepath.Join(root, "testdata", "compat")
	if _, err := os.Stat(filepath.Join(d, "expected")); err != nil {
		t.Fatalf("no conformance corpus: neither $COHORT_COMPAT_DIR, nor shared/compat beside the repository, nor %s (part of the repository: restore it with git checkout -- testdata/compat): %v", d, err)
	}
	t.Logf("corpus: %s (the repository's copy)", d)
	return d
}

// TestCorpusCopyIsCurrent checks that the repository's copy of the corpus,
// which a fresh clone uses, holds the same files as the shared corpus.
func TestCorpusCopyIsCurrent(t *testing.T) {
	root := repoRoot(t)
	shared := sharedCorpus(root)
	if shared == "" {
		t.Skip("no shared/compat beside the repository (a fresh clone): only the copy in testdata/compat exists")
	}
	copied := filepath.Join(root, "testdata", "compat")
	a, b := treeFiles(t, shared), treeFiles(t, copied)
	var diffs []string
	for rel, data := range a {
		other, ok := b[rel]
		switch {
		case !ok:
			diffs = append(diffs, "missing from the copy: "+rel)
		case !bytes.Equal(data, other):
			diffs = append(diffs, "differs: "+rel)
		}
	}
	for rel := range b {
		if _, ok := a[rel]; !ok {
			diffs = append(diffs, "only in the copy: "+rel)
		}
	}
	if len(diffs) > 0 {
		if len(diffs) > 20 {
			diffs = append(diffs[:20], "…")
		}
		t.Fatalf("testdata/compat is not the same as %s; refresh it with\n  rm -rf testdata/compat && cp -r %s testdata/compat\n%s",
			shared, shared, strings.Join(diffs, "\n"))
	}
	t.Logf("testdata/compat matches %s (%d files)", shared, len(a))
}

func treeFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel] = data
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// agentRecord is one line of expected/agents.tsv.
type agentRecord struct {
	file string
	load bool
	name string
}

func readAgentRecords(t *testing.T, dir string) []agentRecord {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "expected", "agents.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []agentRecord
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) < 2 || (cols[1] != "load" && cols[1] != "skip") {
			t.Fatalf("expected/agents.tsv:%d: want file, load|skip, name; got %q", n, line)
		}
		r := agentRecord{file: cols[0], load: cols[1] == "load"}
		if len(cols) > 2 {
			r.name = cols[2]
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// outcome is what happened to the scripted sequence under one settings
// file.
type outcome struct {
	Verdict string `json:"verdict"`
	Steps   string `json:"steps"`
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// accepted is expected/accepted.json: file name to the reason a divergence
// is acceptable.
type accepted struct {
	Settings map[string]string `json:"settings"`
	Agents   map[string]string `json:"agents"`
}

func readAccepted(t *testing.T, dir string) accepted {
	t.Helper()
	var a accepted
	readJSON(t, filepath.Join(dir, "expected", "accepted.json"), &a)
	return a
}
