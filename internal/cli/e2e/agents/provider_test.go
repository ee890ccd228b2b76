package agents

import (
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
)

// TestScenariosOnEveryProvider runs this package's end-to-end tests of
// synchronous subagents and background agents (notification, the chaos
// loop, TaskStop, a grandchild, auto-backgrounding) again on every OpenAI
// provider. The other packages under internal/cli/e2e run theirs.
func TestScenariosOnEveryProvider(t *testing.T) {
	clitest.ScenariosOnEveryProvider(t, []string{
		"TestThreeParallelSubagents",
		"TestFiveBackgroundAgentsNotifyOnce",
		"TestBackgroundNotifyLoop",
		"TestTaskStopKillsABackgroundAgent",
		"TestBackgroundGrandchildResultIsNotLost",
		"TestAutoBackgroundMovesASlowSyncAgent",
	}, nil)
}
