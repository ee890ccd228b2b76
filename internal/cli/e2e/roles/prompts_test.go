package roles

import (
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// Each role's prompt says how it reports, how it waits and how it ends, in
// words no other role's prompt uses for its reporting.
var (
	reports = map[string]string{
		roleLead:       "your replies are what the user reads",
		roleSubagent:   "You report to the agent that started you",
		roleBackground: "your final message reaches it as a notification",
		roleFork:       `begins with "Scope:"`,
		roleTeammate:   "You report with SendMessage",
		roleDream:      "the files you leave behind are the result",
	}
	waits = map[string]string{
		roleLead:       "To wait for them, end your turn",
		roleSubagent:   "To wait for a command you started in the background, end your turn",
		roleBackground: "To wait for a command you started in the background, end your turn",
		roleFork:       "To wait for a command you started in the background, end your turn",
		roleTeammate:   "To wait — for a teammate, for the lead",
		roleDream:      "run every command in the foreground and wait for it",
	}
	ends = map[string]string{
		roleLead:       "Your work ends when the user's request is done",
		roleSubagent:   "You end when you answer without calling a tool",
		roleBackground: "You end when you answer without calling a tool",
		roleFork:       "End with a report",
		roleTeammate:   "When your work is done, report to the lead",
		roleDream:      "End with two or three sentences",
	}
)

// roleText is what a role is told about itself: its system prompt and
// first message; for a fork, its directive (its system prompt is its
// parent's, byte for byte, and the directive disowns the parent's
// instructions).
func roleText(role string, r *fakeapi.Request) string {
	if role == roleFork {
		return r.LastUserText()
	}
	return r.SystemText() + "\n" + r.FirstUserText()
}

// TestEachRoleIsToldHowItReportsWaitsAndEnds checks every role's first
// request, under each agent model, and keeps it as a golden file.
func TestEachRoleIsToldHowItReportsWaitsAndEnds(t *testing.T) {
	t.Parallel()
	for _, m := range []model{seedModel, ccModel} {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			f := runRoles(t, m, nil)
			f.keep(roleDream, runDream(t))
			for _, role := range allRoles {
				r := f.get(t, role)
				text := roleText(role, r)
				for what, markers := range map[string]map[string]string{"how it reports": reports, "how it waits": waits, "how it ends": ends} {
					if !strings.Contains(text, markers[role]) {
						t.Errorf("the %s is not told %s (%q)", role, what, markers[role])
					}
				}
				for other, marker := range reports {
					if other != role && reports[other] != reports[role] && strings.Contains(text, marker) {
						t.Errorf("the %s carries the %s's reporting instruction %q", role, other, marker)
					}
				}
				golden(t, "first_"+m.name+"_"+role+".golden", []byte(stable(string(pretty(t, r.Raw)))))
			}
			if !strings.Contains(roleText(roleFork, f.get(t, roleFork)), "are the main agent's, not yours") {
				t.Errorf("the fork's directive does not disown the main agent's instructions above it")
			}
		})
	}
}
