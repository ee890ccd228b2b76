package permissions

import (
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
)

// TestScenariosOnEveryProvider runs this package's end-to-end test of a
// tmux teammate whose permission requests go to the lead again on every
// OpenAI provider. The other packages under internal/cli/e2e run theirs.
func TestScenariosOnEveryProvider(t *testing.T) {
	clitest.ScenariosOnEveryProvider(t, nil, []string{
		"TestTeammatePermissionsGoToTheLead",
	})
}
