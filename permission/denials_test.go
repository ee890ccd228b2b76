package permission

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// ReadDenials turns deny rules into the paths that exist now, and says
// what that leaves readable.
func TestReadDenials(t *testing.T) {
	f := newFixture(t)
	f.write("proj/sub/a.pem", "pem")
	f.write("proj/deep/er/b.pem", "pem")
	f.write("proj/.git/objects/c.pem", "git's")
	f.write("proj/.env", "env")
	f.write("proj/sub/.env", "env")
	tests := []struct {
		name      string
		deny      []string
		paths     []string
		uncovered []string // substrings, one per expected note
	}{
		{name: "literal dir", deny: []string{"Read(./secrets/**)"}, paths: []string{"proj/secrets"}},
		{name: "literal file", deny: []string{"Read(./src/main.go)"}, paths: []string{"proj/src/main.go"}},
		{name: "pattern", deny: []string{"Read(**/*.pem)"}, paths: []string{"proj/deep/er/b.pem", "proj/sub/a.pem"},
			uncovered: []string{"Read(**/*.pem) (" + f.path("proj/.cohort/settings.json") + ":1): what it matches now under " + f.cwd + " is hidden; files that match it later"}},
		{name: "floating name", deny: []string{"Read(.env)"}, paths: []string{"proj/.env", "proj/sub/.env"},
			uncovered: []string{"Read(.env)"}},
		{name: "missing literal", deny: []string{"Read(./later/**)"},
			uncovered: []string{f.path("proj/later") + " does not exist"}},
		{name: "missing file", deny: []string{"Read(./config.key)"},
			uncovered: []string{f.path("proj/config.key") + " does not exist"}},
		{name: "git named", deny: []string{"Read(./.git/**/*.pem)"}, paths: []string{"proj/.git/objects/c.pem"},
			uncovered: []string{"Read(./.git/**/*.pem)"}},
		{name: "whole tool", deny: []string{"Read"}, uncovered: []string{"cannot hide everything"}},
		{name: "other tools", deny: []string{"Edit(./src/**)", "Bash(rm:*)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := f.checkerWith(ModeDefault, nil, tt.deny, nil)
			got := c.ReadDenials(t.Context(), "", DefaultDenialLimits)
			var want []string
			for _, p := range tt.paths {
				want = append(want, f.path(p))
			}
			if diff := cmp.Diff(want, got.Paths); diff != "" {
				t.Errorf("paths (-want +got):\n%s", diff)
			}
			if len(got.Uncovered) != len(tt.uncovered) {
				t.Fatalf("uncovered %q, want %d notes like %q", got.Uncovered, len(tt.uncovered), tt.uncovered)
			}
			for i, w := range tt.uncovered {
				if !strings.Contains(got.Uncovered[i], w) || !strings.Contains(got.Uncovered[i], "the permission check still applies") {
					t.Errorf("note %q lacks %q", got.Uncovered[i], w)
				}
			}
		})
	}
}

// The search is bounded; reaching a bound is reported, never silent.
func TestReadDenialsLimits(t *testing.T) {
	f := newFixture(t)
	for _, n := range []string{"a", "b", "c", "d"} {
		f.write("proj/keys/"+n+".pem", "pem")
	}
	c := f.checkerWith(ModeDefault, nil, []string{"Read(**/*.pem)", "Read(//etc/**/*.key)"}, nil)
	for name, lim := range map[string]DenialLimits{"paths": {Entries: 1000, Paths: 2}, "entries": {Entries: 3, Paths: 100}} {
		t.Run(name, func(t *testing.T) {
			got := c.ReadDenials(t.Context(), "", lim)
			if len(got.Paths) > 2 {
				t.Errorf("paths %q beyond the limit", got.Paths)
			}
			all := strings.Join(got.Uncovered, "\n")
			if !strings.Contains(all, "Read(**/*.pem)") || !strings.Contains(all, "stopped at its limit") {
				t.Errorf("the limit is not reported for the pattern:\n%s", all)
			}
			if !strings.Contains(all, "Read(//etc/**/*.key)") || !strings.Contains(all, "nothing it matches under /etc is hidden") {
				t.Errorf("the pattern after the limit is not reported as uncovered:\n%s", all)
			}
		})
	}
}
