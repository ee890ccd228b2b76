package configtrust

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// envOf is a getenv reading only vars.
func envOf(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func TestUserDirAndPlaces(t *testing.T) {
	for _, c := range []struct {
		name string
		vars map[string]string
		want string
	}{
		{"default under HOME", map[string]string{"HOME": "/h"}, "/h/.local/state/cohort/trust"},
		{"XDG_STATE_HOME", map[string]string{"HOME": "/h", "XDG_STATE_HOME": "/s/"}, "/s/cohort/trust"},
		{"relative XDG_STATE_HOME is ignored", map[string]string{"HOME": "/h", "XDG_STATE_HOME": "s"}, "/h/.local/state/cohort/trust"},
		{"no HOME", map[string]string{}, ""},
		{"relative HOME", map[string]string{"HOME": "h"}, ""},
	} {
		if got := UserDir(envOf(c.vars)); got != c.want {
			t.Errorf("%s: UserDir = %q, want %q", c.name, got, c.want)
		}
	}
	got := At("/h/.cohort", envOf(map[string]string{"HOME": "/h"}))
	if want := (Places{"/h/.local/state/cohort/trust", "/h/.cohort/trust"}); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("At = %q, want %q", got, want)
	}
	if got := At("/c", envOf(map[string]string{"HOME": "/h", "XDG_STATE_HOME": "/c/.."})); len(got) != 2 {
		t.Errorf("At = %q", got)
	}
	if got := At("", envOf(map[string]string{})); len(got) != 0 {
		t.Errorf("no HOME and no COHORT_HOME: At = %q, want none", got)
	}
}

// o10-cohome-switch at the registry's level: what a session recorded
// through one COHORT_HOME is known to a session with another one (a
// second profile, a fresh install), as long as both are the user's.
func TestAnotherCohortHomeSeesTheRoots(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	env := envOf(map[string]string{"HOME": home})
	first, second := filepath.Join(home, ".cohort"), filepath.Join(t.TempDir(), "fresh")
	sub := filepath.Join(proj, "src")
	now := time.Date(2026, 12, 7, 17, 0, 0, 0, time.UTC)
	if err := Record(t.Context(), At(first, env), []Root{{Path: proj, Frozen: true}}, now); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(sub, ".cohort", "settings.json")
	if v := Open(At(second, env)).Check(sub, file, []byte(`{"sandbox": false}`)); v == nil || v.Root != resolve(proj) {
		t.Fatalf("a session with another COHORT_HOME obeys %s (verdict %+v)", file, v)
	}
	if v := Open(Places{Dir(second)}).Writable(sub); v != nil {
		t.Fatalf("the fresh COHORT_HOME's own registry should know nothing (the test proves nothing): %+v", v)
	}
	// The approval given under the second home holds under the first:
	// it is the person's word on the file's bytes.
	if err := Approve(t.Context(), At(second, env), file, []byte("{}"), now); err != nil {
		t.Fatal(err)
	}
	if v := Open(At(first, env)).Check(sub, file, []byte("{}")); v != nil {
		t.Errorf("approved under one COHORT_HOME, refused under the other: %+v", v)
	}
	// A later approval of other content wins over an earlier one kept
	// in only one registry (as an older Cohort would have left it).
	if err := Approve(t.Context(), Places{Dir(first)}, file, []byte(`{"a": 1}`), now.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	b := Open(At(first, env))
	if v := b.Check(sub, file, []byte("{}")); v != nil {
		t.Errorf("the latest approval should count: %+v", v)
	}
	if v := b.Check(sub, file, []byte(`{"a": 1}`)); v == nil {
		t.Error("an earlier approval, replaced since, still counts")
	}
}

// A root recorded frozen in one registry and open in the other is open;
// one registry that cannot be read fails the whole Book closed.
func TestPlacesMergeTheWeakerAndFailClosed(t *testing.T) {
	a, b, proj := t.TempDir(), t.TempDir(), t.TempDir()
	now := time.Now()
	if err := Record(t.Context(), Places{a}, []Root{{Path: proj, Frozen: true}}, now); err != nil {
		t.Fatal(err)
	}
	if err := Record(t.Context(), Places{b}, []Root{{Path: proj}}, now); err != nil {
		t.Fatal(err)
	}
	if v := Open(Places{a, b}).Writable(proj); v == nil {
		t.Error("a root open in one registry is frozen in the merged Book")
	}
	if err := os.WriteFile(filepath.Join(b, "approved.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if v := Open(Places{a, b}).Writable(t.TempDir()); v == nil || !strings.Contains(v.Why(), filepath.Join(b, "approved.json")) {
		t.Errorf("a broken registry should fail closed, naming the file: %+v", v)
	}
}

// A registry that cannot be written (a read-only HOME) is an error, and
// the other is written all the same.
func TestOneUnwritableRegistryLeavesTheOther(t *testing.T) {
	ro, ok, proj := filepath.Join(t.TempDir(), "ro"), t.TempDir(), t.TempDir()
	if err := os.WriteFile(ro, nil, 0o600); err != nil { // a file where the directory should be
		t.Fatal(err)
	}
	err := Record(t.Context(), Places{filepath.Join(ro, "trust"), ok}, []Root{{Path: proj, Frozen: true}}, time.Now())
	if err == nil || !strings.Contains(err.Error(), ro) {
		t.Fatalf("Record into an unwritable registry: err %v, want one naming %s", err, ro)
	}
	if v := Open(Places{ok}).Writable(filepath.Join(proj, "src")); v == nil {
		t.Error("the writable registry was not written")
	}
}

// The top-level record in the user's registry refuses a file a model
// created while a session with another COHORT_HOME ran, though the
// fresh COHORT_HOME's own record has never seen the root.
func TestTopRecordHoldsAcrossCohortHomes(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	env := envOf(map[string]string{"HOME": home})
	first, second := filepath.Join(home, ".cohort"), filepath.Join(t.TempDir(), "fresh")
	now := time.Now()
	if err := Begin(t.Context(), At(first, env), "s1", []string{proj}, now); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(proj, ".mcp.json")
	data := []byte(`{"mcpServers": {"x": {"command": "sh", "sandbox": false}}}`)
	if err := os.WriteFile(file, data, 0o600); err != nil { // the model, during s1
		t.Fatal(err)
	}
	if err := End(t.Context(), At(first, env), "s1", []string{proj}, now); err != nil {
		t.Fatal(err)
	}
	if v := Open(Places{Dir(second)}).CheckFile(proj, file); v != nil {
		t.Fatalf("the fresh COHORT_HOME alone should not know the file (the test proves nothing): %+v", v)
	}
	if v := Open(At(second, env)).CheckFile(proj, file); v == nil || v.top != "appeared" {
		t.Errorf("a session with another COHORT_HOME obeys the .mcp.json a model created: %+v", v)
	}
}

// A registry lying inside a tree agents could write (an XDG_STATE_HOME
// in the cache, set after a session let commands write there) vouches
// for no file: its roots count, its approvals do not.
func TestARegistryWhereAgentsWriteApprovesNothing(t *testing.T) {
	cache, proj, home := t.TempDir(), t.TempDir(), t.TempDir()
	inCache := filepath.Join(cache, "state", "cohort", "trust")
	sub := filepath.Join(proj, "src")
	file := filepath.Join(sub, ".cohort", "settings.json")
	now := time.Now()
	if err := Record(t.Context(), Places{Dir(home)}, []Root{{Path: proj, Frozen: true}, {Path: cache}}, now); err != nil {
		t.Fatal(err)
	}
	// What a command wrote into the cache before it was the registry.
	if err := Approve(t.Context(), Places{inCache}, file, []byte("{}"), now); err != nil {
		t.Fatal(err)
	}
	if v := Open(Places{inCache, Dir(home)}).Check(sub, file, []byte("{}")); v == nil {
		t.Error("an approval found in a registry inside the writable cache was believed")
	}
	if err := Approve(t.Context(), Places{inCache, Dir(home)}, file, []byte("{}"), now); err != nil {
		t.Fatal(err)
	}
	if v := Open(Places{inCache, Dir(home)}).Check(sub, file, []byte("{}")); v != nil {
		t.Errorf("approved in COHORT_HOME's registry too, still refused: %+v", v)
	}
}

// A session started in the home makes it a (frozen) root holding both
// registries, which that session bound read-only: approvals there still
// count.
func TestRegistriesInAHomeThatWasAWorkingDirectory(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	at := At(filepath.Join(home, ".cohort"), envOf(map[string]string{"HOME": home}))
	sub := filepath.Join(proj, "src")
	file := filepath.Join(sub, ".cohort", "settings.json")
	if err := Record(t.Context(), at, []Root{{Path: home, Frozen: true}, {Path: proj, Frozen: true}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := Approve(t.Context(), at, file, []byte("{}"), time.Now()); err != nil {
		t.Fatal(err)
	}
	if v := Open(at).Check(sub, file, []byte("{}")); v != nil {
		t.Errorf("an approval in the home's registries was not believed: %+v", v)
	}
}
