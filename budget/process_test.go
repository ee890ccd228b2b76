package budget

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Helper processes re-run this test binary with these variables set.
const (
	envHelper = "COHORT_BUDGET_HELPER" // "spend" or "hold"
	envPath   = "COHORT_BUDGET_PATH"
)

// TestHelperProcess is a process of a session in the multi-process tests:
// "spend" spends 0.03 a request until the session's cap refuses and
// prints how many requests it made; "hold" holds 0.9, says so, and waits
// to be killed.
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv(envHelper)
	if mode == "" {
		return // not a helper run
	}
	l, err := Open(context.Background(), os.Getenv(envPath))
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	acc := l.Session().Child(Caps{}, Spend{})
	ctx := context.Background()
	switch mode {
	case "spend":
		n := 0
		for {
			h, err := acc.Reserve(ctx, Spend{USD: 0.03})
			if err != nil {
				fmt.Println("requests", n, err)
				os.Exit(0)
			}
			n++
			if err := h.Settle(Spend{USD: 0.03}); err != nil {
				fmt.Println("error", err)
				os.Exit(2)
			}
		}
	case "hold":
		if _, err := acc.Reserve(ctx, Spend{USD: 0.9}); err != nil {
			fmt.Println("error", err)
			os.Exit(2)
		}
		fmt.Println("held")
		time.Sleep(time.Minute) // killed long before
		os.Exit(3)
	}
}

func helper(t *testing.T, ctx context.Context, mode, path string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), envHelper+"="+mode, envPath+"="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, bufio.NewScanner(out)
}

// TestProcessesShareTheSessionCap: three processes of one session (this
// one and two others, as a lead and its tmux teammates) spend at once
// against the session's cap through the ledger file; together they stop
// at the cap, each told so.
func TestProcessesShareTheSessionCap(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	path := filepath.Join(t.TempDir(), "s.json")
	l := openLedger(t, path)
	if err := l.SetCaps(ctx, Caps{USD: 1, Label: "the session's budget"}, Caps{}); err != nil {
		t.Fatal(err)
	}
	type run struct {
		cmd *exec.Cmd
		out *bufio.Scanner
	}
	var runs []run
	for range 2 {
		cmd, out := helper(t, ctx, "spend", path)
		runs = append(runs, run{cmd, out})
	}
	acc := l.Session().Child(Caps{}, Spend{})
	mine := 0
	for {
		h, err := acc.Reserve(ctx, Spend{USD: 0.03})
		if err != nil {
			reached(t, err)
			break
		}
		mine++
		_ = h.Settle(Spend{USD: 0.03})
	}
	total := mine
	for _, r := range runs {
		var line string
		if r.out.Scan() {
			line = r.out.Text()
		}
		if err := r.cmd.Wait(); err != nil {
			t.Fatalf("helper: %v (%s)", err, line)
		}
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "requests" || !strings.Contains(line, "the session's budget of $1.00 is reached") {
			t.Fatalf("helper said %q", line)
		}
		n, _ := strconv.Atoi(f[1])
		total += n
	}
	spent, _, err := l.Spent(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// 33 requests of 0.03 fit under 1; the 34th would cross it.
	if total != 33 || math.Abs(spent.USD-0.99) > 1e-9 {
		t.Errorf("the processes made %d requests (this one %d) and spent %v; want 33 and 0.99", total, mine, spent.USD)
	}
}

// TestAHoldDiesWithItsProcess: a process killed while a request of its
// is under way leaves a hold in the file; the next process to use the
// ledger drops it, so the cap is not blocked.
func TestAHoldDiesWithItsProcess(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	path := filepath.Join(t.TempDir(), "s.json")
	l := openLedger(t, path)
	_ = l.SetCaps(ctx, Caps{USD: 1, Label: "cap"}, Caps{})
	cmd, out := helper(t, ctx, "hold", path)
	if !out.Scan() || out.Text() != "held" {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("helper said %q", out.Text())
	}
	acc := l.Session().Child(Caps{}, Spend{})
	if r := reached(t, errOf(acc.Reserve(ctx, Spend{USD: 0.2}))); r.Spent != 0.9 {
		t.Errorf("the other process's hold counted %v", r.Spent)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	h, err := acc.Reserve(ctx, Spend{USD: 0.2})
	if err != nil {
		t.Fatalf("after the holder died: %v", err)
	}
	_ = h.Settle(Spend{USD: 0.2})
}
