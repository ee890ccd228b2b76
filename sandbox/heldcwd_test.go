//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/heldir"
	"github.com/cohort-dev/cohort/internal/proc"
)

// TestHeldCwdIsTheCheckedOne: an agent's working directory held since it
// was checked (package internal/heldir) is what its commands may write,
// whatever its name leads to when their policy is set up. A loop flips
// the name between the folder and a link outside while policies are set
// up again and again (AllowWrite makes the next command set its policy up
// anew); no command may write outside, and the folder must be written
// whenever a policy could be set up.
func TestHeldCwdIsTheCheckedOne(t *testing.T) {
	e := newEnv(t, Config{})
	name := filepath.Join(e.project, "src", "f")
	if err := os.MkdirAll(name, 0o755); err != nil {
		t.Fatal(err)
	}
	d, err := heldir.Hold(name)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Release()

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { flipDir(t, stop, name, e.outside) })
	halt := sync.OnceFunc(func() { close(stop); wg.Wait() })
	defer halt()
	ran, refused := 0, 0
	// 60 set-ups at least, and on until one command has run (at most
	// 400): under load most set-ups may meet the name as a link, and a
	// run where none ran proves nothing.
	for i := 0; i < 400 && (i < 60 || ran == 0); i++ {
		extra := filepath.Join(e.home, "extra", strings.Repeat("x", i+1))
		if err := os.MkdirAll(extra, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := e.sb.AllowWrite(extra); err != nil {
			t.Fatal(err)
		}
		if _, err := e.sb.Launcher(t.Context(), d.Path(), Writing); err != nil {
			refused++
			continue
		}
		// The launcher enters the directory by its name, which may be a
		// link or missing by then: what matters is what the command may
		// write, wherever it runs.
		l, err := e.sb.Launcher(t.Context(), d.Path(), Writing)
		if err != nil {
			t.Fatal(err)
		}
		res, err := proc.Output(t.Context(), proc.Command{Path: "/bin/sh", Args: []string{"-c", `touch CANARY; touch ` + e.outside + `/CANARY2; touch ` + name + `/made-` + itoa(i) + `; echo ran`},
			Dir: name, Env: []string{"PATH=" + os.Getenv("PATH")}, Timeout: 30 * time.Second, NewSession: true, Launcher: l}, 1<<20)
		if err == nil && strings.Contains(res.Output, "ran") {
			ran++
		}
	}
	halt()
	entries, err := os.ReadDir(e.outside)
	if err != nil {
		t.Fatal(err)
	}
	for _, en := range entries {
		t.Errorf("a command wrote %s outside, through the flipped name", en.Name())
	}
	if ran == 0 {
		t.Fatalf("no command ran (%d policies refused): the test proved nothing", refused)
	}
	t.Logf("%d commands ran, %d policies refused (the name was a link when set up)", ran, refused)
}

// flipDir renames dir away, puts a link to target in its place, and back,
// until stop is closed; it leaves dir a folder.
func flipDir(t *testing.T, stop <-chan struct{}, dir, target string) {
	aside := dir + ".d"
	for {
		select {
		case <-stop:
			return
		default:
		}
		if err := os.Rename(dir, aside); err != nil {
			t.Error(err)
			return
		}
		if err := os.Symlink(target, dir); err != nil {
			t.Error(err)
			return
		}
		if err := os.Remove(dir); err != nil {
			t.Error(err)
			return
		}
		if err := os.Rename(aside, dir); err != nil {
			t.Error(err)
			return
		}
	}
}
