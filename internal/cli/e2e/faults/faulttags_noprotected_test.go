//go:build faultinject_noprotected && !faultinject_readonly

package faults

// buildTags: this test binary's fault (package permission's fault_readonly.go).
const buildTags = "faultinject_noprotected"
