package bg

import (
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
)

func TestMain(m *testing.M) { clitest.Main(m) }
