//go:build !faultinject_readonly && !faultinject_noprotected && !faultinject_gitstore

package faults

// buildTags are the tags the cohort binary under test is built with: the
// test binary's own (faultinject_test.go sets them in a fault build).
const buildTags = ""

// Used only by the tagged builds' test.
var _ = buildTags
