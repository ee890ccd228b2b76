//go:build faultinject_readonly && !faultinject_noprotected

package cli

// buildTags: this test binary's fault (package permission's fault_readonly.go).
const buildTags = "faultinject_readonly"
