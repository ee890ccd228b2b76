package mailbox

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// problems collects what a Reader reports.
type problems struct {
	mu   sync.Mutex
	list []Problem
}

func (p *problems) add(pr Problem) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.list = append(p.list, pr)
}

func (p *problems) all() []Problem {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Problem(nil), p.list...)
}

// lineProblems returns the reports about individual lines.
func (p *problems) lines() []Problem {
	var out []Problem
	for _, pr := range p.all() {
		if pr.Line > 0 {
			out = append(out, pr)
		}
	}
	return out
}

// testDir opens a mailbox in a temporary directory with the given agents
// registered. cfg.Path and a nil OnProblem are filled in.
func testDir(t testing.TB, cfg Config, agents ...string) (*Dir, *problems) {
	t.Helper()
	if cfg.Path == "" {
		cfg.Path = t.TempDir()
	}
	pr := &problems{}
	if cfg.OnProblem == nil {
		cfg.OnProblem = pr.add
	}
	d, err := OpenDir(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range agents {
		if err := d.Register(context.Background(), a); err != nil {
			t.Fatal(err)
		}
	}
	return d, pr
}

func openReader(t testing.TB, d *Dir, agent string) *Reader {
	t.Helper()
	r, err := d.OpenReader(agent)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func mustAppend(t testing.TB, d *Dir, m Message) Message {
	t.Helper()
	out, err := d.Append(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func ids(msgs []Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.ID
	}
	return out
}

func texts(msgs []Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Text
	}
	return out
}

// Helper processes: the multi-process tests and benchmarks re-run this test
// binary with -test.run=^TestHelperProcess$ and these variables set.
const (
	envHelper    = "COHORT_MAILBOX_HELPER" // "writer" to act as a writer process
	envDir       = "COHORT_MAILBOX_DIR"
	envTo        = "COHORT_MAILBOX_TO"
	envFrom      = "COHORT_MAILBOX_FROM"
	envCount     = "COHORT_MAILBOX_COUNT"
	envTearAfter = "COHORT_MAILBOX_TEAR_AFTER" // tear a line after this many appends, then hang
	envWaitGo    = "COHORT_MAILBOX_WAIT_GO"    // print "ready", wait for a line on stdin
	envQuiet     = "COHORT_MAILBOX_QUIET"      // do not print acknowledged ids
)

func TestHelperProcess(t *testing.T) {
	if os.Getenv(envHelper) == "" {
		t.Skip("runs only as a helper process of the multi-process tests")
	}
	if err := runWriter(); err != nil {
		fmt.Fprintln(os.Stderr, "writer:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// runWriter appends COUNT messages and prints each acknowledged id on its
// own line, unbuffered, right after Append returns.
func runWriter() error {
	count, _ := strconv.Atoi(os.Getenv(envCount))
	tearAfter, _ := strconv.Atoi(os.Getenv(envTearAfter))
	from, to := os.Getenv(envFrom), os.Getenv(envTo)
	d, err := OpenDir(Config{Path: os.Getenv(envDir)})
	if err != nil {
		return err
	}
	if os.Getenv(envWaitGo) != "" {
		os.Stdout.WriteString("ready\n")
		if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
			return err
		}
	}
	quiet := os.Getenv(envQuiet) != ""
	for i := range count {
		if tearAfter > 0 && i == tearAfter {
			return tearAndHang(d, Message{From: from, To: to, Text: "never finished"})
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		m, err := d.Append(ctx, Message{From: from, To: to, Text: fmt.Sprintf("%s #%d", from, i)})
		cancel()
		if err != nil {
			return err
		}
		if !quiet {
			if _, err := os.Stdout.WriteString(m.ID + "\n"); err != nil {
				return err
			}
		}
	}
	return nil
}

// tearAndHang plays a writer killed in the middle of its write(2): it takes
// the inbox lock, writes half a line, says "torn" and waits to be killed
// while holding the lock.
func tearAndHang(d *Dir, m Message) error {
	m.ID = d.cfg.NewID()
	m.Timestamp = time.Now()
	line, err := encodeLine(m)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	lk, err := lockPath(ctx, d.lockFile(m.To), false, time.Minute)
	if err != nil {
		return err
	}
	defer lk.Unlock()
	f, err := os.OpenFile(d.inboxPath(m.To), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Write(line[:len(line)/2]); err != nil {
		return err
	}
	os.Stdout.WriteString("torn\n")
	<-ctx.Done() // the test kills us long before
	return fmt.Errorf("not killed")
}
