package fakeapi_test

import (
	"context"
	"fmt"
	"net/http"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// A policy answers each request; the official SDK talks to the fake over
// HTTP as it would to the real API.
func ExampleNew() {
	srv := fakeapi.New(fakeapi.Config{Policy: func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			return fakeapi.ToolReply("", "Read", map[string]string{"file_path": "/etc/hostname"})
		}
		return fakeapi.TextReply("The file says: " + r.LastToolResultText())
	}})
	defer srv.Close()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := anthropic.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test"),
		option.WithMaxRetries(0), option.WithHTTPClient(&http.Client{Transport: tr}))

	stream := client.Messages.NewStreaming(context.Background(), anthropic.MessageNewParams{
		Model:     "claude-sonnet-4-5",
		MaxTokens: 1024,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("What is the host name?"))},
	})
	var msg anthropic.Message
	for stream.Next() {
		msg.Accumulate(stream.Current())
	}
	if err := stream.Err(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(msg.StopReason, msg.Content[0].Name, string(msg.Content[0].Input))
	// Output: tool_use Read {"file_path":"/etc/hostname"}
}

// A script answers by conversation content; ParseScript reports problems
// with the file and line.
func ExampleParseScript() {
	_, err := fakeapi.ParseScript("turns.yaml", []byte(`
- match: {first_user: "hello"}
  reply: "Hi there."
- match: {frist_user: "bye"}
  reply: "Goodbye."
`))
	fmt.Println(err)
	// Output: turns.yaml:4: rule 2 match: unknown condition "frist_user" (known: system, system_re, first_user, first_user_re, last_user, last_user_re, tool_result, tool_result_re, turn, attempt, model, tool, api)
}
