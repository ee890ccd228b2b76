// Package faults holds the fault-injection end-to-end test (issue 36):
// built with a fault tag (faultinject_readonly, faultinject_noprotected),
// one permission check of the cohort binary under test is wrong on
// purpose, and the layers below it must still hold. Without a tag the
// package has no test; .ci/run runs it once per tag.
package faults
