package redteam

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"
)

// corpus is every attack, by class.
func corpus() []*Attack {
	var all []*Attack
	for _, group := range [][]*Attack{sandboxAttacks(), redirectAttacks()} {
		all = append(all, group...)
	}
	return all
}

// parallelRuns is how many attacks run at once (REDTEAM_PARALLEL
// overrides it): a run mostly waits on its subprocesses.
func parallelRuns() int {
	if n, err := strconv.Atoi(os.Getenv("REDTEAM_PARALLEL")); err == nil && n > 0 {
		return n
	}
	return 6
}

// TestCorpus runs every attack in each of its modes and locations, as
// subtests named class/attack/mode-location.
func TestCorpus(t *testing.T) {
	start := time.Now()
	names := map[string]bool{}
	sem := make(chan struct{}, parallelRuns())
	var wg sync.WaitGroup
	runs := 0
	for _, a := range corpus() {
		if names[a.Name] {
			t.Fatalf("two attacks are named %s", a.Name)
		}
		names[a.Name] = true
		for _, mode := range a.modes() {
			for _, loc := range a.where() {
				runs++
				wg.Add(1)
				sem <- struct{}{}
				go func() {
					defer wg.Done()
					defer func() { <-sem }()
					t.Run(fmt.Sprintf("%s/%s/%s-%s", a.Class, a.Name, mode, loc), func(t *testing.T) {
						Run(t, a, mode, loc)
					})
				}()
			}
		}
	}
	wg.Wait()
	t.Logf("%d runs of %d attacks in %v", runs, len(names), time.Since(start).Round(time.Millisecond))
}
