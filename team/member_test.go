package team

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func memberNames(ms []Member) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Name
	}
	return out
}

func memberColors(ms []Member) []string {
	var out []string
	for _, m := range ms {
		if m.Name != LeadName {
			out = append(out, m.Color)
		}
	}
	return out
}

func TestAddMemberAssignsIdentity(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	tm := mustCreate(t, s, "alpha")
	m, err := s.AddMember(t.Context(), "alpha", MemberSpec{Name: "alice", AgentType: "Explore", BackendType: BackendInProcess})
	if err != nil {
		t.Fatal(err)
	}
	want := Member{
		AgentID: "alice@alpha", Name: "alice", AgentType: "Explore", Color: "red",
		JoinedAt: t0.Add(2e9), BackendType: BackendInProcess, IsActive: true,
	}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("member (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(tm.Dir, InboxesDir, "alice.jsonl")); err != nil {
		t.Errorf("inbox not registered: %v", err)
	}
	got, err := s.Member("alpha", "alice")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Member (-want +got):\n%s", diff)
	}
	if _, err := s.AddMember(t.Context(), "alpha", MemberSpec{Name: "x", BackendType: "screen"}); err == nil {
		t.Error("an unknown backend type was accepted")
	}
	if _, err := s.AddMember(t.Context(), "nope", MemberSpec{Name: "x"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("AddMember to a missing team: %v, want ErrNotFound", err)
	}
}

func TestColorsRoundRobin(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	mustCreate(t, s, "alpha")
	for i := range 10 {
		if _, err := s.AddMember(t.Context(), "alpha", MemberSpec{Name: fmt.Sprintf("m%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	ms, err := s.ActiveMembers("alpha")
	if err != nil {
		t.Fatal(err)
	}
	want := append(slices.Clone(Palette), "red", "blue")
	if diff := cmp.Diff(want, memberColors(ms)); diff != "" {
		t.Errorf("colors (-want +got):\n%s", diff)
	}
	if ms[0].Color != "" {
		t.Errorf("the lead has color %q, want none", ms[0].Color)
	}
}

func TestDuplicateActiveNameRefused(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	mustCreate(t, s, "alpha")
	ctx := t.Context()
	if _, err := s.AddMember(ctx, "alpha", MemberSpec{Name: "alice"}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"alice", "ALICE", LeadName} {
		if _, err := s.AddMember(ctx, "alpha", MemberSpec{Name: n}); !errors.Is(err, ErrMemberExists) {
			t.Errorf("AddMember(%q): %v, want ErrMemberExists", n, err)
		}
	}
	// Once alice is inactive, a new alice replaces the old entry.
	if _, err := s.SetActive(ctx, "alpha", "alice", false); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddMember(ctx, "alpha", MemberSpec{Name: "bob"}); err != nil {
		t.Fatal(err)
	}
	again, err := s.AddMember(ctx, "alpha", MemberSpec{Name: "alice", AgentType: "Plan"})
	if err != nil {
		t.Fatalf("re-adding an inactive member: %v", err)
	}
	tm, _ := s.Load("alpha")
	if diff := cmp.Diff([]string{LeadName, "bob", "alice"}, memberNames(tm.Config.Members)); diff != "" {
		t.Errorf("members (-want +got):\n%s", diff)
	}
	if again.AgentType != "Plan" || again.Color != "green" || !again.IsActive {
		t.Errorf("re-added member: %+v", again)
	}
}

func TestMemberSetters(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	mustCreate(t, s, "alpha")
	ctx := t.Context()
	if _, err := s.AddMember(ctx, "alpha", MemberSpec{Name: "alice"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetMode(ctx, "alpha", "alice", "plan"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetPane(ctx, "alpha", "alice", "%7"); err != nil {
		t.Fatal(err)
	}
	m, err := s.SetActive(ctx, "alpha", "alice", false)
	if err != nil {
		t.Fatal(err)
	}
	if m.Mode != "plan" || m.TmuxPaneID != "%7" || m.IsActive {
		t.Errorf("after setters: %+v", m)
	}
	active, _ := s.ActiveMembers("alpha")
	if diff := cmp.Diff([]string{LeadName}, memberNames(active)); diff != "" {
		t.Errorf("active (-want +got):\n%s", diff)
	}
	for _, err := range []error{
		func() error { _, err := s.SetMode(ctx, "alpha", "zed", "plan"); return err }(),
		func() error { _, err := s.Member("alpha", "zed"); return err }(),
		s.RemoveMember(ctx, "alpha", "zed"),
	} {
		if !errors.Is(err, ErrNoMember) {
			t.Errorf("unknown member: %v, want ErrNoMember", err)
		}
	}
	if err := s.RemoveMember(ctx, "alpha", LeadName); err == nil || !strings.Contains(err.Error(), "lead") {
		t.Errorf("removing the lead: %v", err)
	}
	if err := s.RemoveMember(ctx, "alpha", "alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Member("alpha", "alice"); !errors.Is(err, ErrNoMember) {
		t.Errorf("removed member still there: %v", err)
	}
	// The inbox survives removal.
	dir, _ := s.Dir("alpha")
	if _, err := os.Stat(filepath.Join(dir, InboxesDir, "alice.jsonl")); err != nil {
		t.Errorf("inbox of a removed member: %v", err)
	}
}

func TestAddAllowedPathReplacesSamePair(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	mustCreate(t, s, "alpha")
	ctx := t.Context()
	for _, p := range []AllowedPath{
		{Path: "/a/**", ToolName: "Edit", AddedBy: "team-lead"},
		{Path: "/a/**", ToolName: "Write", AddedBy: "team-lead"},
		{Path: "/a/**", ToolName: "Edit", AddedBy: "alice"},
	} {
		if err := s.AddAllowedPath(ctx, "alpha", p); err != nil {
			t.Fatal(err)
		}
	}
	for _, bad := range []AllowedPath{{ToolName: "Edit"}, {Path: "/x"}, {Path: "/x\n", ToolName: "Edit"}} {
		if err := s.AddAllowedPath(ctx, "alpha", bad); err == nil {
			t.Errorf("AddAllowedPath(%+v) accepted", bad)
		}
	}
	tm, _ := s.Load("alpha")
	want := []AllowedPath{
		{Path: "/a/**", ToolName: "Write", AddedBy: "team-lead", AddedAt: t0.Add(3e9)},
		{Path: "/a/**", ToolName: "Edit", AddedBy: "alice", AddedAt: t0.Add(4e9)},
	}
	if diff := cmp.Diff(want, tm.Config.TeamAllowedPaths); diff != "" {
		t.Errorf("allowed paths (-want +got):\n%s", diff)
	}
}

// checkConcurrentMembers asserts that every name joined exactly once, that
// the colors follow the palette in joining order, and that every inbox
// exists.
func checkConcurrentMembers(t *testing.T, s *Store, names []string) {
	t.Helper()
	tm, err := s.Load("alpha")
	if err != nil {
		t.Fatal(err)
	}
	got := memberNames(tm.Config.Members[1:])
	if diff := cmp.Diff(slices.Sorted(slices.Values(names)), slices.Sorted(slices.Values(got))); diff != "" {
		t.Errorf("members (-want +got):\n%s", diff)
	}
	var want []string
	for i := range got {
		want = append(want, Palette[i%len(Palette)])
	}
	if diff := cmp.Diff(want, memberColors(tm.Config.Members)); diff != "" {
		t.Errorf("colors in joining order (-want +got):\n%s", diff)
	}
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(tm.Dir, InboxesDir, n+".jsonl")); err != nil {
			t.Errorf("inbox of %s: %v", n, err)
		}
	}
}

func TestConcurrentAddMemberGoroutines(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	mustCreate(t, s, "alpha")
	names := make([]string, 16)
	for i := range names {
		names[i] = fmt.Sprintf("g%02d", i)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(names))
	for i, n := range names {
		wg.Go(func() {
			_, errs[i] = s.AddMember(t.Context(), "alpha", MemberSpec{Name: n})
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	checkConcurrentMembers(t, s, names)
}

func TestConcurrentAddMemberProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	t.Parallel()
	s := newStore(t)
	mustCreate(t, s, "alpha")
	const procs, each = 4, 3
	var names []string
	hs := startHelpers(t, procs, func(i int) []string {
		var mine []string
		for j := range each {
			mine = append(mine, fmt.Sprintf("p%d-%d", i, j))
		}
		names = append(names, mine...)
		return []string{envHelper + "=addmember", envRoot + "=" + s.Root(), envTeam + "=alpha", envNames + "=" + strings.Join(mine, ",")}
	})
	for i, out := range release(t, hs) {
		if out != "added" {
			t.Errorf("helper %d said %q", i, out)
		}
	}
	checkConcurrentMembers(t, s, names)
}
