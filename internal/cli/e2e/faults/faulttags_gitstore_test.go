//go:build faultinject_gitstore && !faultinject_readonly && !faultinject_noprotected

package faults

// buildTags: this test binary's fault (internal/assemble's fault_gitstore.go).
const buildTags = "faultinject_gitstore"
