package assemble

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/cohort-dev/cohort/internal/configtrust"
	"github.com/cohort-dev/cohort/sandbox"
)

// recordRoots adds to COHORT_HOME's registry (internal/configtrust) every
// tree this session's commands and file tools may write, before the
// model runs: a later session obeys configuration found inside them only
// as a person approved it. Working directories (the cwd, additional
// directories) keep their top frozen; the other roots (sandbox.allowWrite,
// the project's memory, the cache dir, what the sandbox adds) do not.
// The private TMPDIR is the session's alone and not recorded. The same
// roots are recorded with the sandbox off: the file tools still write
// only there.
func (s *Session) recordRoots(ctx context.Context, conf sandboxConf, sb *sandbox.Sandbox) {
	home := s.Process.Paths.CohortHome
	if home == "" {
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
}

// sameDir reports whether a and b name one directory once resolved.
func sameDir(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	return err1 == nil && err2 == nil && ra == rb
}
