package assemble

import (
	"context"
	"fmt"
	"strings"

	"github.com/cohort-dev/cohort/hook"
	"github.com/cohort-dev/cohort/slashcmd"
)

// expand is the prompt the lead reads for text: a prompt that names one
// of the project's custom commands ("/review the parser") becomes the
// command typed, tagged as Claude Code tags it (slashcmd's Tags), then the
// command's text, once the UserPromptExpansion hooks let it (a block
// refuses the prompt); what they add for the model comes back as context.
// Any other text is the prompt as it is, less its trailing newlines. The
// command's two blocks keep their bytes, trailing newlines included, as
// Claude Code 2.1.332 sends them (slashcmd). A prompt typed ahead into a
// running turn (Send, typed) is expanded the same way.
func (s *Session) expand(ctx context.Context, scope *hook.Scope, text string, typed bool) ([]string, []string, error) {
	c, args, ok, err := slashcmd.Find(s.Process.Cwd, text, s.deniedRead)
	if err != nil {
		return nil, nil, err
	}
	if !ok {
		return []string{strings.TrimRight(text, "\n")}, nil, nil
	}
	as := "/" + c.Name
	if args != "" {
		as += " " + args
	}
	out := scope.UserPromptExpansion(ctx, hook.Expansion{Name: c.Name, Args: args, Source: c.Source, Prompt: as, Typed: typed})
	s.hookMessages(out)
	if out.Block || out.Stop {
		return nil, nil, fmt.Errorf("the command /%s was blocked by a UserPromptExpansion hook: %s", c.Name, firstNonEmpty(out.Reason, out.StopReason))
	}
	return []string{c.Tags(args), c.Expand(args)}, out.Context, nil
}
