package agentsdk

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

var (
	buildOnce sync.Once
	builtBin  string
	buildOut  []byte
	buildErr  error
)

// cohortBinary builds cmd/cohort once per test run (with -race when the
// tests run with it).
func cohortBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "cohort-sdk-bin-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "cohort")
		args := []string{"build", "-o", builtBin}
		if raceEnabled {
			args = append(args, "-race")
		}
		_, file, _, _ := runtime.Caller(0)
		cmd := exec.Command("go", append(args, "./cmd/cohort")...)
		cmd.Dir = filepath.Join(filepath.Dir(file), "..", "..")
		buildOut, buildErr = cmd.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("build cohort: %v\n%s", buildErr, buildOut)
	}
	return builtBin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builtBin != "" {
		os.RemoveAll(filepath.Dir(builtBin))
	}
	os.Exit(code)
}
