package assemble

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/settings"
	"github.com/cohort-dev/cohort/worktree"
)

func TestReadWorktreeSettings(t *testing.T) {
	t.Parallel()
	s := &settings.Settings{}
	s.Add(settings.ScopeUser, "/home/u/.cohort/settings.json", "/home/u", []byte(`{"worktree": {"sparsePaths": ["pkg/a"], "baseRef": "head"}}`))
	s.Add(settings.ScopeProject, "/p/.cohort/settings.json", "/p", []byte(`{"worktree": {"baseRef": "fresh", "symlinkDirectories": "node_modules"}}`))
	var cfg worktree.Config
	var stderr strings.Builder
	fresh := readWorktreeSettings(s, &cfg, &stderr)
	if !fresh || cfg.Base != "" {
		t.Errorf("fresh = %v, base %q", fresh, cfg.Base)
	}
	if d := cmp.Diff([]string{"pkg/a"}, cfg.Sparse); d != "" {
		t.Errorf("sparse (-want +got):\n%s", d)
	}
	if cfg.Symlinks != nil {
		t.Errorf("symlinks = %q", cfg.Symlinks)
	}
	if want := "/p/.cohort/settings.json:1: worktree.symlinkDirectories: must be an array"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr %q lacks %q", stderr.String(), want)
	}
}
