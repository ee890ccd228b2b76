package task

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/llm"
)

func TestProgressTracker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, _ := newReg(t, nil)
		t0 := time.Now()
		release := make(chan struct{})
		step := make(chan struct{})
		tk, err := r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "d", Background: true}, func(ctx context.Context, tk *Task) (Outcome, error) {
			for i := range 7 {
				time.Sleep(time.Second)
				tk.RecordToolUse(fmt.Sprintf("T%d", i), fmt.Sprintf("call %d", i))
			}
			tk.RecordUsage(llm.Usage{InputTokens: 1000, CacheReadInputTokens: 500, OutputTokens: 40})
			tk.RecordUsage(llm.Usage{InputTokens: 10, CacheCreationInputTokens: 2000, OutputTokens: 60})
			close(step)
			<-release
			return Outcome{}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		<-step
		p := tk.State().Progress
		var got []string
		for _, a := range p.Activities {
			got = append(got, fmt.Sprintf("%s %s +%s", a.Tool, a.Description, a.Time.Sub(t0)))
		}
		want := []string{"T2 call 2 +3s", "T3 call 3 +4s", "T4 call 4 +5s", "T5 call 5 +6s", "T6 call 6 +7s"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("activities (-want +got):\n%s", diff)
		}
		if p.LatestInputTokens != 2010 || p.OutputTokens != 100 || p.ToolUses != 7 || p.TotalTokens() != 2110 {
			t.Fatalf("progress %+v", p)
		}
		if p.LastActivity.Sub(t0) != 7*time.Second {
			t.Fatalf("last activity at +%s", p.LastActivity.Sub(t0))
		}
		close(release)
		<-tk.Done()
		closeReg(t, r)
	})
}

// Updates inside one interval are coalesced into a trailing event that
// carries the latest counts; nothing follows the notification.
func TestProgressCoalescing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, rec := newReg(t, func(c *Config) { c.ProgressInterval = time.Second })
		release := make(chan struct{})
		tk, err := r.Start(t.Context(), Spec{Kind: KindLocalAgent, Description: "d", Background: true}, func(ctx context.Context, tk *Task) (Outcome, error) {
			for range 100 { // 100 calls within 10 ms
				tk.RecordToolUse("Grep", "x")
				time.Sleep(100 * time.Microsecond)
			}
			time.Sleep(5 * time.Second) // the trailing event fires meanwhile
			for range 10 {
				tk.RecordToolUse("Read", "y")
			}
			<-release // finish inside the interval: no trailing event after the end
			return Outcome{}, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(5500 * time.Millisecond)
		synctest.Wait()
		close(release)
		<-tk.Done()
		time.Sleep(10 * time.Second)
		synctest.Wait()
		var uses []int
		var subs []string
		for _, e := range rec.events() {
			subs = append(subs, e.Subtype)
			if e.Subtype == SubtypeTaskProgress {
				uses = append(uses, e.Usage.ToolUses)
			}
		}
		if diff := cmp.Diff([]int{1, 100, 101}, uses); diff != "" {
			t.Fatalf("progress tool_uses (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{SubtypeTaskUpdated, SubtypeTaskNotification, SubtypeBackgroundTasksChanged}, subs[len(subs)-3:]); diff != "" {
			t.Fatalf("events %v: the last three (-want +got):\n%s", subs, diff)
		}
		closeReg(t, r)
	})
}
