package slashcmd

import "testing"

// TestExpandAsClaudeCode: the expansions recorded from Claude Code 2.1.332
// (fakeserve -relay, -p "/greet the whole team", "/greet", "/lsit only go
// files"), less the trailing newline Cohort's user blocks trim.
func TestExpandAsClaudeCode(t *testing.T) {
	greet := Command{Name: "greet", Body: "Say hello to $ARGUMENTS, warmly."}
	lsit := Command{Name: "lsit", Body: "List the files here."}
	for _, c := range []struct {
		cmd        Command
		args, tags string
		text       string
	}{
		{greet, "the whole team", "<command-message>greet</command-message>\n<command-name>/greet</command-name>\n<command-args>the whole team</command-args>",
			"Say hello to the whole team, warmly."},
		{greet, "", "<command-message>greet</command-message>\n<command-name>/greet</command-name>", "Say hello to , warmly."},
		{lsit, "only go files", "<command-message>lsit</command-message>\n<command-name>/lsit</command-name>\n<command-args>only go files</command-args>",
			"List the files here.\n\n\nARGUMENTS: only go files"},
	} {
		if got := c.cmd.Tags(c.args); got != c.tags {
			t.Errorf("/%s %s: tags %q, want %q", c.cmd.Name, c.args, got, c.tags)
		}
		if got := c.cmd.Expand(c.args); got != c.text {
			t.Errorf("/%s %s: text %q, want %q", c.cmd.Name, c.args, got, c.text)
		}
	}
}
