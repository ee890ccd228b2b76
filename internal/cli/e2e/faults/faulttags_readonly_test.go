//go:build faultinject_readonly && !faultinject_noprotected

package faults

// buildTags: this test binary's fault (package permission's fault_readonly.go).
const buildTags = "faultinject_readonly"
