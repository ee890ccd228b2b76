package cohort

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/internal/assemble"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// TestAPI: `go doc -all` of the package is its API and nothing else,
// byte for byte as testdata/api.golden has it (run with -update after a
// deliberate change, and read the diff): a change to what programs
// embedding Cohort see shows up in review.
func TestAPI(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go doc")
	}
	out, err := exec.Command("go", "doc", "-all", ".").Output()
	if err != nil {
		t.Fatalf("go doc: %v", err)
	}
	if strings.Contains(string(out), "internal/") {
		t.Errorf("the API names an internal package:\n%s", out)
	}
	golden := filepath.Join("testdata", "api.golden")
	if *update {
		if err := os.WriteFile(golden, out, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(string(want), string(out)); d != "" {
		t.Errorf("go doc -all (-golden +now); run go test -run TestAPI -update if the change is meant:\n%s", d)
	}
}

// TestStopReasonsAgree: the stop reason the assembly gives a turn whose
// answers never matched the schema is the API's result subtype.
func TestStopReasonsAgree(t *testing.T) {
	if StopStructuredOutputRetries != assemble.StopStructuredOutputRetries {
		t.Errorf("cohort says %q, internal/assemble %q", StopStructuredOutputRetries, assemble.StopStructuredOutputRetries)
	}
}
