package childenv

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestScrub(t *testing.T) {
	in := []string{"PATH=/bin", "ANTHROPIC_API_KEY=a", "ANTHROPIC_AUTH_TOKEN=b", "OPENAI_API_KEY=c",
		"NATS_CREDS=/x", "NATS_URL=nats://h", "COHORT_NATS_TOKEN=t", "NATS_PASSWORD=p", "ANTHROPIC_BASE_URL=http://proxy", "EMPTY"}
	want := []string{"PATH=/bin", "NATS_URL=nats://h", "ANTHROPIC_BASE_URL=http://proxy", "EMPTY"}
	if diff := cmp.Diff(want, Scrub(in)); diff != "" {
		t.Errorf("Scrub (-want +got):\n%s", diff)
	}
}
