package cost

import (
	"os"
	"testing"

	"github.com/cohort-dev/cohort/internal/testbin"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}
