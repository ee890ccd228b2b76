package redteam

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// corpus is every attack, by class.
func corpus() []*Attack {
	var all []*Attack
	for _, group := range [][]*Attack{sandboxAttacks(), kernelAttacks(), redirectAttacks(), readDenyAttacks(), boundsAttacks(), outsiderAttacks()} {
		all = append(all, group...)
	}
	return all
}

// parallelRuns is how many sessions run at once (REDTEAM_PARALLEL
// overrides it): a session mostly waits on its subprocesses.
func parallelRuns() int {
	if n, err := strconv.Atoi(os.Getenv("REDTEAM_PARALLEL")); err == nil && n > 0 {
		return n
	}
	return 6
}

// selected picks attacks by REDTEAM_ATTACK, a regexp matched against
// "class/name" (all when unset).
func selected(t *testing.T, all []*Attack) []*Attack {
	pat := os.Getenv("REDTEAM_ATTACK")
	if pat == "" {
		return all
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		t.Fatalf("REDTEAM_ATTACK: %v", err)
	}
	return slices.DeleteFunc(slices.Clone(all), func(a *Attack) bool { return !re.MatchString(a.Class + "/" + a.Name) })
}

// TestCorpus runs every attack in each of its modes and locations: the
// attacks that can share a session run in one per mode and location
// (subtests shared/MODE-LOCATION; those with their own Args or Binary
// in shared/FIRST-ATTACK/MODE-LOCATION), the others alone
// (CLASS/NAME/MODE-LOCATION).
func TestCorpus(t *testing.T) {
	start := time.Now()
	all := corpus()
	seen := map[string]bool{}
	for _, a := range all {
		if seen[a.Name] || len(a.Turns) == 0 {
			t.Fatalf("attack %q: names must be unique and every attack needs a turn", a.Name)
		}
		seen[a.Name] = true
	}
	type run struct {
		name    string
		attacks []*Attack
		mode    Mode
		loc     Location
	}
	var runs []run
	shared := map[string]*run{}
	count := 0
	for _, a := range selected(t, all) {
		for _, mode := range a.modes() {
			for _, loc := range a.where() {
				count++
				if a.alone() {
					runs = append(runs, run{fmt.Sprintf("%s/%s/%s-%s", a.Class, a.Name, mode, loc), []*Attack{a}, mode, loc})
					continue
				}
				key := a.sessionKey(mode, loc)
				if shared[key] == nil {
					name := fmt.Sprintf("shared/%s-%s", mode, loc)
					if len(a.Args) > 0 || a.Binary {
						name = fmt.Sprintf("shared/%s/%s-%s", a.Name, mode, loc)
					}
					shared[key] = &run{name: name, mode: mode, loc: loc}
				}
				shared[key].attacks = append(shared[key].attacks, a)
			}
		}
	}
	for _, r := range shared {
		runs = append(runs, *r)
	}
	sem := make(chan struct{}, parallelRuns())
	var wg sync.WaitGroup
	for _, r := range runs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			t.Run(r.name, func(t *testing.T) { RunGroup(t, r.attacks, r.mode, r.loc) })
		}()
	}
	wg.Wait()
	t.Logf("%d attacks run %d times in %d sessions, in %v", len(seen), count, len(runs), time.Since(start).Round(time.Millisecond))
}
