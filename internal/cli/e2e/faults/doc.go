// Package faults holds the fault-injection end-to-end tests (issue 36):
// the cohort binary under test is built with the tag faultinject and run
// with COHORT_FAULTINJECT naming one check it gets wrong on purpose
// (permission/fault_on.go, internal/assemble/fault_on.go), and the layers
// below that check must still hold. Without the tag the package has no
// test; .ci/run runs it once, with the tag, every fault in one build.
package faults
