package shell

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/tool"
)

// lineGuard refuses command lines that mention a word; it records what it
// was asked.
type lineGuard struct {
	word     string
	cmd, dir string
}

func (g *lineGuard) CheckWrite(string) error { return nil }
func (g *lineGuard) CheckCommand(cmd, dir string) error {
	g.cmd, g.dir = cmd, dir
	if strings.Contains(cmd, g.word) {
		return errors.New("refused by the guard")
	}
	return nil
}

func TestBashAsksACommandGuard(t *testing.T) {
	dir := t.TempDir()
	g := &lineGuard{word: "forbidden"}
	started := false
	b := NewBash(Config{Background: func(context.Context, *tool.Env, string, string, RunFunc) (string, string, error) {
		started = true
		return "t1", "/out", nil
	}})
	env := &tool.Env{Caller: tool.Caller{Cwd: dir}, Guard: g}
	marker := filepath.Join(dir, "ran")

	res, err := run(t, b, t.Context(), env, map[string]any{"command": "touch " + marker + " # forbidden"})
	if err != nil || !res.IsError || !strings.Contains(res.TextOf(), "Command refused: refused by the guard") {
		t.Fatalf("refused foreground call = %+v, %v", res, err)
	}
	if g.dir != dir {
		t.Errorf("guard asked about dir %q, want %q", g.dir, dir)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a refused command ran")
	}
	res, err = run(t, b, t.Context(), env, map[string]any{"command": "forbidden", "run_in_background": true})
	if err != nil || !res.IsError || started {
		t.Fatalf("refused background call = %+v, %v (started: %v)", res, err, started)
	}
	res, err = run(t, b, t.Context(), env, map[string]any{"command": "touch " + marker})
	if err != nil || res.IsError {
		t.Fatalf("allowed call = %+v, %v", res, err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatal("an allowed command did not run")
	}
}
