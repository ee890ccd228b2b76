package slashcmd

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestExpandAsClaudeCode: the expansions recorded from Claude Code 2.1.332
// (fakeserve -relay, -p "/greet the whole team", "/greet", "/lsit only go
// files"), byte for byte: the command files end in a newline, and so do
// the tags' lines. internal/conformance checks the whole user message
// against a re-recordable record (TestHookInputsMatchClaudeCode).
func TestExpandAsClaudeCode(t *testing.T) {
	dir := t.TempDir()
	for name, text := range map[string]string{"greet": "Say hello to $ARGUMENTS, warmly.\n", "lsit": "---\ndescription: list\n---\n\n List the files here.\n"} {
		if err := os.MkdirAll(filepath.Join(dir, ".claude", "commands"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, ".claude", "commands", name+".md"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		prompt     string
		tags, text string
	}{
		{"/greet the whole team", "<command-message>greet</command-message>\n<command-name>/greet</command-name>\n<command-args>the whole team</command-args>\n",
			"Say hello to the whole team, warmly.\n"},
		{"/greet", "<command-message>greet</command-message>\n<command-name>/greet</command-name>\n", "Say hello to , warmly.\n"},
		{"/lsit only go files", "<command-message>lsit</command-message>\n<command-name>/lsit</command-name>\n<command-args>only go files</command-args>\n",
			"List the files here.\n\n\nARGUMENTS: only go files"},
	} {
		cmd, args, ok, err := Find(dir, c.prompt, nil)
		if !ok || err != nil {
			t.Fatalf("%s: no command found", c.prompt)
		}
		if got := cmd.Tags(args); got != c.tags {
			t.Errorf("%s: tags %q, want %q", c.prompt, got, c.tags)
		}
		if got := cmd.Expand(args); got != c.text {
			t.Errorf("%s: text %q, want %q", c.prompt, got, c.text)
		}
	}
}

// A command file the model could have planted as a link to Cohort's own
// environment, to a file a Read deny rule covers, or as a FIFO is not
// read: Find says which command and why, and hands back no text.
func TestFindRefusesPlantedCommandFiles(t *testing.T) {
	dir := t.TempDir()
	cmds := filepath.Join(dir, ".claude", "commands")
	if err := os.MkdirAll(cmds, 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(dir, "secrets", "key")
	os.MkdirAll(filepath.Dir(secret), 0o700)
	if err := os.WriteFile(secret, []byte("s3cret"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Symlink("/proc/self/environ", filepath.Join(cmds, "env.md"))
	os.Symlink(secret, filepath.Join(cmds, "key.md"))
	if err := syscall.Mkfifo(filepath.Join(cmds, "fifo.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(cmds, "ok.md"), []byte("fine\n"), 0o644)
	denied := func(p string) bool { return p == secret }
	for _, name := range []string{"env", "key", "fifo"} {
		c, _, ok, err := Find(dir, "/"+name+" now", denied)
		if ok || err == nil || !strings.Contains(err.Error(), "/"+name) || c.Body != "" {
			t.Errorf("/%s: %+v, ok %v, err %v; want an error naming the command and no text", name, c, ok, err)
		}
	}
	if c, _, ok, err := Find(dir, "/ok", denied); !ok || err != nil || c.Body != "fine\n" {
		t.Errorf("/ok: %+v, %v, %v", c, ok, err)
	}
	if _, _, ok, err := Find(dir, "/none", denied); ok || err != nil {
		t.Errorf("/none: ok %v, err %v; want no command and no error", ok, err)
	}
	// Load (the terminal UI's list, with no deny rules) leaves out what
	// is no regular file or is the kernel's.
	if names := Load(dir); len(names) != 2 || names[0].Name != "key" || names[1].Name != "ok" {
		t.Errorf("Load = %+v, want key and ok", names)
	}
}
