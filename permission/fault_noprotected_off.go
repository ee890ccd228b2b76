//go:build !faultinject_noprotected

package permission

// faultNoProtected is false: see fault_readonly.go.
const faultNoProtected = false
