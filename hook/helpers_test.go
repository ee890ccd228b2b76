package hook

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/engine"
	"github.com/cohort-dev/cohort/settings"
	"github.com/cohort-dev/cohort/tool"
)

// script writes a shell script into dir and returns the command that runs
// it. The command is "/bin/sh PATH", not PATH: a file just written cannot
// be executed while any process holds it open for writing, and a process
// that another test forks at that moment inherits the descriptor until it
// execs (ETXTBSY, "Text file busy"). sh only reads the file.
func script(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return "/bin/sh " + path
}

// spec is one hook for settingsJSON.
type spec struct {
	event   Event
	matcher string
	cmd     string
	timeout float64
	cond    string // the entry's "if"
}

// settingsJSON renders specs as a settings file, one group per spec.
func settingsJSON(t *testing.T, specs ...spec) []byte {
	t.Helper()
	hooks := map[string][]any{}
	for _, s := range specs {
		h := map[string]any{"type": "command", "command": s.cmd}
		if s.timeout > 0 {
			h["timeout"] = s.timeout
		}
		if s.cond != "" {
			h["if"] = s.cond
		}
		hooks[string(s.event)] = append(hooks[string(s.event)], map[string]any{"matcher": s.matcher, "hooks": []any{h}})
	}
	data, err := json.MarshalIndent(map[string]any{"hooks": hooks}, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// loadSet parses a settings document as if read from path.
func loadSet(path string, data []byte) (*Set, []*settings.Problem) {
	s := &settings.Settings{}
	s.Add(settings.ScopeProject, path, filepath.Dir(path), data)
	set, probs := FromSettings(s)
	return set, append(s.Problems, probs...)
}

// newRunner builds a runner for specs with short stop grace periods; it
// fails the test on any configuration problem.
func newRunner(t *testing.T, cfg Config, specs ...spec) *Runner {
	t.Helper()
	set, probs := loadSet(filepath.Join(t.TempDir(), "settings.json"), settingsJSON(t, specs...))
	if len(probs) > 0 {
		t.Fatalf("problems: %v", probs)
	}
	cfg.Hooks = set
	if cfg.Grace == 0 {
		cfg.Grace = 100 * time.Millisecond
	}
	return NewRunner(cfg)
}

func call(cwd, name, input string) *engine.Call {
	return &engine.Call{ID: "toolu_1", Name: name, Input: json.RawMessage(input), Env: &tool.Env{Caller: tool.Caller{Cwd: cwd}}}
}

// alive reports whether pid is a running (not zombie) process.
func alive(t *testing.T, pid int) bool {
	t.Helper()
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return false
	}
	state := s[i+2]
	return state != 'Z' && state != 'X'
}

func readPid(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatalf("pid file %s: %v", path, err)
	}
	return pid
}

func readJSON(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, data)
	}
	return m
}

func mkdir(path string) error { return os.MkdirAll(path, 0o755) }

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func writeFileT(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
