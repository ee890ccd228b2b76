package assemble

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/teammate"
)

// liveness is the "teamLiveness" setting: how often a team's members
// publish a heartbeat on the team's status board, and how old one may grow
// before its member counts as dead — a teammate, reported to the lead with
// its tasks released; the lead, which stops its teammates on other
// machines. Zero leaves package teammate's defaults (DefaultHeartbeat and
// DefaultDeadAfter). Tests shorten both so that they need not wait.
type liveness struct {
	Heartbeat time.Duration
	DeadAfter time.Duration
}

// teamLiveness reads "teamLiveness": {"heartbeat": "1s", "deadAfter":
// "10s"}, the later settings layer winning key by key. A value that is not
// a positive duration, or a deadAfter not above the heartbeat (every
// member would be dead between two beats), is an error naming the file and
// line.
func (p *Plan) teamLiveness() (liveness, error) {
	var out liveness
	var from []string // where the values came from
	secs := p.Settings.Loaded.Section("teamLiveness")
	for i := len(secs) - 1; i >= 0; i-- {
		sec := secs[i]
		var v struct {
			Heartbeat string `json:"heartbeat"`
			DeadAfter string `json:"deadAfter"`
		}
		if err := json.Unmarshal(sec.Value, &v); err != nil {
			return liveness{}, fmt.Errorf("%s:%d: \"teamLiveness\" must be an object {\"heartbeat\": \"1s\", \"deadAfter\": \"10s\"}: %v", sec.Source.Path, sec.Line, err)
		}
		for _, f := range []struct {
			key, val string
			dst      *time.Duration
		}{{"heartbeat", v.Heartbeat, &out.Heartbeat}, {"deadAfter", v.DeadAfter, &out.DeadAfter}} {
			if f.val == "" || *f.dst != 0 {
				continue
			}
			d, err := time.ParseDuration(f.val)
			if err == nil && d <= 0 {
				err = fmt.Errorf("%q is not positive", f.val)
			}
			if err != nil {
				return liveness{}, fmt.Errorf("%s:%d: teamLiveness.%s: %v (write a duration such as \"1s\")", sec.Source.Path, sec.Line, f.key, err)
			}
			*f.dst = d
			from = append(from, fmt.Sprintf("%s:%d", sec.Source.Path, sec.Line))
		}
	}
	hb, dead := out.Heartbeat, out.DeadAfter
	if hb == 0 {
		hb = teammate.DefaultHeartbeat
	}
	if dead == 0 {
		dead = teammate.DefaultDeadAfter
	}
	if dead <= hb {
		return liveness{}, fmt.Errorf("%s: teamLiveness: deadAfter (%s) must be longer than heartbeat (%s), or every member counts as dead between two heartbeats; make deadAfter several heartbeats long", strings.Join(slices.Compact(from), ", "), dead, hb)
	}
	return out, nil
}
