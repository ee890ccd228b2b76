package permission

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/cohort-dev/cohort/settings"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fixture is a home directory and a git project in a temporary directory.
type fixture struct {
	t                           testing.TB
	base, home, cohortHome, cwd string
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, base: base, home: filepath.Join(base, "home"), cwd: filepath.Join(base, "proj")}
	f.cohortHome = filepath.Join(f.home, ".cohort")
	f.mkdir("home", "proj/.git", "proj/src", "proj/secrets", "outside")
	f.write("proj/secrets/key", "k")
	f.write("proj/src/main.go", "package main")
	f.write("outside/data", "d")
	return f
}

func (f *fixture) path(rel string) string { return filepath.Join(f.base, rel) }

func (f *fixture) mkdir(rels ...string) {
	f.t.Helper()
	for _, r := range rels {
		if err := os.MkdirAll(f.path(r), 0o755); err != nil {
			f.t.Fatal(err)
		}
	}
}

func (f *fixture) write(rel, data string) {
	f.t.Helper()
	if err := os.MkdirAll(filepath.Dir(f.path(rel)), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(f.path(rel), []byte(data), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) symlink(target, rel string) {
	f.t.Helper()
	if err := os.Symlink(target, f.path(rel)); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) env() settings.Env {
	return settings.Env{Home: f.home, CohortHome: f.cohortHome, Cwd: f.cwd}
}

// perms writes a project settings file with the given permissions.
func (f *fixture) perms(allow, deny, ask []string) {
	f.t.Helper()
	p := map[string]any{}
	if allow != nil {
		p["allow"] = allow
	}
	if deny != nil {
		p["deny"] = deny
	}
	if ask != nil {
		p["ask"] = ask
	}
	data, _ := json.Marshal(map[string]any{"permissions": p})
	f.write("proj/.cohort/settings.json", string(data))
}

// checker loads the settings files and builds a checker in mode.
func (f *fixture) checker(mode Mode) *Checker {
	f.t.Helper()
	s := settings.Load(f.env())
	c, err := New(Config{Env: f.env(), Settings: s, Mode: mode})
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

func input(kv ...string) json.RawMessage {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	data, _ := json.Marshal(m)
	return data
}

func bash(cmd string) Request { return Request{Tool: "Bash", Input: input("command", cmd)} }

func read(path string) Request {
	return Request{Tool: "Read", Input: input("file_path", path), ReadOnly: true}
}

func edit(path string) Request {
	return Request{Tool: "Edit", Input: input("file_path", path, "old_string", "a", "new_string", "b")}
}

func (f *fixture) decide(c *Checker, req Request) Decision {
	f.t.Helper()
	return c.Check(f.t.Context(), req)
}

// checkerWith builds a checker whose project settings hold the given rules,
// without writing a settings file.
func (f *fixture) checkerWith(mode Mode, allow, deny, ask []string) *Checker {
	f.t.Helper()
	p := map[string]any{"allow": allow, "deny": deny, "ask": ask}
	data, _ := json.Marshal(map[string]any{"permissions": p})
	s := &settings.Settings{}
	s.Add(settings.ScopeProject, filepath.Join(f.cwd, ".cohort", "settings.json"), f.cwd, data)
	c, err := New(Config{Env: f.env(), Settings: s, Mode: mode})
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

func contextWithCancel(t *testing.T) (context.Context, context.CancelFunc) {
	return context.WithCancel(t.Context())
}
