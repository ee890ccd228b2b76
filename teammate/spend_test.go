package teammate

import (
	"os"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/team"
)

// A process teammate's spend is what its status file last said, and it
// stays counted after its team's files are gone (TeamDelete removes
// them).
func TestProcessMembersKeepWhatTheySpent(t *testing.T) {
	f := newFixture(t)
	m, err := f.store.Member("t", "alice")
	if err != nil {
		t.Fatal(err)
	}
	dir, err := f.store.Dir("t")
	if err != nil {
		t.Fatal(err)
	}
	spent := Spend{"claude-sonnet-5-5": {Usage: llm.Usage{InputTokens: 10, OutputTokens: 5, CacheReadInputTokens: 100}, CostUSD: 0.25}}
	pub, err := newPublisher(team.FileStatuses(dir), "alice", time.Now)
	if err != nil {
		t.Fatal(err)
	}
	pub.setSpend(spent)
	if err := pub.set(StateIdle); err != nil {
		t.Fatal(err)
	}
	f.l.mu.Lock()
	f.l.members["alice"] = &handle{name: "alice", process: "%1", seen: ProcessMember{Member: m, Team: "t", Started: time.Now().Add(-time.Minute)}}
	f.l.mu.Unlock()

	check := func(when string, want int) {
		t.Helper()
		pms := f.l.ProcessMembers()
		if len(pms) != want {
			t.Fatalf("%s: %d process members, want %d", when, len(pms), want)
		}
		if u, cost := pms[0].Spend.Total(); cost != 0.25 || u.CacheReadInputTokens != 100 {
			t.Fatalf("%s: spend %+v %v, want what the status file said", when, u, cost)
		}
	}
	check("with the status file", 1)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	check("after the team's files are gone", 1)

}
