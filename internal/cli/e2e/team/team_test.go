package team

import (
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
)

// TestInProcessTeam runs issue 42's team scenario (clitest.TeamScenario)
// with two in-process teammates: they claim their tasks and race for a
// third, write files, message each other and the lead, and the run ends
// with both shut down. internal/cli/e2e/remote's TestTeamAcrossMachines
// runs the same scenario with each member on its own machine.
func TestInProcessTeam(t *testing.T) {
	t.Parallel()
	sc := &clitest.TeamScenario{Team: "crew", Rec: &clitest.Seen{}}
	h := clitest.New(t, sc.Policy)
	out, errOut, code := h.Run("-p", "run the team", "--output-format", "json", "--teammate-mode", "in-process",
		"--permission-mode", "acceptEdits")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	lead := sc.Rec.All("lead")
	for _, want := range []string{`from="alice"`, `from="bob"`} {
		if !strings.Contains(lead, want) {
			t.Fatalf("the lead never saw %q; it saw:\n%s", want, lead)
		}
	}
	sc.CheckMessages(t)
	sc.CheckClaims(t)
	for file, want := range map[string]string{"alpha.txt": "alpha.txt\n", "beta.txt": "beta.txt\n", "gamma.txt": sc.Winner() + "\n"} {
		if got := h.Read(file); got != want {
			t.Errorf("%s holds %q, want %q", file, got, want)
		}
	}
	active := clitest.MemberActive(h.TeamConfig("crew"))
	if active["alice"] || active["bob"] {
		t.Fatalf("teammates still active after the run: %v", active)
	}
	if _, ok := active["team-lead"]; !ok {
		t.Fatalf("team file lacks the lead: %v", active)
	}
}
