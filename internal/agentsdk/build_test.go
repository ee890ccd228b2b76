package agentsdk

import (
	"os"
	"testing"

	"github.com/cohort-dev/cohort/internal/testbin"
)

// cohortBinary builds cmd/cohort once per test run.
func cohortBinary(t *testing.T) string { return testbin.Cohort(t, raceEnabled) }

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}
