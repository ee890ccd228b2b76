package redteam

import (
	"fmt"
	"testing"
)

// round is an outsider round's list of sessions (TestO8, TestO9): each
// group of rows runs in one session, sessions in the package's shared
// slots; a group with a check of its own runs it after its session, on
// the world its Setup kept (o8Capture), and a group holding a row on the
// round's known list is recorded, not failed (runKnown).
type round struct {
	// list and known name the round's known escapes (o8Known, o9Known).
	list  string
	known map[string]string
	// prefix keeps the round's captured worlds apart from another's.
	prefix string
	runs   []roundRun
}

type roundRun struct {
	attacks []*Attack
	mode    Mode
	loc     Location
	key     string
	after   func(t testing.TB, e *Env)
}

// pick returns the rows REDTEAM_ATTACK selects.
func (r *round) pick(rows ...*Attack) []*Attack {
	var out []*Attack
	for _, a := range rows {
		if o8Selected(a) {
			out = append(out, a)
		}
	}
	return out
}

// add runs attacks in one session (none if empty).
func (r *round) add(attacks []*Attack, mode Mode, loc Location) {
	if len(attacks) > 0 {
		r.runs = append(r.runs, roundRun{attacks: attacks, mode: mode, loc: loc})
	}
}

// addChecked runs attacks in one session whose world (setup, kept under
// a key of the run's own) after checks once it ended.
func (r *round) addChecked(attacks []*Attack, mode Mode, loc Location, setup func(e *Env) error, after func(t testing.TB, e *Env)) {
	if len(attacks) == 0 {
		return
	}
	key := fmt.Sprintf("%s%s-%s-%s", r.prefix, attacks[0].Name, mode, loc)
	var rows []*Attack
	for _, a := range attacks {
		c := *a
		c.Setup, c.Shares = o8Capture(key, setup), key
		rows = append(rows, &c)
	}
	r.runs = append(r.runs, roundRun{attacks: rows, mode: mode, loc: loc, key: key, after: after})
}

// run runs every session.
func (r *round) run(t *testing.T) {
	slotted(t, len(r.runs), func(i int) string {
		return fmt.Sprintf("%s-%s-%s", r.runs[i].attacks[0].Name, r.runs[i].mode, r.runs[i].loc)
	}, func(t *testing.T, i int) {
		run := r.runs[i]
		var after func(t testing.TB)
		if run.after != nil {
			after = func(t testing.TB) { run.after(t, o8Env(t, run.key)) }
		}
		if runKnown(t, r.list, r.known, run.attacks, run.mode, run.loc, after) {
			return
		}
		RunGroup(t, run.attacks, run.mode, run.loc)
		if after != nil {
			after(t)
		}
	})
}
