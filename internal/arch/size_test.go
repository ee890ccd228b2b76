package arch

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rootBudget is how many lines the root package's non-test files may hold
// (issue 35): the public API only. A feature that needs more wiring puts
// it in internal/assemble or a domain package, not here.
const rootBudget = 2500

// TestRootStaysTheAPI: the root package keeps within its line budget.
func TestRootStaysTheAPI(t *testing.T) {
	root := moduleRoot(t)
	files, err := filepath.Glob(filepath.Join(root, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines += bytes.Count(data, []byte("\n"))
	}
	if lines > rootBudget {
		t.Errorf("the root package's non-test files hold %d lines, over its budget of %d: move wiring into internal/assemble or a domain package", lines, rootBudget)
	}
}
