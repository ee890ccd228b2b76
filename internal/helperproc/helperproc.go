// Package helperproc runs the test binary again as a helper process and
// reads what it prints a line at a time: the writer processes of the
// mailbox torture tests (file and JetStream), which print each message id
// once it is stored and may be SIGKILLed at any line. Tests only.
package helperproc

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// Proc is one helper process.
type Proc struct {
	Name   string
	Cmd    *exec.Cmd
	Stdin  io.WriteCloser // closed by Wait
	Stderr bytes.Buffer
	// Lines are the stdout lines, when Start's onLine is nil.
	Lines  []string
	Killed bool
	// Err is Wait's error, set before the reader calls wg.Done.
	Err error
}

// Start runs the test binary with -test.run=run and env added to this
// process's environment. onLine, if set, sees every stdout line (it may
// Kill the process) instead of Lines collecting them. The goroutine that
// reads stdout reaps the process and then calls wg.Done.
func Start(ctx context.Context, t testing.TB, name, run string, env []string, onLine func(p *Proc, line string), wg *sync.WaitGroup) *Proc {
	t.Helper()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run="+run)
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 10 * time.Second
	p := &Proc{Name: name, Cmd: cmd}
	cmd.Stderr = &p.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if p.Stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if onLine != nil {
				onLine(p, sc.Text())
			} else {
				p.Lines = append(p.Lines, sc.Text())
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
		p.Err = cmd.Wait()
	}()
	return p
}

// Kill SIGKILLs the process.
func (p *Proc) Kill() {
	p.Killed = true
	p.Cmd.Process.Kill()
}

// KillOn is an onLine for Start that collects lines and kills the process
// when it prints marker (which is not collected).
func KillOn(marker string) func(*Proc, string) {
	return func(p *Proc, line string) {
		if line == marker {
			p.Kill()
			return
		}
		p.Lines = append(p.Lines, line)
	}
}

// KillAfter is an onLine for Start that kills the process once it has
// printed n lines.
func KillAfter(n int) func(*Proc, string) {
	return func(p *Proc, line string) {
		p.Lines = append(p.Lines, line)
		if len(p.Lines) == n {
			p.Kill()
		}
	}
}

// CheckOnce reports through t what breaks "nothing lost, nothing twice":
// each line the writers printed is the id of a stored message, and with
// the ids in also it must be in delivered (id → times delivered) exactly
// once. A delivered id no one printed may only come from the writer named
// unprinted (killed between storing a message and printing its id; from
// maps ids to senders), and only once. It returns the number of ids
// printed or in also.
func CheckOnce(t testing.TB, writers []*Proc, delivered map[string]int, from map[string]string, unprinted string, also ...string) int {
	t.Helper()
	printed := map[string]bool{}
	for _, w := range writers {
		for _, id := range w.Lines {
			printed[id] = true
		}
	}
	for _, id := range also {
		printed[id] = true
	}
	lost, extra := 0, 0
	for id := range printed {
		if delivered[id] == 0 {
			lost++
		}
	}
	for id, n := range delivered {
		if n != 1 {
			t.Errorf("message %s delivered %d times", id, n)
		}
		if !printed[id] {
			extra++
			if from[id] != unprinted {
				t.Errorf("message %s from %s delivered but its writer never printed it", id, from[id])
			}
		}
	}
	if lost > 0 || extra > 1 {
		t.Errorf("%d stored messages lost, %d delivered that no writer printed (at most 1 allowed)", lost, extra)
	}
	return len(printed)
}
