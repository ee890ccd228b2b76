package agentsdk

import (
	"testing"

	"github.com/cohort-dev/cohort/internal/testbin"
)

// cohortBinary builds cmd/cohort once per test binary (internal/testbin).
func cohortBinary(t *testing.T) string { return testbin.Cohort(t, raceEnabled) }
