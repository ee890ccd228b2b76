package team

import (
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/internal/filelock"
	"github.com/cohort-dev/cohort/internal/jsonfile"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

func TestCreateWritesTeamLayout(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	tm := mustCreate(t, s, "alpha")
	for _, p := range []string{"config.json", "tasks", "inboxes/team-lead.jsonl"} {
		if _, err := os.Stat(filepath.Join(tm.Dir, p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	lead, ok := tm.Config.Member(LeadName)
	if !ok {
		t.Fatalf("no lead member in %+v", tm.Config.Members)
	}
	want := Member{
		AgentID: "team-lead@alpha", Name: "team-lead", AgentType: "team-lead",
		JoinedAt: tm.Config.CreatedAt, Cwd: "/work", SessionID: "sess-1", IsActive: true,
	}
	if diff := cmp.Diff(want, lead); diff != "" {
		t.Errorf("lead (-want +got):\n%s", diff)
	}
	if tm.Config.LeadAgentID != "team-lead@alpha" || tm.Config.LeadSessionID != "sess-1" {
		t.Errorf("lead ids: %q %q", tm.Config.LeadAgentID, tm.Config.LeadSessionID)
	}
	loaded, err := s.Load("alpha")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(tm.Config, loaded.Config); diff != "" {
		t.Errorf("Load differs from Create (-create +load):\n%s", diff)
	}
}

// TestConfigFileFormat pins the bytes of a team file: Claude Code's field
// names, epoch milliseconds, arrays never null.
func TestConfigFileFormat(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := t.Context()
	tm := mustCreate(t, s, "alpha")
	if _, err := s.AddMember(ctx, "alpha", MemberSpec{
		Name: "alice", AgentType: "general-purpose", Model: "sonnet", Prompt: "Review <the> parser & tests",
		PlanModeRequired: true, TmuxPaneID: "%3", Cwd: "/work/wt", WorktreePath: "/work/wt",
		SessionID: "sess-2", Subscriptions: []string{"builds"}, BackendType: BackendTmux, Mode: "acceptEdits",
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddAllowedPath(ctx, "alpha", AllowedPath{Path: "/work/src/**", ToolName: "Edit", AddedBy: "team-lead"}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(tm.Dir, ConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "config.golden")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("config.json (-golden +got); run with -update if intended:\n%s", diff)
	}
}

func TestCreateRefusesExistingTeam(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	mustCreate(t, s, "alpha")
	_, err := s.Create(t.Context(), CreateSpec{Name: "alpha"})
	if !errors.Is(err, ErrExists) {
		t.Fatalf("second Create: %v, want ErrExists", err)
	}
}

func TestInvalidNamesRefused(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	mustCreate(t, s, "ok")
	long := strings.Repeat("a", 65)
	for _, name := range []string{"../x", "a/b", "", long, ".hidden", "-x", "a b", "a\x00b", "..", "é"} {
		if _, err := s.Create(t.Context(), CreateSpec{Name: name}); !errors.Is(err, ErrInvalidName) {
			t.Errorf("Create(%q): %v, want ErrInvalidName", name, err)
		}
		if _, err := s.Load(name); !errors.Is(err, ErrInvalidName) {
			t.Errorf("Load(%q): %v, want ErrInvalidName", name, err)
		}
		if err := s.Delete(t.Context(), name); !errors.Is(err, ErrInvalidName) {
			t.Errorf("Delete(%q): %v, want ErrInvalidName", name, err)
		}
		if _, err := s.AddMember(t.Context(), "ok", MemberSpec{Name: name}); !errors.Is(err, ErrInvalidName) {
			t.Errorf("AddMember(%q): %v, want ErrInvalidName", name, err)
		}
	}
	if _, err := s.Create(t.Context(), CreateSpec{Name: strings.Repeat("a", 64)}); err != nil {
		t.Errorf("a 64-character name: %v", err)
	}
	entries, _ := os.ReadDir(filepath.Dir(s.Root()))
	for _, e := range entries {
		if e.Name() == "x" {
			t.Errorf("a path-traversing name created %s", e.Name())
		}
	}
}

func TestLeadAgentIDMustBelongToTeam(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	for _, id := range []string{"boss@other", "boss", "../x@alpha"} {
		if _, err := s.Create(t.Context(), CreateSpec{Name: "alpha", LeadAgentID: id}); err == nil {
			t.Errorf("LeadAgentID %q accepted", id)
		}
	}
	tm, err := s.Create(t.Context(), CreateSpec{Name: "alpha", LeadAgentID: "boss@alpha"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tm.Config.Member("boss"); !ok || tm.Config.LeadAgentID != "boss@alpha" {
		t.Errorf("lead: %+v", tm.Config)
	}
	if _, err := os.Stat(filepath.Join(tm.Dir, InboxesDir, "boss.jsonl")); err != nil {
		t.Errorf("lead inbox: %v", err)
	}
}

func TestListAndDelete(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	if names, err := s.List(); err != nil || len(names) != 0 {
		t.Fatalf("List of an empty root: %v, %v", names, err)
	}
	mustCreate(t, s, "beta")
	mustCreate(t, s, "alpha")
	// A crashed Create leaves a directory without config.json: not listed.
	if err := os.Mkdir(filepath.Join(s.Root(), "crashed"), 0o700); err != nil {
		t.Fatal(err)
	}
	names, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"alpha", "beta"}, names); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	if _, err := s.Load("crashed"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Load of an incomplete team: %v, want ErrNotFound", err)
	}
	for _, n := range []string{"alpha", "crashed"} {
		if err := s.Delete(t.Context(), n); err != nil {
			t.Fatalf("Delete(%s): %v", n, err)
		}
	}
	if _, err := s.Load("alpha"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Load after Delete: %v, want ErrNotFound", err)
	}
	if err := s.Delete(t.Context(), "alpha"); !errors.Is(err, ErrNotFound) {
		t.Errorf("second Delete: %v, want ErrNotFound", err)
	}
	if _, err := s.Update(t.Context(), "alpha", func(*Config) error { return nil }); !errors.Is(err, ErrNotFound) {
		t.Errorf("Update after Delete: %v, want ErrNotFound", err)
	}
	entries, _ := os.ReadDir(s.Root())
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if diff := cmp.Diff([]string{"beta"}, left); diff != "" {
		t.Errorf("root after deletes (-want +got):\n%s", diff)
	}
	// The name is free again.
	mustCreate(t, s, "alpha")
}

func TestUpdateErrorLeavesFileUnchanged(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	tm := mustCreate(t, s, "alpha")
	path := filepath.Join(tm.Dir, ConfigFile)
	before, _ := os.ReadFile(path)
	boom := errors.New("boom")
	if _, err := s.Update(t.Context(), "alpha", func(c *Config) error {
		c.Description = "changed"
		return boom
	}); !errors.Is(err, boom) {
		t.Fatalf("Update: %v", err)
	}
	// A change that would make the file invalid is refused too.
	if _, err := s.Update(t.Context(), "alpha", func(c *Config) error {
		c.Members[0].Name = "../evil"
		return nil
	}); err == nil {
		t.Fatal("Update accepted an invalid member name")
	}
	after, _ := os.ReadFile(path)
	if diff := cmp.Diff(string(before), string(after)); diff != "" {
		t.Errorf("file changed (-before +after):\n%s", diff)
	}
}

func TestInvalidJSONNamedAndNeverOverwritten(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		content  string
		wantLine string // "path:line:col" suffix, or "" when no position applies
		wantText string
	}{
		{"syntax", "{\n  \"name\": \"alpha\",\n  \"members\": [}\n", ":3:15", "invalid JSON"},
		{"truncated", "{\n  \"name\": \"alpha\",\n", "", "invalid JSON"},
		{"type", "{\n  \"name\": \"alpha\",\n  \"members\": {}\n}\n", ":3:", "members: expected an array, found object"},
		{"trailing", "{\"name\": \"alpha\"}\n{}\n", ":2:1", "unexpected data after the JSON value"},
		{"empty", "", "", "the file is empty"},
		{"null", "null\n", "", "holds null"},
		{"wrong name", `{"name": "beta", "members": []}`, "", `the team directory is "alpha"`},
		{"bad member", `{"name": "alpha", "members": [{"name": "../x", "agentId": "../x@alpha"}]}`, "", "members[0].name"},
		{"bad agent id", `{"name": "alpha", "members": [{"name": "bob", "agentId": "bob@beta"}]}`, "", "agentId"},
		{"duplicate active", `{"name": "alpha", "members": [{"name": "bob", "agentId": "bob@alpha"}, {"name": "Bob", "agentId": "Bob@alpha"}]}`, "", "both active"},
		{"bad time", `{"name": "alpha", "createdAt": 1e300}`, "", "createdAt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			tm := mustCreate(t, s, "alpha")
			path := filepath.Join(tm.Dir, ConfigFile)
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := s.Load("alpha")
			var fe *jsonfile.Error
			if !errors.As(err, &fe) {
				t.Fatalf("Load: %v, want a *jsonfile.Error", err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, path+tt.wantLine) || !strings.Contains(msg, tt.wantText) || !strings.Contains(msg, "fix the file") {
				t.Errorf("error %q: want prefix %q, text %q and advice", msg, path+tt.wantLine, tt.wantText)
			}
			calls := 0
			if _, err := s.Update(t.Context(), "alpha", func(*Config) error { calls++; return nil }); !errors.As(err, &fe) {
				t.Errorf("Update: %v, want a *jsonfile.Error", err)
			}
			if _, err := s.AddMember(t.Context(), "alpha", MemberSpec{Name: "carol"}); !errors.As(err, &fe) {
				t.Errorf("AddMember: %v, want a *jsonfile.Error", err)
			}
			if calls != 0 {
				t.Error("Update ran its function on an invalid file")
			}
			got, _ := os.ReadFile(path)
			if string(got) != tt.content {
				t.Errorf("the invalid file was overwritten: %q", got)
			}
		})
	}
}

func TestUnknownFieldsPreserved(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	tm := mustCreate(t, s, "alpha")
	path := filepath.Join(tm.Dir, ConfigFile)
	// A file as a newer Claude Code might write it: extra fields at every
	// level, and a member without isActive (which reads as active).
	file := `{
  "name": "alpha",
  "description": "d",
  "createdAt": 1750000000000,
  "leadAgentId": "team-lead@alpha",
  "leadSessionId": "s",
  "hiddenPaneIds": ["%9"],
  "teamAllowedPaths": [{"path": "/p", "toolName": "Edit", "addedBy": "team-lead", "addedAt": 1750000000001, "scope": {"deep": [1, 2]}}],
  "members": [
    {"agentId": "team-lead@alpha", "name": "team-lead", "agentType": "team-lead", "model": "opus", "joinedAt": 1750000000000, "tmuxPaneId": "", "cwd": "/w", "subscriptions": [], "isActive": true},
    {"agentId": "old@alpha", "name": "old", "agentType": "Explore", "model": "haiku", "joinedAt": 1750000000002, "tmuxPaneId": "in-process", "cwd": "/w", "subscriptions": [], "backendType": "in-process", "lastSeen": "yesterday", "quirk": null}
  ],
  "futureField": {"a": "<b>"},
  "zeta": 7
}
`
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := s.Update(t.Context(), "alpha", func(c *Config) error {
		c.Description = "changed"
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := cfg.Member("old"); !ok || !m.IsActive {
		t.Errorf("member without isActive: %+v, %v; want active", m, ok)
	}
	data, _ := os.ReadFile(path)
	got, err := ParseConfig(path, data)
	if err != nil {
		t.Fatal(err)
	}
	wantTop := map[string]string{"futureField": `{"a":"<b>"}`, "zeta": "7"}
	if diff := cmp.Diff(wantTop, stringify(got.Extra)); diff != "" {
		t.Errorf("top-level extras (-want +got):\n%s", diff)
	}
	wantMember := map[string]string{"lastSeen": `"yesterday"`, "quirk": "null"}
	if diff := cmp.Diff(wantMember, stringify(got.Members[1].Extra)); diff != "" {
		t.Errorf("member extras (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"scope": `{"deep":[1,2]}`}, stringify(got.TeamAllowedPaths[0].Extra)); diff != "" {
		t.Errorf("allowed path extras (-want +got):\n%s", diff)
	}
	if got.Description != "changed" || got.Members[0].Model != "opus" || got.HiddenPaneIDs[0] != "%9" {
		t.Errorf("known fields lost: %+v", got)
	}
}

// stringify compacts raw JSON values for comparison.
func stringify(m map[string]jsonRaw) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[k] = compactJSON(v)
	}
	return out
}

func TestUpdateHonoursContextWhileLocked(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	tm := mustCreate(t, s, "alpha")
	// Hold the team lock as another process would.
	lk, err := filelock.Sidecar(t.Context(), filepath.Join(tm.Dir, configLock), false, s.cfg.LockTimeout)
	if err != nil {
		t.Fatal(err)
	}
	defer lk.Unlock()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = s.Update(ctx, "alpha", func(*Config) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Update with a held lock and a cancelled context: %v", err)
	}
}
