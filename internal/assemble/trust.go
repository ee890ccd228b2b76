package assemble

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/internal/configtrust"
	"github.com/cohort-dev/cohort/sandbox"
)

// recordRoots adds to the registries (internal/configtrust: the user's
// and COHORT_HOME's) every
// tree this session's commands and file tools may write, before the
// model runs: a later session obeys configuration found inside them only
// as a person approved it. Working directories (the cwd, additional
// directories) keep their top frozen; the other roots (sandbox.allowWrite,
// the project's memory, the cache dir, what the sandbox adds) do not.
// The private TMPDIR is the session's alone and not recorded. The same
// roots are recorded with the sandbox off: the file tools still write
// only there.
func (s *Session) recordRoots(ctx context.Context, conf sandboxConf, sb *sandbox.Sandbox) {
	home := configtrust.At(s.Process.Paths.CohortHome, s.Process.Getenv)
	if len(home) == 0 {
		return
	}
	var roots []configtrust.Root
	add := func(p string, frozen bool) {
		if p != "" && !slices.ContainsFunc(roots, func(r configtrust.Root) bool { return r.Path == p }) {
			roots = append(roots, configtrust.Root{Path: p, Frozen: frozen})
		}
	}
	add(s.Process.Cwd, true)
	if s.checker != nil {
		for _, d := range s.checker.WorkingDirs() {
			add(d, true)
		}
	}
	for _, w := range writableData(conf.allowWrite, s.mem.dir) {
		add(w, false)
	}
	cache := s.Process.Getenv("XDG_CACHE_HOME")
	if cache == "" && s.Process.Paths.Home != "" {
		cache = filepath.Join(s.Process.Paths.Home, ".cache")
	}
	add(cache, false)
	if sb != nil {
		w, _ := sb.Writable(s.Process.Cwd)
		for _, p := range w {
			if p != sb.TempDir() && !slices.ContainsFunc(roots, func(r configtrust.Root) bool { return sameDir(r.Path, p) }) {
				add(p, false)
			}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := configtrust.Record(ctx, home, roots, time.Now()); err != nil {
		fmt.Fprintf(s.Process.Stderr, "cohort: warning: %v (configuration an agent of this session writes may be obeyed by a later session without your approval)\n", err)
	}
	s.beginTops(ctx, home, roots)
}

// beginTops records the top-level configuration files (.mcp.json) of the
// session's frozen roots as they stand before the model runs, and lists
// the session as able to write them until Close records its end: a file
// that appears or changes meanwhile is obeyed by a later session only as
// a person approves it (internal/configtrust, "Top-level files"). A
// session that cannot record its start warns; one killed before its end
// leaves its record open, and later sessions then treat a change as
// written by it.
func (s *Session) beginTops(ctx context.Context, home configtrust.Places, roots []configtrust.Root) {
	var frozen []string
	for _, r := range roots {
		if r.Frozen {
			frozen = append(frozen, r.Path)
		}
	}
	if len(frozen) == 0 || s.topsEnd != nil {
		return
	}
	if err := configtrust.Begin(ctx, home, s.id, frozen, time.Now()); err != nil {
		fmt.Fprintf(s.Process.Stderr, "cohort: warning: %v (an .mcp.json an agent of this session creates may be obeyed by a later session without your approval)\n", err)
		return
	}
	s.topsEnd = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := configtrust.End(ctx, home, s.id, frozen, time.Now()); err != nil {
			fmt.Fprintf(s.Process.Stderr, "cohort: warning: %v (the next session treats a change to %s made meanwhile as an agent's)\n", err, strings.Join(frozen, ", "))
		}
	}
}

// sameDir reports whether a and b name one directory once resolved.
func sameDir(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}
