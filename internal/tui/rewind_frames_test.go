package tui

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestRewindFromTheUI: esc twice on an empty input lists the prompts, then
// what goes back, then the plan: the files that change and the one the
// user changed after the checkpoint, which enter refuses to overwrite
// (saying so) until f; the rewind then puts the files back.
func TestRewindFromTheUI(t *testing.T) {
	w := newWorld(t, worldConfig{mode: "bypassPermissions"}, func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			return fakeapi.Reply{Content: []fakeapi.Block{use("Bash", map[string]any{"command": "echo by the lead > a.txt && echo new > c.txt"})}}
		}
		return fakeapi.TextReply("EDITED the files.")
	})
	file := func(name string) string {
		data, err := os.ReadFile(filepath.Join(w.dir, name))
		if err != nil {
			return err.Error()
		}
		return string(data)
	}
	for name, body := range map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n"} {
		if err := os.WriteFile(filepath.Join(w.dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w.waitFor("bypass")
	w.typeText("change the files")
	w.key("enter")
	w.waitFor("EDITED the files.", "done in 2 turns")
	if got := file("a.txt"); got != "by the lead\n" {
		t.Fatalf("the turn's Bash did not run: a.txt = %q", got)
	}
	w.key("esc", "esc")
	// The list waits for the turn's last checkpoint: the user's edit
	// below comes after it, as a person's would.
	w.golden("rewind-turns", w.waitFor("Rewind to before which prompt?", "1  change the files"))
	w.key("esc")
	w.waitUntil("the list closed", func(s string) bool { return !strings.Contains(s, "Rewind to before which prompt?") })
	if err := os.WriteFile(filepath.Join(w.dir, "b.txt"), []byte("the user's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w.key("esc", "esc")
	w.waitFor("Rewind to before which prompt?")
	w.key("enter")
	w.waitFor("Rewind what to before turn 1?", "code and conversation")
	w.key("enter")
	w.golden("rewind-plan", w.waitFor("Rewind code and conversation to before turn 1?", "restore", "changed by you after the checkpoint (kept"))
	w.key("enter")
	w.golden("rewind-refused", w.waitFor("refused: it would overwrite files you changed"))
	if got := file("a.txt"); got != "by the lead\n" {
		t.Fatalf("a refused rewind changed a.txt: %q", got)
	}
	w.key("f")
	w.waitFor("OVERWRITTEN, f toggles")
	w.key("enter")
	w.waitFor("rewound to before turn 1: 2 files restored, 1 file deleted; the conversation is back")
	for name, want := range map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n"} {
		if got := file(name); got != want {
			t.Errorf("after the rewind %s = %q, want %q", name, got, want)
		}
	}
	if got := file("c.txt"); !strings.Contains(got, "no such file") {
		t.Errorf("the turn's new file is still there: %q", got)
	}
	// The same prompt again sends the first turn's request byte for byte.
	first := w.srv.Requests()[0].Request
	seen := len(w.srv.Requests())
	w.typeText("change the files")
	w.key("enter")
	w.waitUntil("the prompt again", func(s string) bool { return strings.Count(s, "EDITED the files.") == 2 })
	if again := w.srv.Requests()[seen].Request; !bytes.Equal(again.Raw, first.Raw) {
		t.Errorf("after the rewind the prompt's request differs from the first turn's:\n%s", cmp.Diff(string(first.Raw), string(again.Raw)))
	}
}

// TestRewindAsksBeforeStoppingAgents: with a background agent still at
// work, the rewind's plan names it and says enter stops it first; esc
// leaves it running, enter stops it and rewinds.
func TestRewindAsksBeforeStoppingAgents(t *testing.T) {
	bg := newGate(1)
	stopped, once := make(chan struct{}), sync.Once{}
	w := newWorld(t, worldConfig{mode: "bypassPermissions"}, func(r *fakeapi.Request) fakeapi.Reply {
		switch {
		case strings.Contains(r.FirstUserText(), "BG-RW"):
			if !bg.wait(r) {
				once.Do(func() { close(stopped) })
				return fakeapi.FaultReply(fakeapi.ServerError)
			}
			return fakeapi.TextReply("never")
		case r.Turn() == 0:
			return fakeapi.Reply{Content: []fakeapi.Block{use("Agent", map[string]any{"description": "slow audit",
				"prompt": "BG-RW audit it all", "subagent_type": "general-purpose", "run_in_background": true})}}
		}
		return fakeapi.TextReply("STARTED the audit.")
	})
	defer close(bg.open)
	w.waitFor("bypass")
	w.typeText("audit in the background")
	w.key("enter")
	bg.await(t)
	w.waitFor("STARTED the audit.")
	w.key("esc") // the run waits for the agent: interrupt it, the agent runs on
	w.waitFor("1 background agent still running")
	rewindPlan := func() string {
		w.typeText("/rewind")
		w.key("enter")
		w.waitFor("Rewind to before which prompt?")
		w.key("enter")
		w.waitFor("Rewind what to before turn 1?")
		w.key("enter")
		return w.waitFor("Rewind code and conversation to before turn 1?", "enter stops them and rewinds")
	}
	if scr := rewindPlan(); !strings.Contains(scr, "1 agent still running, stopped before the rewind: slow audit") {
		t.Errorf("the plan does not name the running agent:\n%s", scr)
	}
	w.key("esc")
	w.waitUntil("the plan closed", func(s string) bool { return !strings.Contains(s, "Rewind code and conversation") })
	select {
	case <-stopped:
		t.Fatal("esc stopped the agent")
	default:
	}
	rewindPlan()
	w.key("enter")
	w.waitFor("rewound to before turn 1")
	select {
	case <-stopped:
	case <-time.After(30 * time.Second):
		t.Fatal("the rewind did not stop the agent")
	}
}
