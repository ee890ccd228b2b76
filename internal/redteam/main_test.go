package redteam

import (
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/cohort-dev/cohort/internal/childenv"
)

// TestMain gives the test process a home of its own and none of the
// credentials a developer's shell may hold: sessions run with their
// attack's environment only (Env.Vars), but the harness's own git and the
// processes a harness test starts inherit this one.
func TestMain(m *testing.M) {
	home, err := os.MkdirTemp("", "cohort-redteam-home-")
	if err != nil {
		panic(err)
	}
	for _, kv := range os.Environ() {
		name, _, _ := cutEnv(kv)
		if childenv.Credential(name) {
			os.Unsetenv(name)
		}
	}
	// The go command that builds the cohort binary (testbin) keeps the
	// developer's caches, and testbin's own directory in the user's cache,
	// which the other test binaries of the checkout share.
	if realHome, err := os.UserHomeDir(); err == nil {
		keep := map[string]string{"GOPATH": filepath.Join(realHome, "go"), "GOMODCACHE": filepath.Join(realHome, "go", "pkg", "mod")}
		if c, err := os.UserCacheDir(); err == nil {
			keep["GOCACHE"] = filepath.Join(c, "go-build")
			keep["XDG_CACHE_HOME"] = c
		}
		for k, v := range keep {
			if os.Getenv(k) == "" {
				os.Setenv(k, v)
			}
		}
	}
	os.Setenv("HOME", home)
	// configtrust's per-user registry follows HOME unless XDG_STATE_HOME
	// says otherwise: never the developer's.
	os.Unsetenv("XDG_STATE_HOME")
	for k, v := range gitVars {
		os.Setenv(k, v)
	}
	code := m.Run()
	os.Stderr.WriteString(cpuReport())
	if code == 0 {
		if err := goleak.Find(goleak.IgnoreCurrent()); err != nil {
			os.Stderr.WriteString("goroutine leak: " + err.Error() + "\n")
			code = 1
		}
	}
	Cleanup()
	if cleanTemplate.dir != "" {
		os.RemoveAll(cleanTemplate.dir)
	}
	os.RemoveAll(home)
	os.Exit(code)
}

func cutEnv(kv string) (name, value string, ok bool) {
	for i := 0; i < len(kv); i++ {
		if kv[i] == '=' {
			return kv[:i], kv[i+1:], true
		}
	}
	return kv, "", false
}
