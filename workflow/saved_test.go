package workflow

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestSavedWorkflows(t *testing.T) {
	project, home := t.TempDir(), t.TempDir()
	write(t, filepath.Join(project, ".claude/workflows/review.js"), "export const meta = {name: 'review', description: 'claude dir'}\n")
	write(t, filepath.Join(project, ".cohort/workflows/review.js"), "export const meta = {name: 'review', description: 'cohort dir'}\n")
	write(t, filepath.Join(project, ".cohort/workflows/broken.js"), "export const meta = {name: x, description: 'd'}\n")
	write(t, filepath.Join(home, ".cohort/workflows/triage.js"), "export const meta = {name: 'triage', description: 'from home'}\n")
	write(t, filepath.Join(project, ".claude/workflows/notes.txt"), "not a script")

	list, err := List(project, home)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range list {
		if s.Err != nil {
			got = append(got, s.Name+": error")
			if !strings.Contains(s.Err.Error(), "broken.js") {
				t.Errorf("error does not name the file: %v", s.Err)
			}
			continue
		}
		got = append(got, s.Name+": "+s.Script.Meta.Description)
	}
	if strings.Join(got, "; ") != "broken: error; review: claude dir; triage: from home" {
		t.Errorf("List = %q", got)
	}
	if s, err := Find("triage", project, home); err != nil || s.Meta.Description != "from home" {
		t.Errorf("Find triage: %v", err)
	}
	for _, bad := range []string{"../etc/passwd", "missing"} {
		if _, err := Find(bad, project, home); err == nil {
			t.Errorf("Find(%q) succeeded", bad)
		}
	}
}

func TestRunDir(t *testing.T) {
	root := t.TempDir()
	s := mustLoad(t, head+"return 1")
	id, dir, err := NewRun(root, s)
	if err != nil {
		t.Fatal(err)
	}
	got, err := RunDir(root, id)
	if err != nil || got != dir {
		t.Fatalf("RunDir = %q, %v; want %q", got, err, dir)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, ScriptName)); string(data) != s.Source {
		t.Errorf("saved script %q", data)
	}
	for _, bad := range []string{"../x", "wfzz", "wf0123456789abcdef", "wf_0123456789abcdef"} {
		if _, err := RunDir(root, bad); err == nil {
			t.Errorf("RunDir(%q) succeeded", bad)
		}
	}
}
