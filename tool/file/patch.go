package file

import "github.com/cohort-dev/cohort/internal/linediff"

// Hunk is one hunk of a structured patch (package linediff).
type Hunk = linediff.Hunk

// structuredPatch returns the hunks that turn old into new.
func structuredPatch(old, new string) []Hunk { return linediff.Patch(old, new) }
