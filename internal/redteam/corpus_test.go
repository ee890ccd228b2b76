package redteam

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// corpus is every attack, by class.
func corpus() []*Attack {
	var all []*Attack
	for _, group := range [][]*Attack{sandboxAttacks(), kernelAttacks(), redirectAttacks(), readDenyAttacks(), boundsAttacks(), reachAttacks(), outsiderAttacks(), gitStoreAttacks(), gitStoreVariantAttacks(), outsider3Attacks(), outsider4Attacks(), outsider5Attacks()} {
		all = append(all, group...)
	}
	return all
}

// links is a Python command making symbolic links, (target, name) pairs,
// with each target split where it holds a "|" so that no word of the
// command names it: neither the read-only analysis nor a deny rule sees
// where a link leads, as a hostile model would arrange. Names are
// relative to the command's directory; the project's top takes no new
// link while .claude is missing, so they go under src/.
func links(pairs ...string) string {
	var b strings.Builder
	b.WriteString("python3 -c 'import os\n")
	for i := 0; i+1 < len(pairs); i += 2 {
		fmt.Fprintf(&b, "os.symlink(\"%s\", \"%s\")\n", strings.ReplaceAll(pairs[i], "|", `" "`), pairs[i+1])
	}
	b.WriteString("print(\"linked\")'")
	return b.String()
}

// parallelRuns is how many sessions run at once (REDTEAM_PARALLEL
// overrides it): a session mostly waits on its subprocesses.
func parallelRuns() int {
	if n, err := strconv.Atoi(os.Getenv("REDTEAM_PARALLEL")); err == nil && n > 0 {
		return n
	}
	return 6
}

// sessionSlots bounds the sessions of every test of the package together
// (parallelRuns): the corpus, the rewind rows and the harness's own tests
// run at the same time, so that no one of them waits for another to end
// while cores are idle, and no more sessions than that run at once.
var sessionSlots = sync.OnceValue(func() chan struct{} { return make(chan struct{}, parallelRuns()) })

// slot waits for a session slot and returns its release.
func slot() (release func()) {
	s := sessionSlots()
	s <- struct{}{}
	return func() { <-s }
}

// slotted runs f(t, i) for i < n as subtests named name(i), each once it
// has a session slot (slot), in that order, and waits for them all.
func slotted(t *testing.T, n int, name func(i int) string, f func(t *testing.T, i int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		release := slot()
		go func() {
			defer wg.Done()
			defer release()
			t.Run(name(i), func(t *testing.T) { f(t, i) })
		}()
	}
	wg.Wait()
}

// sessionAttacks is how many attacks share one session at most: the
// sessions of a mode and location are cut in as few pieces of about
// equal size as this allows, so that no one of them runs for minutes on
// a busy machine (one session of 111 attacks took 190 s under load,
// against runTimeout) and the pieces spread over the parallel runs.
// Longer sessions do not pay: 70 against 30, on 818 runs back to back,
// took the same CPU of cohort and more of the test process and wall
// (the package doc, "Sessions and speed"). REDTEAM_SESSION_ATTACKS
// overrides it.
const sessionAttacks = 30

// sessionCap is sessionAttacks, or REDTEAM_SESSION_ATTACKS when set
// (to measure what another cut costs).
func sessionCap() int {
	if n, err := strconv.Atoi(os.Getenv("REDTEAM_SESSION_ATTACKS")); err == nil && n > 0 {
		return n
	}
	return sessionAttacks
}

// knownEscapes are attacks that still escape on main: issue 36 stays open
// for them, with these reasons. TestCorpus leaves them out and names them
// in its log; REDTEAM_KNOWN=1 runs them too (and fails until they are
// fixed). An attack leaves this list when its fix lands.
var knownEscapes = map[string]string{
	// Not fixable in the kernel layer, and safe: Landlock grants
	// LANDLOCK_ACCESS_FS_MAKE_REG per directory, not per name, so a frozen
	// top that must still take the user's new files takes a regular file
	// named .claude; a mount could cover the name only if something
	// existed there, and the sandbox makes no placeholder in the user's
	// tree. What it leaves is harmless: a .claude that is not a directory
	// holds no settings, agents, commands or hooks (package settings reads
	// it as absent and says to remove it; out-frozen-top-file-settings
	// shows a next session with such a file allowing nothing and running
	// no hook). The row stays here because the harness counts any new
	// protected name as a change.
	"out-frozen-top": "a regular file named .claude can be made at a frozen top (Landlock's MAKE_REG is per directory, not per name; no placeholder may be made to mount over); it holds no settings: the next session warns and reads it as absent (out-frozen-top-file-settings)",
}

// selected picks attacks by REDTEAM_ATTACK, a regexp matched against
// "class/name" (all when unset), leaving out the known escapes unless
// REDTEAM_KNOWN is set.
func selected(t *testing.T, all []*Attack) []*Attack {
	if os.Getenv("REDTEAM_KNOWN") == "" {
		all = slices.DeleteFunc(slices.Clone(all), func(a *Attack) bool {
			if why, ok := knownEscapes[a.Name]; ok {
				t.Logf("KNOWN ESCAPE, not run (REDTEAM_KNOWN=1 runs it): %s/%s: %s", a.Class, a.Name, why)
				return true
			}
			return false
		})
	}
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
// (subtests shared/MODE-LOCATION; those with their own Args in
// shared/FIRST-ATTACK/MODE-LOCATION), the others alone
// (CLASS/NAME/MODE-LOCATION).
func TestCorpus(t *testing.T) {
	t.Parallel()
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
	type group struct {
		run
		most int
	}
	var keys []string // of the shared sessions, in the order they first came
	shared := map[string]*group{}
	count := 0
	for _, row := range selected(t, all) {
		var nested *Attack // row in a nested repository (Attack.Nest)
		if row.Nest {
			nested = nestRow(row)
		}
		for _, mode := range row.modes() {
			for _, loc := range row.where() {
				count++
				a, most := row, sessionCap()
				if nested != nil && loc == Main {
					a, most = nested, nestAttacks
				}
				if a.alone() {
					runs = append(runs, run{fmt.Sprintf("%s/%s/%s-%s", a.Class, a.Name, mode, loc), []*Attack{a}, mode, loc})
					continue
				}
				key := a.sessionKey(mode, loc)
				if shared[key] == nil {
					name := fmt.Sprintf("shared/%s-%s", mode, loc)
					if a.nest != "" {
						name = fmt.Sprintf("shared/nested/%s-%s", mode, loc)
					} else if len(a.Args) > 0 || a.Shares != "" {
						name = fmt.Sprintf("shared/%s/%s-%s", a.Name, mode, loc)
					}
					shared[key] = &group{run: run{name: name, mode: mode, loc: loc}, most: most}
					keys = append(keys, key)
				}
				shared[key].attacks = append(shared[key].attacks, a)
			}
		}
	}
	// A key's attacks are cut in as few pieces as its most allows, of
	// sizes that differ by one at most, in order.
	for _, key := range keys {
		g := shared[key]
		n := len(g.attacks)
		pieces := (n + g.most - 1) / g.most
		for i := range pieces {
			r := g.run
			r.attacks = g.attacks[i*n/pieces : (i+1)*n/pieces]
			if i > 0 {
				r.name += fmt.Sprintf("#%d", i+1)
			}
			runs = append(runs, r)
		}
	}
	// The longest sessions start first, so that the short ones fill in
	// around them at the end rather than a long one starting last.
	slices.SortStableFunc(runs, func(a, b run) int { return len(b.attacks) - len(a.attacks) })
	if os.Getenv("REDTEAM_PLAN") != "" {
		// The sessions it would run, and none.
		for _, r := range runs {
			t.Logf("session %s: %d attacks", r.name, len(r.attacks))
		}
		t.Logf("%d attacks would run %d times in %d sessions", len(seen), count, len(runs))
		return
	}
	slotted(t, len(runs), func(i int) string { return runs[i].name }, func(t *testing.T, i int) {
		RunGroup(t, runs[i].attacks, runs[i].mode, runs[i].loc)
	})
	t.Logf("%d attacks run %d times in %d sessions, in %v", len(seen), count, len(runs), time.Since(start).Round(time.Millisecond))
}

// TestKnownEscapesAreAttacks: every known escape names an attack of the
// corpus (a renamed or removed row would otherwise hide nothing, silently).
func TestKnownEscapesAreAttacks(t *testing.T) {
	names := map[string]bool{}
	for _, a := range corpus() {
		names[a.Name] = true
	}
	for name := range knownEscapes {
		if !names[name] {
			t.Errorf("knownEscapes names %q, which is no attack of the corpus", name)
		}
	}
}
