package tmux

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEscapeArg(t *testing.T) {
	tests := []struct{ in, want string }{
		{"plain", "plain"},
		{"", ""},
		{sep, ";"},
		{";", `\;`},
		{"a;", `a\;`},
		{`\;`, `\\;`},
		{`\;;`, `\;\;`},
		{"a;b", "a;b"},
		{"; ", "; "},
		{"#{pane_id}", "#{pane_id}"}, // not a format here: argv is not expanded
	}
	for _, tt := range tests {
		if got := escapeArg(tt.in); got != tt.want {
			t.Errorf("escapeArg(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestParseTMUX(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr bool
	}{
		{"/tmp/tmux-1000/default,1234,0", "/tmp/tmux-1000/default", false},
		{"/tmp/odd,name/sock,1234,12", "/tmp/odd,name/sock", false},
		{"/tmp/sock", "", true},
		{"/tmp/sock,12", "", true},
		{"relative,1,0", "", true},
		{"/tmp/sock,x,0", "", true},
		{"/tmp/sock,1,y", "", true},
		{"", "", true},
	}
	for _, tt := range tests {
		got, err := parseTMUX(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("parseTMUX(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestStartArgs(t *testing.T) {
	modern := featuresOf(Version{3, 3, "3.3a"})
	legacy := featuresOf(Version{2, 5, "2.5"})
	spec := PaneSpec{Argv: []string{"cohort", "teammate", "--name", "a;"}, Env: map[string]string{"B": "2", "A": "1"},
		Title: "t#1", Layout: Tiled}
	tests := []struct {
		name string
		feat features
		spec PaneSpec
		want []string
	}{
		{"modern", modern, spec, []string{
			"set-option", "-p", "-t", "%3", "remain-on-exit", "on", sep,
			"select-pane", "-t", "%3", "-T", "t##1", sep,
			"respawn-pane", "-k", "-t", "%3", "-e", "A=1", "-e", "B=2", "--", "cohort", "teammate", "--name", "a;",
			sep, "select-layout", "-t", "%3", "tiled",
			sep, "display-message", "-p", "-t", "%3", "#{pane_pid}"}},
		{"legacy: window option, no title, env prefix", legacy, PaneSpec{Argv: spec.Argv, Env: spec.Env, Title: "x"}, []string{
			"set-window-option", "-t", "%3", "remain-on-exit", "on", sep,
			"respawn-pane", "-k", "-t", "%3", "--", "env", "A=1", "B=2", "cohort", "teammate", "--name", "a;",
			sep, "display-message", "-p", "-t", "%3", "#{pane_pid}"}},
		{"lone program goes through env", modern, PaneSpec{Argv: []string{"htop"}}, []string{
			"set-option", "-p", "-t", "%3", "remain-on-exit", "on", sep,
			"respawn-pane", "-k", "-t", "%3", "--", "env", "htop",
			sep, "display-message", "-p", "-t", "%3", "#{pane_pid}"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &Server{feat: tt.feat}
			if diff := cmp.Diff(tt.want, s.startArgs("%3", tt.spec)); diff != "" {
				t.Errorf("startArgs (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckSpec(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ok := []string{"sh", "-c", "true"}
	tests := []struct {
		name   string
		legacy bool
		spec   PaneSpec
		want   string // substring of the error; "" for none
	}{
		{"valid", false, PaneSpec{Argv: ok, Cwd: dir, Env: map[string]string{"A_1": "x y;"}, Target: "%1", Layout: Tiled, Title: "alice"}, ""},
		{"no argv", false, PaneSpec{}, "empty command"},
		{"empty program", false, PaneSpec{Argv: []string{""}}, "empty command"},
		{"NUL in argument", false, PaneSpec{Argv: []string{"sh", "a\x00b"}}, "NUL"},
		{"lone dash program", false, PaneSpec{Argv: []string{"-x"}}, "through env(1)"},
		{"lone assignment program", false, PaneSpec{Argv: []string{"a=b"}}, "through env(1)"},
		{"dash program with args is fine", false, PaneSpec{Argv: []string{"-x", "y"}}, ""},
		{"dash program with legacy env", true, PaneSpec{Argv: []string{"-x", "y"}, Env: map[string]string{"A": "1"}}, "through env(1)"},
		{"bad env name", false, PaneSpec{Argv: ok, Env: map[string]string{"A=B": "1"}}, "environment variable name"},
		{"env name starting with digit", false, PaneSpec{Argv: ok, Env: map[string]string{"1A": "1"}}, "environment variable name"},
		{"NUL in env", false, PaneSpec{Argv: ok, Env: map[string]string{"A": "\x00"}}, "NUL"},
		{"target not a pane", false, PaneSpec{Argv: ok, Target: "mysession:1"}, "not a tmux pane id"},
		{"bad layout", false, PaneSpec{Argv: ok, Layout: "spiral"}, "tmux layout"},
		{"control in title", false, PaneSpec{Argv: ok, Title: "a\x1b]0;x"}, "control character"},
		{"relative cwd", false, PaneSpec{Argv: ok, Cwd: "sub"}, "not absolute"},
		{"missing cwd", false, PaneSpec{Argv: ok, Cwd: filepath.Join(dir, "missing")}, "no such file"},
		{"cwd is a file", false, PaneSpec{Argv: ok, Cwd: file}, "not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Version{3, 3, "3.3a"}
			if tt.legacy {
				v = Version{2, 9, "2.9"}
			}
			err := (&Server{feat: featuresOf(v)}).checkSpec(tt.spec)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("checkSpec: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Fatalf("checkSpec error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestCommandError(t *testing.T) {
	tests := []struct {
		stderr string
		want   error
	}{
		{"no server running on /tmp/x", ErrNoServer},
		{"error connecting to /tmp/x (No such file or directory)", ErrNoServer},
		{"error connecting to /tmp/x (Connection refused)", ErrNoServer},
		{"can't find pane: %99", ErrNoPane},
		{"can't find window: @4", ErrNoPane},
	}
	for _, tt := range tests {
		err := &CommandError{Args: []string{"kill-pane"}, Stderr: tt.stderr, Err: errors.New("exit code 1")}
		if !errors.Is(err, tt.want) {
			t.Errorf("%q does not match %v", tt.stderr, tt.want)
		}
	}
	other := &CommandError{Stderr: "error connecting to /tmp/x (Permission denied)", Err: errors.New("exit code 1")}
	if errors.Is(other, ErrNoServer) || errors.Is(other, ErrNoPane) {
		t.Errorf("permission denied classified as missing: %v", other)
	}
}

func TestRedact(t *testing.T) {
	args := []string{"-S", "/s", "respawn-pane", "-t", "%1", "-e", "ANTHROPIC_API_KEY=sk-secret", "--", "env", "TOKEN=secret", "cohort", sep, "display-message"}
	got := redact(args)
	if strings.Contains(got, "secret") {
		t.Errorf("redact leaks a value: %s", got)
	}
	want := "-S /s respawn-pane -t %1 -e ANTHROPIC_API_KEY=… -- env …"
	if got != want {
		t.Errorf("redact = %q, want %q", got, want)
	}
}

func TestParsePaneLine(t *testing.T) {
	tests := []struct {
		line    string
		want    PaneStatus
		wantErr bool
	}{
		{"%1|123|0||\n", PaneStatus{ID: "%1", PID: 123, ExitStatus: -1}, false},
		{"%2|124|1|3|", PaneStatus{ID: "%2", PID: 124, Dead: true, ExitStatus: 3}, false},
		{"%3|125|1||9", PaneStatus{ID: "%3", PID: 125, Dead: true, ExitStatus: -1, Signal: 9}, false},
		{"%4|126|1||", PaneStatus{ID: "%4", PID: 126, Dead: true, ExitStatus: -1}, false},
		{"%5|126|0|7|", PaneStatus{ID: "%5", PID: 126, ExitStatus: -1}, false}, // stale status of a live pane
		{"%1 123 0", PaneStatus{}, true},
		{"x|1|0||", PaneStatus{}, true},
		{"%1|x|0||", PaneStatus{}, true},
		{"%1|1|2||", PaneStatus{}, true},
		{"%1|1|0|||", PaneStatus{}, true},
	}
	for _, tt := range tests {
		got, err := parsePaneLine(tt.line)
		if (err != nil) != tt.wantErr {
			t.Errorf("parsePaneLine(%q) error = %v, want error %v", tt.line, err, tt.wantErr)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("parsePaneLine(%q) (-want +got):\n%s", tt.line, diff)
		}
	}
}
