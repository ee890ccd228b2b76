package bench

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cohort-dev/cohort/bench/trial"
)

func TestMain(m *testing.M) {
	code := m.Run()
	trash.Empty()
	built.bins.Remove()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goroutine leak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

// trash keeps the end-to-end benchmarks' workspaces until the last run
// (trial.Trash says why).
var trash trial.Trash

// built holds the binaries of the end-to-end benchmarks, built on first use
// and removed by TestMain.
var built struct {
	once sync.Once
	bins *trial.Binaries
	err  error
}

func binaries(b *testing.B) *trial.Binaries {
	b.Helper()
	built.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		built.bins, built.err = trial.Build(ctx)
	})
	if built.err != nil {
		b.Fatal(built.err)
	}
	return built.bins
}
