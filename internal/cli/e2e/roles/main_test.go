package roles

import (
	"flag"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func TestMain(m *testing.M) { clitest.Main(m) }
