package team

import (
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
)

// TestScenariosOnEveryProvider runs this package's end-to-end tests of
// teams whose teammates run in-process or in tmux panes, as their own
// cohort processes, again on every OpenAI provider. The other packages
// under internal/cli/e2e run theirs.
func TestScenariosOnEveryProvider(t *testing.T) {
	clitest.ScenariosOnEveryProvider(t, []string{
		"TestInProcessTeam",
	}, []string{
		"TestMixedTeamOverTmux",
	})
}
