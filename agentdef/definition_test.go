package agentdef

import (
	"regexp"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/permission"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestResolveMode(t *testing.T) {
	explore := BuiltIns(nil)[1]
	if explore.Name != Explore {
		t.Fatalf("built-in order changed: %s", explore.Name)
	}
	tests := []struct {
		name   string
		parent permission.Mode
		def    *Definition
		want   permission.Mode
	}{
		{"inherits when unset", permission.ModeDefault, &Definition{}, permission.ModeDefault},
		{"definition sets it", permission.ModeDefault, &Definition{PermissionMode: permission.ModePlan}, permission.ModePlan},
		{"definition beats a plan parent", permission.ModePlan, &Definition{PermissionMode: permission.ModeAcceptEdits}, permission.ModeAcceptEdits},
		{"bypass parent wins", permission.ModeBypassPermissions, &Definition{PermissionMode: permission.ModePlan}, permission.ModeBypassPermissions},
		{"acceptEdits parent wins", permission.ModeAcceptEdits, &Definition{PermissionMode: permission.ModeDefault}, permission.ModeAcceptEdits},
		{"dontAsk parent does not win", permission.ModeDontAsk, &Definition{PermissionMode: permission.ModeDefault}, permission.ModeDefault},
		{"read-only built-in stays in plan under bypass", permission.ModeBypassPermissions, explore, permission.ModePlan},
		{"custom plan agent under bypass", permission.ModeBypassPermissions, &Definition{PermissionMode: permission.ModePlan, ReadOnly: true}, permission.ModeBypassPermissions},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ResolveMode(tt.parent, tt.def); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestEffortFor(t *testing.T) {
	if got := (&Definition{Effort: "low"}).EffortFor("high"); got != "low" {
		t.Errorf("own effort: %q", got)
	}
	if got := (&Definition{}).EffortFor("high"); got != "high" {
		t.Errorf("inherited effort: %q", got)
	}
}

func TestBuiltIns(t *testing.T) {
	verdict := regexp.MustCompile(`(?m)^VERDICT: PASS\nVERDICT: FAIL\nVERDICT: PARTIAL$`)
	for _, d := range BuiltIns(nil) {
		if !NamePattern.MatchString(d.Name) || d.Description == "" || len(d.Prompt) < 200 {
			t.Errorf("%s: incomplete built-in", d.Name)
		}
		if d.ReadOnly && (d.Tools == nil || strings.Contains(strings.Join(d.Tools, ","), "Write")) {
			t.Errorf("%s: read-only with tools %v", d.Name, d.Tools)
		}
	}
	byName := map[string]*Definition{}
	for _, d := range BuiltIns(nil) {
		byName[d.Name] = d
	}
	if byName[Verification] != nil {
		t.Error("verification is on by default")
	}
	if gp := byName[GeneralPurpose]; gp.Tools != nil || gp.ReadOnly {
		t.Error("general-purpose is restricted")
	}
	if e := byName[Explore]; e.Model != "haiku" || e.PermissionMode != permission.ModePlan || !e.ReadOnly {
		t.Errorf("Explore: %+v", e)
	}
	for _, d := range BuiltIns(flagsOn(t, "verification_agent=on")) {
		if d.Name == Verification {
			if !d.Background || !d.ReadOnly || !verdict.MatchString(d.Prompt) {
				t.Errorf("verification: background %v, read-only %v, verdict lines present %v", d.Background, d.ReadOnly, verdict.MatchString(d.Prompt))
			}
			return
		}
	}
	t.Error("verification_agent=on does not add the verification agent")
}

func TestBuiltInsAreFresh(t *testing.T) {
	a := BuiltIns(nil)
	a[0].Tools = []string{"x"}
	a[1].Tools[0] = "mutated"
	b := BuiltIns(nil)
	if b[0].Tools != nil || b[1].Tools[0] == "mutated" {
		t.Error("BuiltIns shares state between calls")
	}
}
