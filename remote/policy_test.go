package remote

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/permission"
)

// A job written by a model that wants everything: the worker runs it
// capped and says what it capped.
func TestPolicyCapsAnOverAskingJob(t *testing.T) {
	t.Parallel()
	p := Policy{Tools: []string{"Read", "Grep", "Edit", "Bash"}, MaxMode: "acceptEdits",
		MaxTurns: 20, WallTime: 10 * time.Minute, MaxBudgetUSD: 2, Models: []string{"sonnet"}, Allow: []string{"Bash(go test:*)"}}
	j := testJob()
	j.Definition.Tools = []string{"Read", "Edit", "WebFetch", "Bash"}
	j.Settings = Settings{Mode: "bypassPermissions", Allow: []string{"WebFetch(domain:evil.example)", "Edit"},
		Deny: []string{"Bash(rm:*)"}, MaxTurns: 1000, WallTime: Duration(10 * time.Hour), MaxBudgetUSD: 50, Sandbox: "off"}
	r, err := p.Apply(j)
	if err != nil {
		t.Fatal(err)
	}
	want := &Run{
		Definition: Definition{Name: "general-purpose", Tools: []string{"Read", "Edit", "Bash"}, Model: "sonnet",
			PermissionMode: "acceptEdits", MaxTurns: 20},
		Model: "sonnet", Mode: permission.ModeAcceptEdits, Tools: []string{"Read", "Edit", "Bash"},
		Allow: []string{"Bash(go test:*)", "Edit"}, Deny: []string{"Bash(rm:*)"}, MaxTurns: 20, WallTime: 10 * time.Minute,
		MaxBudgetUSD: 2,
		Capped: []string{
			"permission mode bypassPermissions lowered to acceptEdits, this worker's ceiling",
			"tools WebFetch removed: this worker allows Read, Grep, Edit, Bash",
			"allow rule WebFetch(domain:evil.example) dropped: tool WebFetch is not allowed on this worker",
			"max turns 1000 lowered to 20",
			"wall time 10h0m0s lowered to 10m0s",
			"budget $50.0000 lowered to $2.0000",
			"sandbox stays on: this worker runs every Bash call in the kernel sandbox",
		},
	}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Fatalf("Apply (-want +got):\n%s", diff)
	}
}

func TestPolicyLeavesAModestJobAlone(t *testing.T) {
	t.Parallel()
	j := testJob()
	j.Settings = Settings{Mode: "plan", MaxTurns: 5}
	r, err := Policy{}.Apply(j)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Capped) != 0 || r.Mode != permission.ModePlan || r.MaxTurns != 5 || r.WallTime != 30*time.Minute {
		t.Fatalf("Apply = %+v", r)
	}
	if diff := cmp.Diff(DefaultTools, r.Tools); diff != "" {
		t.Fatalf("tools: %s", diff)
	}
}

func TestPolicyRefusesWhatItCannotCap(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, want string
		edit       func(*Job)
	}{
		{"a model the worker does not offer", `model "opus" is not offered by this worker (it runs sonnet)`, func(j *Job) { j.Model = "opus" }},
		{"only disallowed tools", "none of the tools the job asks for (WebFetch)", func(j *Job) { j.Definition.Tools = []string{"WebFetch"} }},
		{"an unknown mode", `unknown permission mode "godMode"`, func(j *Job) { j.Settings.Mode = "godMode" }},
		{"a bad rule", "allow rule", func(j *Job) { j.Settings.Allow = []string{"Bash("} }},
		{"a negative budget", "max_budget_usd -1: a budget is a number of US dollars above 0", func(j *Job) { j.Settings.MaxBudgetUSD = -1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := testJob()
			tc.edit(j)
			_, err := Policy{}.Apply(j)
			var ref *Refusal
			if !errors.As(err, &ref) || !strings.Contains(ref.Reason, tc.want) {
				t.Fatalf("Apply = %v, want a refusal mentioning %q", err, tc.want)
			}
		})
	}
}
