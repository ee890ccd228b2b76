package worktree

import (
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
)

// TestScenariosOnEveryProvider runs this package's end-to-end test of a
// fork in its own worktree again on every OpenAI provider. The other
// packages under internal/cli/e2e run theirs.
func TestScenariosOnEveryProvider(t *testing.T) {
	clitest.ScenariosOnEveryProvider(t, []string{
		"TestIsolatedForkEditsOnlyItsWorktree",
	}, nil)
}
