// Package ask holds the AskUserQuestion tool: the lead asks the user one
// to four multiple-choice questions and waits for the answers, which the
// embedding program collects (cohort.Config.AskUser).
//
// Decisions the spec leaves open:
//
//   - The tool exists only in sessions that can answer it (an AskUser
//     callback); print mode has no one to ask, so its model never sees it.
//     Subagents never get it (agent pools leave it out, as Claude Code
//     does).
//   - The input is Claude Code's: questions[{question, header, options[{label,
//     description}], multiSelect}]. An answer is the chosen label (labels
//     joined with ", " for multiSelect) or free text ("Other").
//   - A question left unanswered is reported to the model as such; an
//     asker that fails or declines makes the call an error the model reads.
package ask

import (
	"context"
	"fmt"
	"strings"

	"github.com/cohort-dev/cohort/tool"
)

// Name is the tool's name.
const Name = "AskUserQuestion"

// Option is one choice of a question.
type Option struct {
	Label       string `json:"label"`
	Description string `json:"description"`
}

// Question is one question with its choices.
type Question struct {
	Question    string   `json:"question"`
	Header      string   `json:"header"`
	Options     []Option `json:"options"`
	MultiSelect bool     `json:"multiSelect"`
}

// Input is the tool's input.
type Input struct {
	Questions []Question `json:"questions"`
}

// Asker shows the questions to the user and returns the answers keyed by
// question text. agentID is the asking agent.
type Asker func(ctx context.Context, agentID string, questions []Question) (map[string]string, error)

// Response is the structured result (tool_use_result): the questions and
// the answers.
type Response struct {
	Questions []Question        `json:"questions"`
	Answers   map[string]string `json:"answers"`
}

const description = `Asks the user multiple-choice questions and waits for the answers. Use it when you need the user's decision to go on: a choice between approaches, an ambiguous requirement, a preference the code cannot tell you.

- Ask one to four questions at a time, each with two to four options. Every option has a short label (one to five words) and a description of what choosing it means.
- header is a very short tag for the question (at most 12 characters), such as "Auth method".
- Set multiSelect when several options can be chosen together.
- The user may answer with text of their own instead of an option; read the answer as given.
- Do not ask what you can find out yourself by reading the code or running a command.`

var schema = tool.Object(
	tool.Required("questions", tool.Array("The questions to ask (1 to 4).", tool.Object(
		tool.Required("question", tool.String("The full question, ending with a question mark.").WithMinLength(1)),
		tool.Required("header", tool.String("A very short tag for the question (at most 12 characters).").WithMinLength(1)),
		tool.Required("options", tool.Array("The choices (2 to 4).", tool.Object(
			tool.Required("label", tool.String("The choice as the user sees it (1 to 5 words).").WithMinLength(1)),
			tool.Required("description", tool.String("What choosing it means.")),
		))),
		tool.Required("multiSelect", tool.Boolean("Whether several options may be chosen together.")),
	))),
)

// New returns the AskUserQuestion tool, answered by ask.
func New(ask Asker) tool.Tool {
	return tool.New(tool.Spec[Input]{
		Name: Name, Description: description, Input: schema,
		Traits: tool.Traits{ReadOnly: true, ConcurrencySafe: false},
		Run: func(ctx context.Context, env *tool.Env, in Input) (tool.Result, error) {
			if msg := check(in); msg != "" {
				return tool.Errorf("%s", msg), nil
			}
			answers, err := ask(ctx, env.Caller.ID, in.Questions)
			if err != nil {
				if ctx.Err() != nil {
					return tool.Result{}, ctx.Err()
				}
				return tool.Errorf("The user did not answer: %v", err), nil
			}
			return tool.Result{Content: tool.Text(render(in.Questions, answers)).Content,
				Response: Response{Questions: in.Questions, Answers: answers}}, nil
		},
	})
}

func check(in Input) string {
	if len(in.Questions) == 0 || len(in.Questions) > 4 {
		return fmt.Sprintf("Ask between 1 and 4 questions (this call has %d).", len(in.Questions))
	}
	seen := map[string]bool{}
	for i, q := range in.Questions {
		if len(q.Options) < 2 || len(q.Options) > 4 {
			return fmt.Sprintf("Question %d has %d options; give 2 to 4.", i+1, len(q.Options))
		}
		if seen[q.Question] {
			return fmt.Sprintf("Question %d repeats an earlier question; ask each once.", i+1)
		}
		seen[q.Question] = true
	}
	return ""
}

// render is what the model reads: each question with its answer.
func render(qs []Question, answers map[string]string) string {
	var b strings.Builder
	b.WriteString("The user answered:\n")
	for _, q := range qs {
		a, ok := answers[q.Question]
		if !ok || strings.TrimSpace(a) == "" {
			a = "(no answer)"
		}
		fmt.Fprintf(&b, "- %s → %s\n", q.Question, a)
	}
	b.WriteString("Go on with these answers in mind.")
	return b.String()
}
