//go:build faultinject

package faults

import "github.com/cohort-dev/cohort/internal/clitest"

// inject makes h run the binary built with the tag faultinject, with
// fault ("readonly", "noprotected", "gitstore") wrong on purpose.
func inject(h *clitest.Harness, fault string) {
	h.Tags = "faultinject"
	h.Vars["COHORT_FAULTINJECT"] = fault
}
