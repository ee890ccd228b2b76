//go:build faultinject_noprotected

package permission

// faultNoProtected empties the protected-path list: see fault_readonly.go.
const faultNoProtected = true
