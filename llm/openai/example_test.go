package openai_test

import (
	"context"
	"fmt"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/llm/openai"
)

// A model on a local OpenAI-compatible server (here the fake; for vLLM the
// base URL is http://localhost:8000/v1, for Ollama
// http://localhost:11434/v1). A local server needs no key.
func Example() {
	srv := fakeapi.New(fakeapi.Config{Policy: func(*fakeapi.Request) fakeapi.Reply {
		return fakeapi.TextReply("Hello from a local model.")
	}})
	defer srv.Close()

	m, err := openai.New(openai.Config{BaseURL: srv.URL + "/v1"})
	if err != nil {
		panic(err)
	}
	resp, err := llm.Collect(m.Stream(context.Background(), &llm.Request{
		Model:    "qwen3-coder",
		Messages: []llm.Message{llm.UserText("Say hello.")},
	}))
	if err != nil {
		panic(err)
	}
	fmt.Println(resp.Message().TextContent(), resp.StopReason)
	// Output: Hello from a local model. end_turn
}
