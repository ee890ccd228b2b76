package flags_test

import (
	"fmt"

	"github.com/cohort-dev/cohort/flags"
)

func ExampleResolve() {
	set, err := flags.Resolve(flags.Config{
		Settings: []flags.Settings{{Path: "/repo/.cohort/settings.json", Flags: map[string]any{"fork_subagent": true}}},
		Environ:  []string{"COHORT_FLAG_AUTO_DREAM_MIN_HOURS=6"},
		CLI:      []string{"fork_subagent=off"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, name := range []string{flags.ForkSubagent, flags.AutoDreamMinHours, flags.AgentTeams} {
		v, _ := set.Get(name)
		fmt.Printf("%s=%s (%s)\n", name, v, v.Source)
	}
	// Output:
	// fork_subagent=off (--flag)
	// auto_dream_min_hours=6 (env COHORT_FLAG_AUTO_DREAM_MIN_HOURS)
	// agent_teams=on (default)
}
