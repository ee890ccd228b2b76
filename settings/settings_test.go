package settings

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tree builds a home, a repository and a working directory below it.
type tree struct {
	home, cohortHome, root, cwd string
}

func newTree(t *testing.T) tree {
	t.Helper()
	base := t.TempDir()
	tr := tree{
		home: filepath.Join(base, "home"),
		root: filepath.Join(base, "repo"),
	}
	tr.cohortHome = filepath.Join(tr.home, ".cohort")
	tr.cwd = filepath.Join(tr.root, "sub")
	for _, d := range []string{tr.home, filepath.Join(tr.root, ".git"), tr.cwd} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return tr
}

func (tr tree) env(compat bool) Env {
	return Env{Home: tr.home, CohortHome: tr.cohortHome, Cwd: tr.cwd, ClaudeCompat: compat}
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// allFiles writes every settings file, each setting "model" to its own
// label and adding one allow rule named after it.
func allFiles(t *testing.T, tr tree) []string {
	t.Helper()
	files := []string{
		filepath.Join(tr.home, ".claude", "settings.json"),
		filepath.Join(tr.cohortHome, "settings.json"),
		filepath.Join(tr.root, ".claude", "settings.json"),
		filepath.Join(tr.root, ".cohort", "settings.json"),
		filepath.Join(tr.cwd, ".claude", "settings.json"),
		filepath.Join(tr.cwd, ".cohort", "settings.json"),
		filepath.Join(tr.root, ".claude", "settings.local.json"),
		filepath.Join(tr.root, ".cohort", "settings.local.json"),
		filepath.Join(tr.cwd, ".claude", "settings.local.json"),
		filepath.Join(tr.cwd, ".cohort", "settings.local.json"),
	}
	for i, f := range files {
		write(t, f, `{"model": "m`+string(rune('0'+i))+`", "permissions": {"allow": ["Tool`+string(rune('0'+i))+`"]}}`)
	}
	return files
}

func TestLoadOrderAndPrecedence(t *testing.T) {
	tr := newTree(t)
	files := allFiles(t, tr)
	s := Load(tr.env(true))
	if len(s.Problems) != 0 {
		t.Fatalf("problems: %v", s.Problems)
	}
	var got []string
	for _, src := range s.Sources {
		got = append(got, src.Path)
	}
	if diff := cmp.Diff(files, got); diff != "" {
		t.Fatalf("source order (-want +got):\n%s", diff)
	}
	m, ok, probs := Winner[string](s, "model")
	if !ok || len(probs) != 0 || m.Value != "m9" || m.Source.Path != files[9] {
		t.Fatalf("model winner = %+v ok=%v probs=%v", m, ok, probs)
	}
	var rules []string
	for _, p := range s.Permissions() {
		for _, r := range p.Value.Allow {
			rules = append(rules, r.Value+"@"+filepath.Base(filepath.Dir(p.Source.Path)))
		}
	}
	want := []string{"Tool0@.claude", "Tool1@.cohort", "Tool2@.claude", "Tool3@.cohort", "Tool4@.claude",
		"Tool5@.cohort", "Tool6@.claude", "Tool7@.cohort", "Tool8@.claude", "Tool9@.cohort"}
	if diff := cmp.Diff(want, rules); diff != "" {
		t.Fatalf("rules concatenate in order (-want +got):\n%s", diff)
	}
	// Roots: project files resolve "/x" against their project directory,
	// user files against the directory holding them.
	roots := map[string]string{}
	for _, src := range s.Sources {
		roots[src.Path] = src.Root
	}
	if roots[files[0]] != filepath.Join(tr.home, ".claude") || roots[files[1]] != tr.cohortHome ||
		roots[files[2]] != tr.root || roots[files[5]] != tr.cwd {
		t.Fatalf("roots = %v", roots)
	}
}

func TestLoadClaudeCompatOff(t *testing.T) {
	tr := newTree(t)
	allFiles(t, tr)
	s := Load(tr.env(false))
	for _, src := range s.Sources {
		if strings.Contains(src.Path, ".claude") {
			t.Errorf("read %s with compatibility off", src.Path)
		}
	}
	if len(s.Sources) != 5 {
		t.Fatalf("got %d sources, want 5 .cohort files", len(s.Sources))
	}
}

func TestNewEnv(t *testing.T) {
	tests := []struct {
		name    string
		vars    map[string]string
		cwd     string
		want    Env
		wantErr string
	}{
		{name: "defaults", vars: map[string]string{"HOME": "/h"}, cwd: "/w",
			want: Env{Home: "/h", CohortHome: "/h/.cohort", Cwd: "/w", ClaudeCompat: true}},
		{name: "cohort home and compat off", vars: map[string]string{"HOME": "/h", "COHORT_HOME": "/c/", "COHORT_CLAUDE_COMPAT": "0"}, cwd: "/w",
			want: Env{Home: "/h", CohortHome: "/c", Cwd: "/w"}},
		{name: "compat false word", vars: map[string]string{"HOME": "/h", "COHORT_CLAUDE_COMPAT": "Off"}, cwd: "/w",
			want: Env{Home: "/h", CohortHome: "/h/.cohort", Cwd: "/w"}},
		{name: "compat 1", vars: map[string]string{"HOME": "/h", "COHORT_CLAUDE_COMPAT": "1"}, cwd: "/w",
			want: Env{Home: "/h", CohortHome: "/h/.cohort", Cwd: "/w", ClaudeCompat: true}},
		{name: "no home", vars: map[string]string{}, cwd: "/w", wantErr: "HOME is not set"},
		{name: "relative cohort home", vars: map[string]string{"HOME": "/h", "COHORT_HOME": "x"}, cwd: "/w", wantErr: "COHORT_HOME"},
		{name: "relative cwd", vars: map[string]string{"HOME": "/h"}, cwd: "w", wantErr: "not absolute"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := NewEnv(func(k string) string { return tt.vars[k] }, tt.cwd)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestProjectRoot(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, "home")
	repo := filepath.Join(home, "src", "repo")
	deep := filepath.Join(repo, "a", "b")
	wt := filepath.Join(home, "wt")
	for _, d := range []string{deep, filepath.Join(home, ".git"), wt} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(repo, ".git", "HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(wt, ".git"), "gitdir: /elsewhere\n") // a worktree's .git file
	tests := []struct{ cwd, want string }{
		{deep, repo},
		{repo, repo},
		{wt, wt},
		{filepath.Join(home, "src"), filepath.Join(home, "src")}, // home's dotfiles repo does not count
		{home, home},
	}
	for _, tt := range tests {
		if got := (Env{Home: home, Cwd: tt.cwd}).ProjectRoot(); got != tt.want {
			t.Errorf("ProjectRoot(%s) = %s, want %s", tt.cwd, got, tt.want)
		}
	}
}

func TestHomeAsCwdReadsFileOnce(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, "home")
	write(t, filepath.Join(home, ".cohort", "settings.json"), `{"model":"x"}`)
	write(t, filepath.Join(home, ".claude", "settings.json"), `{"model":"y"}`)
	s := Load(Env{Home: home, CohortHome: filepath.Join(home, ".cohort"), Cwd: home, ClaudeCompat: true})
	if len(s.Sources) != 2 {
		t.Fatalf("sources: %d, want 2 (each file once)", len(s.Sources))
	}
	for _, src := range s.Sources {
		if src.Scope != ScopeUser {
			t.Errorf("%s read as %s, want user", src.Path, src.Scope)
		}
	}
}

func TestInvalidJSONNamesLineAndColumn(t *testing.T) {
	tr := newTree(t)
	bad := filepath.Join(tr.root, ".cohort", "settings.json")
	write(t, bad, "{\n  \"permissions\": {\n    \"deny\": [\"Bash(rm:*)\",]\n  }\n}\n")
	good := filepath.Join(tr.cohortHome, "settings.json")
	write(t, good, `{"permissions": {"allow": ["Read"]}, "model": "ok"}`)
	s := Load(tr.env(false))
	if len(s.Problems) != 1 {
		t.Fatalf("problems = %v, want 1", s.Problems)
	}
	msg := s.Problems[0].Error()
	if !strings.HasPrefix(msg, bad+":3:") || !strings.Contains(msg, "invalid JSON") || !strings.Contains(msg, "fix the file") {
		t.Fatalf("problem = %q, want file:3:col, what and what to do", msg)
	}
	if m, ok, _ := Winner[string](s, "model"); !ok || m.Value != "ok" {
		t.Fatalf("the good file did not load: %+v", m)
	}
	perms := s.Permissions()
	if len(perms) != 2 {
		t.Fatalf("permissions sources = %d, want 2 (the broken one reported)", len(perms))
	}
	if !perms[1].Value.Incomplete || perms[1].Source.Path != bad || !perms[1].Source.Broken {
		t.Fatalf("broken source not marked incomplete: %+v", perms[1])
	}
	if perms[0].Value.Incomplete {
		t.Fatal("good source marked incomplete")
	}
}

func TestInvalidDocuments(t *testing.T) {
	tests := []struct {
		name, data string
		line, col  int
		want       string
	}{
		{"top level array", "[1]", 1, 1, "must be a JSON object"},
		{"trailing garbage", "{}\n x", 2, 2, "unexpected data"},
		{"unterminated", "{\"a\": [1, 2", 1, 12, "unexpected end of file"},
		{"bad token", "{\n\"a\": tru}", 2, 6, "invalid"},
		{"second line column counts characters", "{\"é\": 1,\n  \"b\" 2}", 2, 7, "invalid character"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Settings{}
			src := s.Add(ScopeCLI, "--settings", "/", []byte(tt.data))
			if !src.Broken || len(s.Problems) != 1 {
				t.Fatalf("broken=%v problems=%v", src.Broken, s.Problems)
			}
			p := s.Problems[0]
			if p.Line != tt.line || p.Col != tt.col || !strings.Contains(p.Msg, tt.want) {
				t.Fatalf("problem = %d:%d %q, want %d:%d containing %q", p.Line, p.Col, p.Msg, tt.line, tt.col, tt.want)
			}
		})
	}
}

func TestEmptyFileAndBOM(t *testing.T) {
	s := &Settings{}
	s.Add(ScopeCLI, "a", "/", []byte("  \n"))
	s.Add(ScopeCLI, "b", "/", []byte("\xEF\xBB\xBF{\"model\":\"m\"}"))
	if len(s.Problems) != 0 {
		t.Fatalf("problems: %v", s.Problems)
	}
	if m, ok, _ := Winner[string](s, "model"); !ok || m.Value != "m" {
		t.Fatalf("model = %+v", m)
	}
}

func TestPermissionShapes(t *testing.T) {
	tests := []struct {
		name           string
		data           string
		wantIncomplete bool
		wantDeny       []string
		wantAllow      []string
		wantProblem    string // substring of the single problem, "" for none
		wantDisable    bool
	}{
		{name: "ok", data: `{"permissions":{"allow":["Read"],"deny":["Bash(rm:*)"],"ask":[]}}`,
			wantAllow: []string{"Read"}, wantDeny: []string{"Bash(rm:*)"}},
		{name: "permissions not an object", data: `{"permissions":["Read"]}`,
			wantIncomplete: true, wantProblem: "permissions: must be an object"},
		{name: "deny is a string", data: `{"permissions":{"deny":"Bash"}}`,
			wantIncomplete: true, wantProblem: "permissions.deny: must be an array of strings, not a string"},
		{name: "ask entry not a string", data: `{"permissions":{"ask":["Bash", 3]}}`,
			wantIncomplete: true, wantProblem: "permissions.ask[1]: must be a string"},
		{name: "deny entry not a string keeps the others", data: `{"permissions":{"deny":[{"tool":"Bash"}, "Read"]}}`,
			wantIncomplete: true, wantDeny: []string{"Read"}, wantProblem: "permissions.deny[0]"},
		{name: "bad allow entry is dropped, not incomplete", data: `{"permissions":{"allow":[true, "Read"]}}`,
			wantAllow: []string{"Read"}, wantProblem: "permissions.allow[0]: must be a string"},
		{name: "allow not array", data: `{"permissions":{"allow":{"Read":true}}}`,
			wantProblem: "permissions.allow: must be an array of strings, not an object"},
		{name: "disable bypass", data: `{"permissions":{"disableBypassPermissionsMode":"disable"}}`, wantDisable: true},
		{name: "disable bypass false", data: `{"permissions":{"disableBypassPermissionsMode":false}}`},
		{name: "disable bypass odd value fails closed", data: `{"permissions":{"disableBypassPermissionsMode":"yes"}}`,
			wantDisable: true, wantProblem: "disableBypassPermissionsMode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Settings{}
			s.Add(ScopeProject, "/p/.cohort/settings.json", "/p", []byte(tt.data))
			perms := s.Permissions()
			if len(perms) != 1 {
				t.Fatalf("got %d permission sources", len(perms))
			}
			p := perms[0].Value
			if p.Incomplete != tt.wantIncomplete || p.DisableBypass != tt.wantDisable {
				t.Errorf("incomplete=%v disable=%v, want %v %v", p.Incomplete, p.DisableBypass, tt.wantIncomplete, tt.wantDisable)
			}
			if diff := cmp.Diff(tt.wantDeny, values(p.Deny)); diff != "" {
				t.Errorf("deny (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantAllow, values(p.Allow)); diff != "" {
				t.Errorf("allow (-want +got):\n%s", diff)
			}
			switch {
			case tt.wantProblem == "" && len(s.Problems) != 0:
				t.Errorf("unexpected problems %v", s.Problems)
			case tt.wantProblem != "" && (len(s.Problems) != 1 || !strings.Contains(s.Problems[0].Error(), tt.wantProblem)):
				t.Errorf("problems = %v, want one containing %q", s.Problems, tt.wantProblem)
			case tt.wantProblem != "" && !strings.HasPrefix(s.Problems[0].Error(), "/p/.cohort/settings.json:1:"):
				t.Errorf("problem %q does not name file and line", s.Problems[0])
			}
		})
	}
}

func values(ts []Text) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Value)
	}
	return out
}

func TestRulePositions(t *testing.T) {
	s := &Settings{}
	s.Add(ScopeLocal, "f.json", "/", []byte("{\n  \"permissions\": {\n    \"deny\": [\n      \"Bash(rm:*)\",\n\t\"Read(./x)\"\n    ],\n    \"defaultMode\": 7\n  }\n}"))
	p := s.Permissions()[0].Value
	want := []Text{{"Bash(rm:*)", 4, 7}, {"Read(./x)", 5, 2}}
	if diff := cmp.Diff(want, p.Deny); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if p.DefaultMode != (Text{"7", 7, 20}) {
		t.Fatalf("defaultMode = %+v", p.DefaultMode)
	}
}

func TestDuplicateKeyWarns(t *testing.T) {
	s := &Settings{}
	s.Add(ScopeUser, "u.json", "/", []byte(`{"model":"a",
"model":"b"}`))
	if len(s.Problems) != 1 || !strings.Contains(s.Problems[0].Error(), "u.json:2:1: model: duplicate key") {
		t.Fatalf("problems = %v", s.Problems)
	}
	if m, _, _ := Winner[string](s, "model"); m.Value != "b" {
		t.Fatalf("model = %q, want the last", m.Value)
	}
}

func TestSectionsAndMerge(t *testing.T) {
	s := &Settings{}
	s.Add(ScopeUser, "u.json", "/", []byte(`{"env":{"A":"1","B":"2"},"hooks":{"Stop":[]},"flags":{"x":true}}`))
	s.Add(ScopeProject, "p.json", "/", []byte(`{"env":{"B":"3","C":4},"hooks":{"PreToolUse":[]},"flags":7}`))
	env, probs := MergeObject[string](s, "env")
	got := map[string]string{}
	for k, v := range env {
		got[k] = v.Value + "@" + v.Source.Path
	}
	if diff := cmp.Diff(map[string]string{"A": "1@u.json", "B": "3@p.json"}, got); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
	if len(probs) != 1 || !strings.Contains(probs[0].Error(), "p.json:1:") || !strings.Contains(probs[0].Error(), "env.C: wrong type: expected a string, found number") {
		t.Errorf("env problems = %v", probs)
	}
	hooks := s.Section("hooks")
	if len(hooks) != 2 || string(hooks[1].Value) != `{"PreToolUse":[]}` || hooks[0].Source.Path != "u.json" {
		t.Errorf("hooks sections = %+v", hooks)
	}
	flags, probs := Collect[map[string]bool](s, "flags")
	if len(flags) != 1 || !flags[0].Value["x"] || len(probs) != 1 || !strings.Contains(probs[0].Error(), "p.json") {
		t.Errorf("flags = %+v, problems = %v", flags, probs)
	}
	type hookCfg struct {
		Stop []json.RawMessage `json:"Stop"`
	}
	if _, probs := Collect[hookCfg](s, "hooks"); len(probs) != 0 {
		t.Errorf("hooks decode problems: %v", probs)
	}
}

func TestUnreadableFileIsIncomplete(t *testing.T) {
	tr := newTree(t)
	// A directory where a file should be cannot be read.
	if err := os.MkdirAll(filepath.Join(tr.root, ".cohort", "settings.local.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := Load(tr.env(false))
	if len(s.Problems) != 1 || !strings.Contains(s.Problems[0].Error(), "cannot read settings file") {
		t.Fatalf("problems = %v", s.Problems)
	}
	perms := s.Permissions()
	if len(perms) != 1 || !perms[0].Value.Incomplete {
		t.Fatalf("permissions = %+v", perms)
	}
}

// TestSettingsDirThatIsAFile: a .claude or .cohort that is a plain file
// (which a command can create where the directory is missing) holds no
// settings, so nothing of its layer is missing: one warning naming it,
// and no source, so nothing fails closed. The other layers still load.
func TestSettingsDirThatIsAFile(t *testing.T) {
	tr := newTree(t)
	write(t, filepath.Join(tr.root, ".claude"), "")
	write(t, filepath.Join(tr.root, ".cohort", "settings.json"), `{"permissions": {"allow": ["Bash(ls)"]}}`)
	s := Load(tr.env(true))
	if len(s.Problems) != 1 || s.Problems[0].Path != filepath.Join(tr.root, ".claude") || !strings.Contains(s.Problems[0].Error(), "not a directory") || !strings.Contains(s.Problems[0].Error(), "remove it") {
		t.Fatalf("problems = %v, want one naming %s/.claude", s.Problems, tr.root)
	}
	for _, p := range s.Permissions() {
		if p.Value.Incomplete {
			t.Errorf("%s is marked incomplete: a settings dir that is a file must not fail closed", p.Source.Path)
		}
	}
	if perms := s.Permissions(); len(perms) != 1 || len(perms[0].Value.Allow) != 1 {
		t.Fatalf("permissions = %+v, want the .cohort file's", perms)
	}
}
