package cli

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// The end-to-end tests of the command line are in the packages under e2e;
// these are the tests that need package cli's unexported parts (the demo's
// probe and narrator).
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(goleak.IgnoreCurrent()); err != nil {
			os.Stderr.WriteString("goroutine leak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}
