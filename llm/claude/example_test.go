package claude_test

import (
	"context"
	"fmt"
	"os"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/claude"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// A Model streams one request; here against the fake API, in production
// against api.anthropic.com with claude.ConfigFromEnv(os.Getenv).
func Example() {
	srv := fakeapi.New(fakeapi.Config{Policy: func(*fakeapi.Request) fakeapi.Reply {
		return fakeapi.TextReply("Hello from the model.")
	}})
	defer srv.Close()

	cfg := claude.ConfigFromEnv(os.Getenv)
	cfg.APIKey, cfg.AuthToken, cfg.BaseURL = "test-key", "", srv.URL
	model, err := claude.New(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	req := &llm.Request{
		Model:     "claude-sonnet-4-5",
		MaxTokens: 1024,
		System:    []llm.Block{{Type: llm.BlockText, Text: "Be brief.", Cache: true}},
		Messages:  []llm.Message{llm.UserText("Say hello.")},
	}
	for ev, err := range model.Stream(context.Background(), req) {
		switch {
		case err != nil:
			fmt.Println("error:", err)
		case ev.Type == llm.EventRetry:
			fmt.Println("retrying after", ev.Retry.Err) // drop partial output
		case ev.Type == llm.EventDone:
			fmt.Println(ev.Response.Message().TextContent(), ev.Response.StopReason)
		}
	}
	// Output: Hello from the model. end_turn
}
