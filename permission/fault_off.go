//go:build !faultinject

package permission

// A release build injects no fault: see fault_on.go.
const (
	faultReadOnly    = false
	faultNoProtected = false
)
