package workflow

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
)

// crashEnv makes the test binary a child that runs crashScript and SIGKILLs
// itself when its killAt-th agent starts: "dir,killAt".
const crashEnv = "COHORT_WORKFLOW_CRASH_CHILD"

const crashScript = head + `
const items = ["a", "b", "c", "d", "e", "f"]
const out = await pipeline(items,
  (x) => agent("review " + x, {phase: "review"}),
  (r, x) => agent("verify " + x + ": " + r, {phase: "verify"}))
return {out, n: out.length}`

// stable answers depend only on the prompt, as a deterministic model would.
func stable(req AgentRequest) (string, error) {
	return fmt.Sprintf("ok(%d)", len(req.Prompt)), nil
}

func crashChild() int {
	dir, at, _ := strings.Cut(os.Getenv(crashEnv), ",")
	killAt, err := strconv.Atoi(at)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bad", crashEnv)
		return 2
	}
	var n atomic.Int64
	sp := &scripted{answer: func(req AgentRequest) (string, error) {
		if int(n.Add(1)) == killAt {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal arrives before this returns
		}
		return stable(req)
	}}
	s, err := Load("flow.js", crashScript)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if _, err := Run(context.Background(), s, Config{Spawner: sp, Dir: dir, Concurrency: 2}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0 // not reached when the kill point is within the run
}

func TestResumeAfterSIGKILL(t *testing.T) {
	// The uninterrupted run, for the value and the number of agents.
	clean := &scripted{answer: stable}
	want, full := runJSON(t, crashScript, Config{Spawner: clean, Dir: t.TempDir(), Concurrency: 2})

	for _, killAt := range []int{1, 5, 9, 12} {
		t.Run(fmt.Sprintf("kill at agent %d", killAt), func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s,%d", crashEnv, dir, killAt))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("child did not die of SIGKILL: %v; stderr: %s", err, stderr.String())
			}
			finished := countLines(t, filepath.Join(dir, JournalName), `"type":"end"`)
			if finished >= full.Live {
				t.Fatalf("the journal shows %d finished of %d: the kill point was not mid-run", finished, full.Live)
			}

			sp := &scripted{answer: stable}
			res, err := Run(t.Context(), mustLoad(t, crashScript), Config{Spawner: sp, Dir: dir, Resume: true, Concurrency: 2})
			if err != nil {
				t.Fatal(err)
			}
			var got any
			if err := json.Unmarshal(res.Value, &got); err != nil {
				t.Fatal(err)
			}
			if !jsonEqual(want, got) {
				t.Errorf("resumed value %v, want %v", got, want)
			}
			if n := int(sp.calls.Load()); n != full.Live-finished {
				t.Errorf("resumed run spawned %d agents, want %d (%d total, %d finished before the kill)", n, full.Live-finished, full.Live, finished)
			}
			if res.Replayed != finished {
				t.Errorf("replayed %d steps, want %d", res.Replayed, finished)
			}
		})
	}
}

func TestResumeEditedScript(t *testing.T) {
	dir := t.TempDir()
	original := head + `
const a = await agent("first")
const b = await agent("second")
const c = await agent("third")
return [a, b, c]`
	edited := strings.Replace(original, `agent("second")`, `agent("second, reworded")`, 1)
	if _, err := Run(t.Context(), mustLoad(t, original), Config{Spawner: &scripted{answer: echo}, Dir: dir}); err != nil {
		t.Fatal(err)
	}
	sp := &scripted{answer: echo}
	res, err := Run(t.Context(), mustLoad(t, edited), Config{Spawner: sp, Dir: dir, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	// "first" replays; "second" changed, so it and everything after run live
	// even though "third" is the same text.
	if diff := fmt.Sprint(sp.prompts); diff != "[second, reworded third]" {
		t.Errorf("live prompts = %v, want [second, reworded third]", sp.prompts)
	}
	if res.Replayed != 1 || res.Live != 2 {
		t.Errorf("replayed %d, live %d; want 1 and 2", res.Replayed, res.Live)
	}
	if string(res.Value) != `["done: first","done: second, reworded","done: third"]` {
		t.Errorf("value %s", res.Value)
	}
}

func TestResumeFailedStepRunsAgain(t *testing.T) {
	dir := t.TempDir()
	src := head + `return [await agent("flaky"), await agent("steady")]`
	first := &scripted{answer: func(r AgentRequest) (string, error) {
		if r.Prompt == "flaky" {
			return "", errors.New("overloaded")
		}
		return "ok", nil
	}}
	if _, err := Run(t.Context(), mustLoad(t, src), Config{Spawner: first, Dir: dir}); err != nil {
		t.Fatal(err)
	}
	sp := &scripted{answer: func(AgentRequest) (string, error) { return "fine now", nil }}
	res, err := Run(t.Context(), mustLoad(t, src), Config{Spawner: sp, Dir: dir, Resume: true})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Value) != `["fine now","ok"]` || fmt.Sprint(sp.prompts) != "[flaky]" {
		t.Errorf("value %s, live prompts %v; want the failed step alone to run again", res.Value, sp.prompts)
	}
}

func TestResumeCorruptJournal(t *testing.T) {
	src := head + `return await agent("one")`
	for name, mangle := range map[string]func(string) string{
		"garbage line":      func(s string) string { return s + "{not json\n" },
		"edited value":      func(s string) string { return strings.Replace(s, `"done: one"`, `"forged"`, 1) },
		"unknown entry":     func(s string) string { return s + `{"type":"mystery"}` + "\n" },
		"value without sum": func(s string) string { return s + `{"type":"end","key":"x#0","value":"v"}` + "\n" },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if _, err := Run(t.Context(), mustLoad(t, src), Config{Spawner: &scripted{answer: echo}, Dir: dir}); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, JournalName)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(mangle(string(data))), 0o600); err != nil {
				t.Fatal(err)
			}
			sp := &scripted{answer: echo}
			_, err = Run(t.Context(), mustLoad(t, src), Config{Spawner: sp, Dir: dir, Resume: true})
			if !errors.Is(err, ErrCorruptJournal) || !strings.Contains(err.Error(), "line ") || !strings.Contains(err.Error(), "fresh run") {
				t.Fatalf("err = %v, want ErrCorruptJournal naming the line and offering a fresh run", err)
			}
			if sp.calls.Load() != 0 {
				t.Fatal("agents ran on a corrupt journal")
			}
		})
	}
	t.Run("torn last line reruns that step", func(t *testing.T) {
		dir := t.TempDir()
		if _, err := Run(t.Context(), mustLoad(t, src), Config{Spawner: &scripted{answer: echo}, Dir: dir}); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, JournalName)
		data, _ := os.ReadFile(path)
		torn := data[:len(data)-10] // cut into the "end" line, as a crash mid-write would
		if err := os.WriteFile(path, torn, 0o600); err != nil {
			t.Fatal(err)
		}
		sp := &scripted{answer: echo}
		res, err := Run(t.Context(), mustLoad(t, src), Config{Spawner: sp, Dir: dir, Resume: true})
		if err != nil {
			t.Fatal(err)
		}
		if sp.calls.Load() != 1 || string(res.Value) != `"done: one"` {
			t.Fatalf("calls %d value %s", sp.calls.Load(), res.Value)
		}
	})
}

func countLines(t *testing.T, path, substr string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(data), substr)
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
