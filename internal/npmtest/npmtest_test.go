package npmtest

import (
	"strings"
	"testing"
)

func TestUnpinnedSpecsAreRefused(t *testing.T) {
	t.Setenv("COHORT_NPM_CACHE", t.TempDir())
	for _, spec := range []string{"left-pad", "@scope/pkg", "left-pad@"} {
		_, err := install("npm", []string{spec})
		if err == nil || !strings.Contains(err.Error(), "no pinned version") {
			t.Errorf("install(%q): %v, want a refusal naming the missing version", spec, err)
		}
	}
}
