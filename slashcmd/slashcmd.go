// Package slashcmd reads a project's custom slash commands — Markdown
// prompts in .claude/commands and .cohort/commands — and expands a prompt
// that names one ("/review the parser") into the command's text.
//
// Decisions the spec leaves open:
//
//   - The session expands, not the front end: a prompt that reaches
//     Session.Run from the terminal UI, print mode or an SDK host is
//     expanded the same way, and UserPromptExpansion hooks fire for it,
//     as Claude Code 2.1.332 expands custom commands in -p and stream-json
//     as well as in its terminal. A "/name" that names no custom command
//     is sent to the model as typed, as before.
//   - Commands are read when a prompt starts with "/", so a command file
//     written during a session is found by its next prompt without a
//     watcher. Only the project's commands are read (the directory the
//     session was started in), .cohort/ winning over .claude/ for one
//     name; files over 1 MiB or unreadable are skipped.
//   - A command file is read as internal/ownread reads instructions
//     (ownread.Text): a link is followed, but what it opens must be a
//     regular file outside /proc, /dev and /sys that no Read deny rule
//     covers, opened without blocking. A model that writes the project can
//     make .claude/commands/review.md a link to /proc/self/environ or to a
//     denied secret, or a FIFO; the user who types /review is then told
//     why the command was not read (Find's error), and nothing of it
//     reaches the model.
//   - $ARGUMENTS in the body takes the text after the name; a body
//     without it gets them after "ARGUMENTS: ", two blank lines below
//     its last line, as Claude Code 2.1.332 sends them (recorded from it
//     against the fake API). The body is the file's text after the
//     frontmatter with its leading blank space dropped and its end kept
//     as written (trailing newlines and spaces too), and every line of
//     the tags ends in a newline, as Claude Code sends them: these two
//     blocks keep their bytes in the user message (internal/conformance
//     compares them with the record, TestHookInputsMatchClaudeCode).
//   - The hook's command_source is "projectSettings", the source Claude
//     Code gives a command read from the project's .claude/commands.
//   - The model reads what was typed, tagged, before the command's text
//     (Tags): "<command-message>name</command-message>",
//     "<command-name>/name</command-name>" and, with arguments,
//     "<command-args>args</command-args>", one per line, as Claude Code
//     writes a typed command into the user message and its transcript.
//     Users' hooks, transcript readers and prompts look for this shape, so
//     Cohort keeps it rather than sending the bare text. The tags are one
//     text block and the command's text another.
//   - A command typed while the lead works (typed ahead) is expanded when
//     it is typed, after its UserPromptExpansion hooks, as one typed while
//     idle; a hook that blocks it refuses the typing with its reason.
package slashcmd

import (
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort/internal/ownread"
)

// SourceProject is the command_source of a project's command.
const SourceProject = "projectSettings"

// maxFile bounds a command file.
const maxFile = 1 << 20

// Command is one custom slash command.
type Command struct {
	// Name is the file's name without .md: "/Name" calls it.
	Name string
	// Description is the frontmatter's description (empty when none).
	Description string
	// Body is the prompt: the file's text after the frontmatter, its
	// leading blank space dropped, its end as written.
	Body string
	// Path is the file it was read from; Source where that is
	// (SourceProject).
	Path, Source string
}

// Tags is how the model reads the command typed with args, before the
// command's text (see the package doc): a line per tag, each ending in a
// newline.
func (c Command) Tags(args string) string {
	t := "<command-message>" + c.Name + "</command-message>\n<command-name>/" + c.Name + "</command-name>\n"
	if args != "" {
		t += "<command-args>" + args + "</command-args>\n"
	}
	return t
}

// Expand is the prompt the command becomes with args.
func (c Command) Expand(args string) string {
	if strings.Contains(c.Body, "$ARGUMENTS") {
		return strings.ReplaceAll(c.Body, "$ARGUMENTS", args)
	}
	if args != "" {
		return c.Body + "\n\nARGUMENTS: " + args
	}
	return c.Body
}

// Load reads the project's commands under dir, sorted by name: a later
// directory (.cohort/commands) wins over an earlier one (.claude/commands)
// for the same name. A file that cannot be read is left out.
func Load(dir string) []Command {
	cmds, _ := load(dir, nil)
	return cmds
}

// load is Load with the files that could not be read (refused), by name,
// each with why; denied is the session's Read deny rules.
func load(dir string, denied ownread.Denied) ([]Command, map[string]error) {
	if dir == "" {
		return nil, nil
	}
	byName, refused := map[string]Command{}, map[string]error{}
	for _, sub := range []string{".claude/commands", ".cohort/commands"} {
		files, _ := filepath.Glob(filepath.Join(dir, sub, "*.md"))
		for _, f := range files {
			name := strings.TrimSuffix(filepath.Base(f), ".md")
			c, err := read(f, denied)
			if err != nil {
				refused[name] = err
				delete(byName, name)
				continue
			}
			byName[name] = c
			delete(refused, name)
		}
	}
	out := make([]Command, 0, len(byName))
	for _, k := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, byName[k])
	}
	return out, refused
}

func read(path string, denied ownread.Denied) (Command, error) {
	data, err := ownread.Text(path, maxFile, denied)
	if err != nil {
		return Command{}, err
	}
	desc, body := frontmatter(string(data))
	return Command{Name: strings.TrimSuffix(filepath.Base(path), ".md"), Description: desc,
		Body: strings.TrimLeft(body, " \t\r\n"), Path: path, Source: SourceProject}, nil
}

// Split reads a prompt as "/name args": the name (without the slash) and
// the arguments, trimmed. ok is false when the prompt does not start with
// "/" followed by a name.
func Split(prompt string) (name, args string, ok bool) {
	rest, ok := strings.CutPrefix(strings.TrimLeft(prompt, " \t"), "/")
	if !ok {
		return "", "", false
	}
	name, args, _ = strings.Cut(rest, " ")
	if i := strings.IndexAny(name, "\n\t"); i >= 0 {
		name, args = name[:i], rest[i+1:]
	}
	if name == "" || strings.Contains(name, "/") {
		return "", "", false
	}
	return name, strings.TrimSpace(args), true
}

// Find is the custom command prompt names among dir's, with its
// arguments; ok is false when prompt names none. denied is the session's
// Read deny rules (nil: none). A command whose file was found but not
// read (a link into /proc or to a denied file, a FIFO, a file over 1 MiB)
// is an error saying which file and why, so the prompt is not sent as if
// no such command existed.
func Find(dir, prompt string, denied ownread.Denied) (c Command, args string, ok bool, err error) {
	name, args, ok := Split(prompt)
	if !ok {
		return Command{}, "", false, nil
	}
	cmds, refused := load(dir, denied)
	for _, c := range cmds {
		if c.Name == name {
			return c, args, true, nil
		}
	}
	if err := refused[name]; err != nil {
		var r *ownread.Refused
		if !errors.As(err, &r) {
			err = fmt.Errorf("%w; make it a readable regular file", err)
		}
		return Command{}, "", false, fmt.Errorf("the command /%s was not run: %w", name, err)
	}
	return Command{}, "", false, nil
}

// frontmatter splits a command file into its description and body.
func frontmatter(s string) (desc, body string) {
	body = s
	if rest, ok := strings.CutPrefix(s, "---\n"); ok {
		if head, b, ok := strings.Cut(rest, "\n---"); ok {
			body = strings.TrimPrefix(b, "\n")
			for _, l := range strings.Split(head, "\n") {
				if v, ok := strings.CutPrefix(l, "description:"); ok {
					desc = strings.Trim(strings.TrimSpace(v), `"'`)
				}
			}
		}
	}
	return desc, body
}
