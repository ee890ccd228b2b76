package cohort

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/dream"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/memory"
)

// dreamMarker starts the dream agent's first message (dream.Prompt).
const dreamMarker = "Consolidate the memory in"

// dreamScript is a consolidation agent that reads MEMORY.md, tries to
// write outside the memory dir and to run rm, and edits MEMORY.md; it
// records what it was sent.
type dreamScript struct {
	outside, victim string
	mu              sync.Mutex
	system, first   string
	results         []fakeapi.Block // the tool results of its second request
}

func (d *dreamScript) reply(r *fakeapi.Request) fakeapi.Reply {
	d.mu.Lock()
	defer d.mu.Unlock()
	mem := strings.Fields(strings.TrimPrefix(r.FirstUserText(), dreamMarker))[0]
	mem = strings.TrimSuffix(mem, ".")
	switch r.Turn() {
	case 0:
		d.system, d.first = r.SystemText(), r.FirstUserText()
		return fakeapi.Reply{Content: []fakeapi.Block{use("Read", map[string]any{"file_path": filepath.Join(mem, "MEMORY.md")})}}
	case 1:
		return fakeapi.Reply{Content: []fakeapi.Block{
			use("Write", map[string]any{"file_path": d.outside, "content": "escaped"}),
			use("Bash", map[string]any{"command": "rm -f " + d.victim}),
			use("Edit", map[string]any{"file_path": filepath.Join(mem, "MEMORY.md"), "old_string": "- [Old](old.md) — stale", "new_string": "- [Build](build.md) — make test runs the suite"}),
		}}
	}
	last := r.Messages[len(r.Messages)-1]
	d.results = append([]fakeapi.Block(nil), last.Content...)
	return fakeapi.TextReply("Merged the build notes.")
}

// check fails t unless the write outside and the rm were refused with a
// reason the agent read and the edit went through.
func (d *dreamScript) check(t *testing.T, mem string) {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, want := range []string{"MEMORY.md", mem} {
		if !strings.Contains(d.system, want) {
			t.Errorf("the dream's system prompt does not name %s:\n%s", want, d.system)
		}
	}
	if !strings.Contains(d.first, mem) {
		t.Errorf("the dream's first message does not name %s: %s", mem, d.first)
	}
	if len(d.results) != 3 {
		t.Fatalf("the dream's second request carries %d tool results, want 3", len(d.results))
	}
	for i, want := range []string{"only inside the memory directory", "read-only shell commands"} {
		r := d.results[i]
		if !r.IsError || !strings.Contains(blocksText(r.Content), want) {
			t.Errorf("tool result %d: is_error %v, %q; want a refusal saying %q", i, r.IsError, blocksText(r.Content), want)
		}
	}
	if r := d.results[2]; r.IsError {
		t.Errorf("the edit of MEMORY.md failed: %s", blocksText(r.Content))
	}
	if _, err := os.Stat(d.outside); !os.IsNotExist(err) {
		t.Errorf("the write outside the memory dir happened: %v", err)
	}
	if _, err := os.Stat(d.victim); err != nil {
		t.Errorf("rm ran: %v", err)
	}
	data, _ := os.ReadFile(filepath.Join(mem, "MEMORY.md"))
	if !strings.Contains(string(data), "make test runs the suite") {
		t.Errorf("MEMORY.md after the dream: %q", data)
	}
}

// seedMemory writes the index the scripted dream edits, and a file for it
// to try to remove.
func seedMemory(t *testing.T, s *Session) string {
	t.Helper()
	mem := s.MemoryDir()
	if mem == "" {
		t.Fatal("the session has no memory dir")
	}
	if err := os.WriteFile(filepath.Join(mem, "MEMORY.md"), []byte("- [Old](old.md) — stale\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mem, "old.md"), []byte("stale\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return mem
}

// TestDreamNow: cohort dream's Session.Dream runs the consolidation at
// once and waits for it; the agent is confined to the memory dir, its
// result names the files it touched, and no transcript is written for it.
// In bypassPermissions the write guard still holds.
func TestDreamNow(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"", "bypassPermissions"} {
		t.Run("mode="+mode, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			cfg := e.config()
			cfg.PermissionMode = mode
			s := e.open(cfg)
			mem := seedMemory(t, s)
			d := &dreamScript{outside: filepath.Join(e.dir, "notes.md"), victim: filepath.Join(mem, "old.md")}
			e.rt.on(dreamMarker, d.reply)
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			var evs []Event
			for ev, err := range s.Dream(ctx) {
				if err != nil {
					t.Fatal(err)
				}
				evs = append(evs, ev)
			}
			res := last(evs)
			if res.Type != EventResult || res.IsError || !strings.HasPrefix(res.Result, "Improved 1 memory: MEMORY.md.") {
				t.Fatalf("result %+v", res)
			}
			d.check(t, mem)
			var started, notified bool
			for _, ev := range evs {
				started = started || ev.Subtype == SubtypeTaskStarted && ev.TaskType == "dream"
				notified = notified || ev.Subtype == SubtypeTaskNotification && ev.Summary == "Improved 1 memory"
			}
			if !started || !notified {
				t.Errorf("task_started of a dream %v, notification \"Improved 1 memory\" %v", started, notified)
			}
			if side, _ := filepath.Glob(filepath.Join(filepath.Dir(mem), "*", "subagents", "*")); len(side) > 0 {
				t.Errorf("the dream left transcripts: %v", side)
			}
			when, err := dream.LastConsolidated(mem)
			if err != nil || when.IsZero() {
				t.Errorf("the lock was not committed: %v %v", when, err)
			}
		})
	}
}

// fiveSessions runs five scripted print-mode style sessions in the
// project, so that the sessions gate passes for the next one.
func fiveSessions(t *testing.T, e *env) {
	t.Helper()
	e.rt.on("PAST-SESSION", func(*fakeapi.Request) fakeapi.Reply { return fakeapi.TextReply("ok") })
	for i := range 5 {
		s, err := New(t.Context(), e.config())
		if err != nil {
			t.Fatal(err)
		}
		collect(t, s, fmt.Sprintf("PAST-SESSION %d", i))
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAutoDreamAfterFiveSessions: after five sessions, the next lead turn
// of a long-lived session (Config.AutoDream) starts a dream whose agent
// edits MEMORY.md and is refused outside the memory dir; the lead's
// context named the memory file it loaded.
func TestAutoDreamAfterFiveSessions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	fiveSessions(t, e)
	var leadFirst string
	var mu sync.Mutex
	e.rt.on("LEAD-ONE", func(r *fakeapi.Request) fakeapi.Reply {
		mu.Lock()
		leadFirst = r.FirstUserText()
		mu.Unlock()
		return fakeapi.TextReply("noted")
	})
	cfg := e.config()
	cfg.AutoDream = true
	probe := e.open(e.config()) // only to find and seed the memory dir
	mem := seedMemory(t, probe)
	s := e.open(cfg)
	d := &dreamScript{outside: filepath.Join(e.dir, "notes.md"), victim: filepath.Join(mem, "old.md")}
	e.rt.on(dreamMarker, d.reply)
	if res := last(collect(t, s, "LEAD-ONE")); res.IsError {
		t.Fatalf("lead turn: %+v", res)
	}
	a := agentOf(t, s, "dream", AgentCompleted)
	if a.Type != dream.AgentType {
		t.Errorf("dream agent %+v", a)
	}
	d.check(t, mem)
	mu.Lock()
	defer mu.Unlock()
	if want := "Loaded memory files: " + filepath.Join(mem, memory.IndexName); !strings.Contains(leadFirst, want) {
		t.Errorf("the lead's first message does not say %q:\n%s", want, leadFirst)
	}
}

// TestDreamNeverDelaysTheLead: with the fake holding the dream's request
// open, the lead's turn ends and its next turn runs to the end; Close then
// stops the dream and rolls its lock back. A dream stopped like any agent
// puts the lock's earlier mtime back.
func TestDreamNeverDelaysTheLead(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"close", "stop"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			fiveSessions(t, e)
			g := newGate()
			e.rt.on(dreamMarker, func(r *fakeapi.Request) fakeapi.Reply {
				g.wait(r)
				return fakeapi.TextReply("too late")
			})
			e.rt.on("LEAD-", func(r *fakeapi.Request) fakeapi.Reply { return fakeapi.TextReply("answered " + r.LastUserText()) })
			cfg := e.config()
			cfg.AutoDream = true
			s, err := New(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			lock := filepath.Join(s.MemoryDir(), dream.LockName)
			prior := time.Now().Add(-48 * time.Hour).Truncate(time.Second)
			if how == "stop" {
				if err := os.WriteFile(lock, nil, 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.Chtimes(lock, prior, prior); err != nil {
					t.Fatal(err)
				}
			}
			collect(t, s, "LEAD-ONE")
			g.await(t) // the dream's request is in the fake, held
			if res := last(collect(t, s, "LEAD-TWO")); res.IsError || !strings.Contains(res.Result, "LEAD-TWO") {
				t.Fatalf("the second turn, with the dream held: %+v", res)
			}
			select {
			case <-g.open:
				t.Fatal("the gate was opened")
			default:
			}
			if how == "stop" {
				a := agentOf(t, s, "dream", AgentRunning)
				if err := s.StopAgent(a.ID); err != nil {
					t.Fatal(err)
				}
				agentOf(t, s, "dream", AgentKilled)
				fi, err := os.Stat(lock)
				if err != nil || !fi.ModTime().Equal(prior) {
					t.Fatalf("after the stop the lock is %v %v, want its mtime back at %s", fi, err, prior)
				}
				return
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(lock); !os.IsNotExist(err) {
				t.Fatalf("Close left the first dream's lock behind: %v", err)
			}
		})
	}
}

// blocksText joins the text of blocks (a tool result's content).
func blocksText(bs []fakeapi.Block) string {
	var parts []string
	for _, b := range bs {
		parts = append(parts, b.Text)
	}
	return strings.Join(parts, "\n")
}

// TestAgentMemoryDir: an agent definition with memory: user is told about
// its own memory dir and saves there without asking, in a session nobody
// can approve anything in.
func TestAgentMemoryDir(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	dir := filepath.Join(e.cohortHome(), "agent-memory", "reviewer")
	first := make(chan string, 1)
	e.rt.on("REVIEW-TASK", func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			first <- r.FirstUserText()
			return fakeapi.Reply{Content: []fakeapi.Block{use("Write", map[string]any{"file_path": filepath.Join(dir, "style.md"), "content": "tabs\n"})}}
		}
		return fakeapi.TextReply("saved: " + r.LastToolResultText())
	})
	e.rt.on("LEAD-SPAWN", func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			return fakeapi.Reply{Content: []fakeapi.Block{use("Agent", map[string]any{"description": "review", "prompt": "REVIEW-TASK", "subagent_type": "reviewer"})}}
		}
		return fakeapi.TextReply("done")
	})
	cfg := e.config()
	cfg.Agents = `{"reviewer": {"description": "reviews code", "prompt": "You review.", "memory": "user"}}`
	collect(t, e.open(cfg), "LEAD-SPAWN")
	if got := <-first; !strings.Contains(got, "memory directory that lasts across sessions: "+dir) {
		t.Errorf("the agent's first message does not name its memory dir:\n%s", got)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "style.md")); err != nil || string(data) != "tabs\n" {
		t.Errorf("the agent's save: %q %v", data, err)
	}
}
