package cohort_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/tool"
)

// fakeModel serves answer on a loopback port in the Anthropic API's
// protocol, so the examples run without a key: the real client talks to
// it. A real program leaves BaseURL and APIKey empty and sets
// ANTHROPIC_API_KEY instead.
func fakeModel(answer fakeapi.Policy) (*fakeapi.Server, cohort.Config) {
	dir, err := os.MkdirTemp("", "cohort-example-")
	if err != nil {
		log.Fatal(err)
	}
	srv := fakeapi.New(fakeapi.Config{Policy: answer})
	return srv, cohort.Config{
		Dir:     dir,
		Home:    filepath.Join(dir, ".cohort"),
		BaseURL: srv.URL,
		APIKey:  "fake",
		Stderr:  os.Stderr,
	}
}

// A lead fans out to three subagents and sums up what they report.
func Example() {
	srv, cfg := fakeModel(func(r *fakeapi.Request) fakeapi.Reply {
		first := r.FirstUserText()
		switch {
		case strings.HasPrefix(first, "Tally "): // a subagent
			return fakeapi.TextReply(strings.ToUpper(strings.TrimPrefix(first, "Tally ")) + " done")
		case r.Turn() == 0: // the lead, first turn: three Agent calls at once
			var calls []fakeapi.Block
			for _, part := range []string{"api", "cli", "docs"} {
				calls = append(calls, fakeapi.ToolUseBlock("", "Agent", map[string]any{
					"description": "count " + part, "prompt": "Tally " + part, "subagent_type": "general-purpose"}))
			}
			return fakeapi.Reply{Content: calls}
		}
		return fakeapi.TextReply("All three parts are counted.")
	})
	defer srv.Close()
	defer os.RemoveAll(cfg.Dir)

	ctx := context.Background()
	s, err := cohort.New(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	var reports []string
	for ev, err := range s.Run(ctx, "Count the lines of each part of the project.") {
		if err != nil {
			log.Fatal(err)
		}
		switch {
		case ev.Type == cohort.EventAssistant && ev.ParentToolUseID != "":
			// A subagent's message: ParentToolUseID is the Agent call.
			reports = append(reports, ev.Message.Content[0].Text)
		case ev.Type == cohort.EventResult:
			slices.Sort(reports)
			fmt.Println(strings.Join(reports, ", "))
			fmt.Println(ev.Result, "turns:", ev.NumTurns)
		}
	}
	// Output:
	// API done, CLI done, DOCS done
	// All three parts are counted. turns: 2
}

// A lead forms a team of two in-process teammates, who each report back
// with a message; Run returns once the team is quiet, and Close shuts the
// teammates down.
func Example_team() {
	srv, cfg := fakeModel(func(r *fakeapi.Request) fakeapi.Reply {
		first := r.FirstUserText()
		for _, name := range []string{"alice", "bob"} {
			if strings.Contains(first, "You are "+name) || strings.HasPrefix(first, "Review as "+name) {
				if r.Turn() == 0 {
					return fakeapi.ToolReply("", "SendMessage", map[string]any{
						"to": "team-lead", "summary": "review done", "message": name + " found nothing wrong"})
				}
				return fakeapi.TextReply("reported")
			}
		}
		switch r.Turn() {
		case 0:
			return fakeapi.ToolReply("", "TeamCreate", map[string]any{"team_name": "reviewers"})
		case 1:
			var calls []fakeapi.Block
			for _, name := range []string{"alice", "bob"} {
				calls = append(calls, fakeapi.ToolUseBlock("", "Agent", map[string]any{
					"name": name, "team_name": "reviewers", "description": "review",
					"prompt": "Review as " + name, "subagent_type": "general-purpose"}))
			}
			return fakeapi.Reply{Content: calls}
		}
		return fakeapi.TextReply("waiting for the team")
	})
	defer srv.Close()
	defer os.RemoveAll(cfg.Dir)
	cfg.TeammateMode = "in-process"

	ctx := context.Background()
	s, err := cohort.New(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	var heard []string
	for ev, err := range s.Run(ctx, "Have two reviewers look at the change.") {
		if err != nil {
			log.Fatal(err)
		}
		if ev.Type == cohort.EventSystem && ev.Subtype == cohort.SubtypeTeam && ev.Team.Kind == cohort.TeamMessage && ev.Team.To == "team-lead" {
			heard = append(heard, ev.Team.From+": "+ev.Team.Text)
		}
	}
	slices.Sort(heard)
	fmt.Println(strings.Join(heard, "\n"))
	var mates []string
	for _, a := range s.Agents() {
		if a.Kind == "teammate" {
			mates = append(mates, a.Name+" is a teammate in team "+a.Team)
		}
	}
	slices.Sort(mates)
	fmt.Println(strings.Join(mates, "\n"))
	// Output:
	// alice: alice found nothing wrong
	// bob: bob found nothing wrong
	// alice is a teammate in team reviewers
	// bob is a teammate in team reviewers
}

// A tool of the program's own, and a CanUseTool callback that allows it
// for staging and refuses it for production.
func Example_customTool() {
	type deployInput struct {
		Env string `json:"env"`
	}
	deploy := tool.New(tool.Spec[deployInput]{
		Name:        "Deploy",
		Description: "Deploys the current build to an environment.",
		Input:       tool.Object(tool.Required("env", tool.Enum("Where to deploy.", "staging", "production"))),
		Run: func(ctx context.Context, env *tool.Env, in deployInput) (tool.Result, error) {
			return tool.Text("deployed to " + in.Env), nil
		},
	})
	srv, cfg := fakeModel(func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			return fakeapi.Reply{Content: []fakeapi.Block{
				fakeapi.ToolUseBlock("", "Deploy", map[string]any{"env": "staging"}),
				fakeapi.ToolUseBlock("", "Deploy", map[string]any{"env": "production"}),
			}}
		}
		return fakeapi.TextReply("Staging is up; production needs a person.")
	})
	defer srv.Close()
	defer os.RemoveAll(cfg.Dir)
	cfg.Tools = []tool.Tool{deploy}
	cfg.CanUseTool = func(ctx context.Context, req cohort.PermissionRequest) (cohort.Decision, error) {
		var in deployInput
		if err := json.Unmarshal(req.Input, &in); err != nil {
			return cohort.Decision{}, err
		}
		if in.Env == "production" {
			return cohort.Decision{Message: "production deploys need a person"}, nil
		}
		return cohort.Decision{Allow: true}, nil
	}

	ctx := context.Background()
	s, err := cohort.New(ctx, cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	for ev, err := range s.Run(ctx, "Deploy to staging and production.") {
		if err != nil {
			log.Fatal(err)
		}
		switch ev.Type {
		case cohort.EventUser:
			for _, b := range ev.Message.Content {
				if b.Type == "tool_result" {
					fmt.Printf("error=%v %s\n", b.IsError, b.Content[0].Text)
				}
			}
		case cohort.EventResult:
			fmt.Println(ev.Result)
		}
	}
	// Output:
	// error=false deployed to staging
	// error=true Permission denied: production deploys need a person
	// Staging is up; production needs a person.
}
