//go:build !faultinject_readonly

package permission

// faultReadOnly is false: see fault_readonly.go.
const faultReadOnly = false
