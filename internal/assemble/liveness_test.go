package assemble

import (
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/settings"
)

// TestTeamLiveness: "teamLiveness" sets the heartbeat and the dead-after
// window, the later layer winning key by key; what is not a positive
// duration, or a window not longer than a heartbeat, is an error naming
// the file and line.
func TestTeamLiveness(t *testing.T) {
	t.Parallel()
	plan := func(files ...string) *Plan {
		s := &settings.Settings{}
		for i, f := range files {
			scope := []settings.Scope{settings.ScopeUser, settings.ScopeProject}[i]
			s.Add(scope, "/s"+string(rune('0'+i))+".json", "/p", []byte(f))
		}
		return &Plan{Settings: SettingsPlan{Loaded: s}}
	}
	got, err := plan(`{"teamLiveness": {"heartbeat": "2s", "deadAfter": "30s"}}`, `{"teamLiveness": {"deadAfter": "5s"}}`).teamLiveness()
	if err != nil || got != (liveness{Heartbeat: 2 * time.Second, DeadAfter: 5 * time.Second}) {
		t.Errorf("layered: %+v, %v", got, err)
	}
	if got, err := plan(`{}`).teamLiveness(); err != nil || got != (liveness{}) {
		t.Errorf("unset: %+v, %v; want zero, the teammate package's defaults", got, err)
	}
	for _, tc := range []struct{ file, want string }{
		{`{"teamLiveness": "fast"}`, `/s0.json:1: "teamLiveness" must be an object`},
		{`{"teamLiveness": {"heartbeat": "soon"}}`, `/s0.json:1: teamLiveness.heartbeat: time: invalid duration "soon" (write a duration such as "1s")`},
		{`{"teamLiveness": {"deadAfter": "-1s"}}`, `teamLiveness.deadAfter: "-1s" is not positive`},
		{`{"teamLiveness": {"heartbeat": "20s"}}`, `/s0.json:1: teamLiveness: deadAfter (10s) must be longer than heartbeat (20s)`},
	} {
		if _, err := plan(tc.file).teamLiveness(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want %q", tc.file, err, tc.want)
		}
	}
}
