package task

import (
	"regexp"
	"testing"
)

func TestTransition(t *testing.T) {
	all := []Status{StatusRunning, StatusCompleted, StatusFailed, StatusKilled, "bogus"}
	for _, from := range all {
		for _, to := range all {
			err := transition(from, to)
			want := from == StatusRunning && to.Terminal()
			if (err == nil) != want {
				t.Errorf("transition(%s, %s) = %v, want allowed=%v", from, to, err, want)
			}
		}
	}
}

func TestIDs(t *testing.T) {
	rnd := seeded(1)
	want := map[Kind]string{
		KindLocalAgent: "a", KindLocalBash: "b", KindRemoteAgent: "r", KindTeammate: "t", KindDream: "d",
	}
	seen := map[string]bool{}
	for k, p := range want {
		for range 100 {
			id, err := newID(rnd, k)
			if err != nil {
				t.Fatal(err)
			}
			if !regexp.MustCompile(`^` + p + `[0-9a-z]{8}$`).MatchString(id) {
				t.Fatalf("newID(%s) = %q", k, id)
			}
			if seen[id] {
				t.Fatalf("duplicate id %s", id)
			}
			seen[id] = true
		}
	}
	u, err := newUUID(rnd)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(u) {
		t.Fatalf("uuid %q", u)
	}
	if Kind("x").Valid() || KindLocalBash.IsAgent() || !KindDream.IsAgent() {
		t.Fatal("kind predicates wrong")
	}
}
