package arch

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// cohortBinary builds cmd/cohort once for the tests that look at the
// binary, into a directory TestMain removes.
func cohortBinary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		built.bin = filepath.Join(binDir, "cohort")
		if out, err := exec.Command("go", "build", "-o", built.bin, module+"/cmd/cohort").CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

var (
	binDir string
	built  struct {
		once sync.Once
		bin  string
		err  error
	}
)

func TestMain(m *testing.M) {
	var err error
	if binDir, err = os.MkdirTemp("", "arch-bin-"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(binDir)
	os.Exit(code)
}

// heavyAtStart are packages whose package-level state was once built when
// cohort started — counted-repetition regular expressions, option tables —
// and now is built at first use (internal/lazyre, sync.OnceValue): every
// package cmd/cohort links is initialised in every run, `cohort -p`
// included, whether the run uses it or not. Each may allocate at most
// heavyBudget bytes in its initialisation.
var heavyAtStart = []string{"permission", "mailbox", "llm/fakeapi", "remote", "tmux", "sessionsock", "agentdef",
	"mcp", "crew", "team", "skill", "task", "teammate", "tasklist", "internal/safegit"}

const (
	heavyBudget = 8 << 10
	// packageBudget bounds the initialisation of any other package of the
	// module, moduleBudget all of them together, and linkedBudget every
	// package linked, the standard library's and the dependencies' too
	// (about 0.87 MB when written: the model SDKs, jsonschema, yaml).
	packageBudget = 32 << 10
	moduleBudget  = 160 << 10
	linkedBudget  = 1200 << 10
)

// TestStartupInitialisesLittle runs the built cohort with
// GODEBUG=inittrace=1 (package initialisation is the same whatever the
// command, so --version shows what `cohort -p` pays before main) and holds
// the heap each package's initialisation allocates to the budgets above.
// Start-up allocation was 2.5 MB when this test was written, 1.4 MB of it in
// the named packages, and it showed in the fan-out's peak RSS
// (BENCHMARKS.md §12).
func TestStartupInitialisesLittle(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/cohort")
	}
	cmd := exec.Command(cohortBinary(t), "--version")
	home := t.TempDir()
	cmd.Env = []string{"GODEBUG=inittrace=1", "HOME=" + home, "COHORT_HOME=" + filepath.Join(home, ".cohort"), "PATH=" + os.Getenv("PATH")}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("cohort --version: %v\n%s", err, stderr.String())
	}
	inits := parseInitTrace(t, stderr.String())
	if len(inits) < 50 {
		t.Fatalf("GODEBUG=inittrace=1 printed %d package initialisations; expected the whole binary's:\n%s", len(inits), stderr.String())
	}
	heavy := map[string]bool{}
	for _, p := range heavyAtStart {
		heavy[module+"/"+p] = true
	}
	var ours, linked int64
	for p, bytes := range inits {
		linked += bytes
		if p != module && !strings.HasPrefix(p, module+"/") {
			continue
		}
		ours += bytes
		switch {
		case heavy[p] && bytes > heavyBudget:
			t.Errorf("%s allocates %d bytes when cohort starts (budget %d): build its tables and regular expressions at first use (internal/lazyre, sync.OnceValue)", p, bytes, heavyBudget)
		case bytes > packageBudget:
			t.Errorf("%s allocates %d bytes when cohort starts (budget %d): every run pays it; build the state at first use (internal/lazyre, sync.OnceValue)", p, bytes, packageBudget)
		}
	}
	if ours > moduleBudget {
		t.Errorf("the module's packages allocate %d bytes when cohort starts (budget %d)", ours, moduleBudget)
	}
	if linked > linkedBudget {
		t.Errorf("package initialisation allocates %d bytes in all when cohort starts (budget %d): a new dependency with a heavy init? GODEBUG=inittrace=1 cohort --version names it", linked, linkedBudget)
	}
}

// parseInitTrace reads lines such as
//
//	init github.com/x/y @1.2 ms, 0.05 ms clock, 1024 bytes, 9 allocs
//
// into the bytes each package's initialisation allocated.
func parseInitTrace(t *testing.T, s string) map[string]int64 {
	out := map[string]int64{}
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[0] != "init" || f[8] != "bytes," {
			continue
		}
		n, err := strconv.ParseInt(f[7], 10, 64)
		if err != nil {
			t.Fatalf("inittrace line %q: %v", sc.Text(), err)
		}
		out[f[1]] += n
	}
	return out
}
