package permission

import (
	"os"
	"path/filepath"
	"testing"
)

// TestOwnTaskOutput: an agent reads the output file of its own task under
// $COHORT_HOME without asking; another agent's, another session's, a path
// that only leads there (.., a link planted in the project) and a file
// swapped for a link after it was allowed still ask, and deny rules win.
func TestOwnTaskOutput(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.write("home/.cohort/tmp/s1/tasks/bmine.output", "mine\n")
	f.write("home/.cohort/tmp/s1/tasks/bsibling.output", "sibling\n")
	f.write("home/.cohort/tmp/s2/tasks/bother.output", "other session\n")
	f.write("home/.cohort/tmp/s1/tasks/bswap.output", "swapped later\n")
	mine := filepath.Join(f.cohortHome, "tmp/s1/tasks/bmine.output")
	sibling := filepath.Join(f.cohortHome, "tmp/s1/tasks/bsibling.output")
	other := filepath.Join(f.cohortHome, "tmp/s2/tasks/bother.output")
	swap := filepath.Join(f.cohortHome, "tmp/s1/tasks/bswap.output")
	f.symlink(other, "proj/looks-mine.output")

	grep := func(path string) Request { return Request{Tool: "Grep", Input: input("pattern", "x", "path", path)} }
	tests := []struct {
		name string
		mode Mode
		deny []string
		req  Request
		want Behavior
	}{
		{"own output, Read", ModeDefault, nil, read(mine), Allow},
		{"own output, Grep", ModeDefault, nil, grep(mine), Allow},
		{"own output in plan", ModePlan, nil, read(mine), Allow},
		{"own output in dontAsk", ModeDontAsk, nil, read(mine), Allow},
		{"a sibling's output", ModeDefault, nil, read(sibling), Ask},
		{"another session's output", ModeDefault, nil, read(other), Ask},
		{"another session's, via ..", ModeDefault, nil, read(filepath.Join(filepath.Dir(mine), "..", "..", "s2", "tasks", "bother.output")), Ask},
		{"own dir, climbing with ..", ModeDefault, nil, read(mine + "/../bsibling.output"), Ask},
		{"a link in the project to another session's", ModeDefault, nil, read(f.path("proj/looks-mine.output")), Ask},
		{"another session's, dontAsk", ModeDontAsk, nil, read(other), Deny},
		{"writing own output", ModeAcceptEdits, nil, edit(mine), Ask},
		{"swapped for a link since", ModeDefault, nil, read(swap), Ask},
		{"deny rule wins", ModeDefault, []string{"Read(//" + mine[1:] + ")"}, read(mine), Deny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := f.checkerWith(tt.mode, nil, tt.deny, nil)
			c.AllowOwnRead(mine)
			c.AllowOwnRead(swap)
			if tt.name == "swapped for a link since" {
				// The agent's own output replaced by a link to another
				// session's output after it was allowed.
				if err := os.Remove(swap); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(other, swap); err != nil {
					t.Fatal(err)
				}
			}
			if d := f.decide(c, tt.req); d.Behavior != tt.want {
				t.Fatalf("%s: %s (%s), want %s", tt.req.Tool, d.Behavior, d.Reason, tt.want)
			}
		})
	}
	// A child's checker (a subagent's) does not inherit what its parent
	// may read, and the parent does not gain what the child may.
	parent := f.checkerWith(ModeDefault, nil, nil, nil)
	parent.AllowOwnRead(mine)
	child := parent.ForChild("")
	child.AllowOwnRead(sibling)
	for _, c := range []struct {
		who  string
		c    *Checker
		path string
	}{{"child reading the parent's", child, mine}, {"parent reading the child's", parent, sibling}} {
		if d := f.decide(c.c, read(c.path)); d.Behavior != Ask {
			t.Errorf("%s: %s (%s), want ask", c.who, d.Behavior, d.Reason)
		}
	}
	// Without AllowOwnRead the read asks: the carve-out is what allows.
	if d := f.decide(f.checkerWith(ModeDefault, nil, nil, nil), read(mine)); d.Behavior != Ask {
		t.Fatalf("without AllowOwnRead: %s, want ask", d.Behavior)
	}
}
