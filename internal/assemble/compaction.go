package assemble

import (
	"fmt"

	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/settings"
)

// compactionSettings is the "compaction" settings section.
type compactionSettings struct {
	// Enabled turns automatic compaction off when false.
	Enabled *bool `json:"enabled"`
	// ContextWindow is the model's window in tokens (default 200,000).
	ContextWindow int64 `json:"contextWindow"`
	// Threshold is the share of the window that triggers compaction
	// (default 0.8).
	Threshold float64 `json:"threshold"`
	// KeepRecent is how many recent messages stay verbatim (default 6).
	KeepRecent int `json:"keepRecent"`
}

// compaction reads the compaction settings; a bad section is a warning and
// the defaults apply.
func (s *Session) compaction() engine.Compaction {
	w, ok, problems := settings.Winner[compactionSettings](s.Settings.Loaded, "compaction")
	for _, p := range problems {
		fmt.Fprintf(s.Process.Stderr, "cohort: warning: %v\n", p)
	}
	if !ok {
		return engine.Compaction{}
	}
	c := engine.Compaction{ContextWindow: w.Value.ContextWindow, Threshold: w.Value.Threshold, KeepRecent: w.Value.KeepRecent}
	if w.Value.Enabled != nil && !*w.Value.Enabled {
		c.Disabled = true
	}
	if c.Threshold < 0 || c.Threshold > 1 || c.ContextWindow < 0 || c.KeepRecent < 0 {
		fmt.Fprintf(s.Process.Stderr, "cohort: warning: %s:%d: compaction: threshold must be between 0 and 1 and sizes positive; using the defaults\n", w.Source.Path, w.Line)
		return engine.Compaction{}
	}
	return c
}
