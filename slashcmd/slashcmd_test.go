package slashcmd

import (
	"os"
	"path/filepath"
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
		cmd, args, ok := Find(dir, c.prompt)
		if !ok {
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
