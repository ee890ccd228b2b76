package fakeapi

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/google/go-cmp/cmp"
)

// sdkClient returns the official SDK client pointed at srv, without retries.
func sdkClient(t *testing.T, srv *Server) anthropic.Client {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return anthropic.NewClient(option.WithBaseURL(srv.URL), option.WithAPIKey("test"), option.WithMaxRetries(0),
		option.WithHTTPClient(&http.Client{Transport: tr}), option.WithoutEnvironmentDefaults())
}

func sdkParams(prompt string) anthropic.MessageNewParams {
	return anthropic.MessageNewParams{
		Model:     "claude-test",
		MaxTokens: 4096,
		System:    []anthropic.TextBlockParam{{Text: longSystem, CacheControl: anthropic.NewCacheControlEphemeralParam()}},
		Tools: []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{
			Name: "Bash", Description: anthropic.String("Runs a command."),
			InputSchema:  anthropic.ToolInputSchemaParam{Properties: map[string]any{"command": map[string]any{"type": "string"}}},
			CacheControl: anthropic.NewCacheControlEphemeralParam(),
		}}},
		Thinking: anthropic.ThinkingConfigParamOfEnabled(1024),
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(prompt))},
	}
}

// TestSDKStreamAccumulates proves the stream decodes and accumulates with the
// official SDK exactly as the reply was scripted, over many seeds.
func TestSDKStreamAccumulates(t *testing.T) {
	reply := Reply{Content: []Block{
		ThinkingBlock("Think é 😀 first.", ""),
		TextBlock("Running it — \"now\"."),
		ToolUseBlock("", "Bash", json.RawMessage(trickyInput)),
	}}
	for seed := range int64(20) {
		srv := start(t, Config{Seed: seed, Policy: func(*Request) Reply { return reply }})
		client := sdkClient(t, srv)
		stream := client.Messages.NewStreaming(t.Context(), sdkParams("run it"))
		var msg anthropic.Message
		for stream.Next() {
			if err := msg.Accumulate(stream.Current()); err != nil {
				t.Fatal(err)
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		stream.Close()
		var in, want any
		json.Unmarshal(msg.Content[2].Input, &in)
		json.Unmarshal([]byte(trickyInput), &want)
		got := []any{msg.Content[0].Thinking, msg.Content[0].Signature != "", msg.Content[1].Text, msg.Content[2].Name, string(msg.StopReason), msg.Usage.OutputTokens > 0}
		if diff := cmp.Diff([]any{"Think é 😀 first.", true, "Running it — \"now\".", "Bash", "tool_use", true}, got); diff != "" {
			t.Fatalf("seed %d (-want +got):\n%s", seed, diff)
		}
		if diff := cmp.Diff(want, in); diff != "" {
			t.Fatalf("seed %d: tool input (-want +got):\n%s", seed, diff)
		}
		if string(msg.Content[2].Input) != trickyInput {
			t.Fatalf("seed %d: raw input %s", seed, msg.Content[2].Input)
		}
	}
}

func TestSDKUsageAndCache(t *testing.T) {
	srv := start(t, Config{Now: newClock().Now})
	client := sdkClient(t, srv)
	var usages []anthropic.Usage
	for range 2 {
		stream := client.Messages.NewStreaming(t.Context(), sdkParams("hello"))
		var msg anthropic.Message
		for stream.Next() {
			msg.Accumulate(stream.Current())
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		stream.Close()
		usages = append(usages, msg.Usage)
	}
	if usages[0].CacheCreationInputTokens == 0 || usages[0].CacheReadInputTokens != 0 ||
		usages[1].CacheReadInputTokens != usages[0].CacheCreationInputTokens || usages[1].CacheCreationInputTokens != 0 {
		t.Errorf("usage first %+v second %+v", usages[0], usages[1])
	}
	if usages[1].InputTokens != usages[0].InputTokens || usages[0].InputTokens == 0 {
		t.Errorf("uncached input: %d then %d", usages[0].InputTokens, usages[1].InputTokens)
	}
	// The SDK's request counts its tools, system and messages as sent.
	if got := srv.Requests()[0].Request; len(got.Tools) != 1 || got.SystemText() != longSystem || got.FirstUserText() != "hello" {
		t.Errorf("decoded request %+v", got)
	}
}

func TestSDKErrors(t *testing.T) {
	tests := []struct {
		fault   Fault
		status  int
		errType string
	}{
		{Fault{Kind: RateLimited, RetryAfter: "1"}, 429, "rate_limit_error"},
		{Fault{Kind: Overloaded}, 529, "overloaded_error"},
		{Fault{Kind: StreamError}, 200, "overloaded_error"},
		{Fault{Kind: StreamError, Type: "api_error"}, 200, "api_error"},
	}
	for _, tt := range tests {
		t.Run(string(tt.fault.Kind)+"/"+tt.errType, func(t *testing.T) {
			r := longReply()
			r.Fault = &tt.fault
			srv := start(t, Config{Policy: func(*Request) Reply { return r }})
			client := sdkClient(t, srv)
			stream := client.Messages.NewStreaming(t.Context(), sdkParams("hi"))
			defer stream.Close()
			for stream.Next() {
			}
			var apiErr *anthropic.Error
			if !errors.As(stream.Err(), &apiErr) {
				t.Fatalf("error %v is not an API error", stream.Err())
			}
			if apiErr.StatusCode != tt.status || string(apiErr.Type()) != tt.errType || apiErr.RequestID == "" {
				t.Errorf("status %d type %q request id %q", apiErr.StatusCode, apiErr.Type(), apiErr.RequestID)
			}
		})
	}
	t.Run("cut connection", func(t *testing.T) {
		r := longReply()
		r.Fault = &Fault{Kind: CutConnection}
		srv := start(t, Config{Policy: func(*Request) Reply { return r }})
		client := sdkClient(t, srv)
		stream := client.Messages.NewStreaming(t.Context(), sdkParams("hi"))
		defer stream.Close()
		var msg anthropic.Message
		for stream.Next() {
			msg.Accumulate(stream.Current())
		}
		if !errors.Is(stream.Err(), io.ErrUnexpectedEOF) {
			t.Errorf("error %v, want unexpected EOF", stream.Err())
		}
		if msg.StopReason != "" {
			t.Errorf("cut stream reached stop_reason %q", msg.StopReason)
		}
	})
}

func TestSDKNonStreamingAndCountTokens(t *testing.T) {
	srv := start(t, Config{Policy: func(r *Request) Reply {
		return Reply{Content: []Block{TextBlock("echo: " + r.LastUserText())}}
	}})
	client := sdkClient(t, srv)
	msg, err := client.Messages.New(t.Context(), sdkParams("ping"))
	if err != nil {
		t.Fatal(err)
	}
	if msg.Content[0].Text != "echo: ping" || msg.StopReason != "end_turn" || !strings.HasPrefix(msg.ID, "msg_") {
		t.Errorf("message %+v", msg)
	}
	p := sdkParams("ping")
	count, err := client.Messages.CountTokens(t.Context(), anthropic.MessageCountTokensParams{
		Model: p.Model, Messages: p.Messages, System: anthropic.MessageCountTokensParamsSystemUnion{OfTextBlockArray: p.System},
	})
	if err != nil {
		t.Fatal(err)
	}
	if total := msg.Usage.InputTokens + msg.Usage.CacheCreationInputTokens + msg.Usage.CacheReadInputTokens; count.InputTokens == 0 || count.InputTokens >= total {
		t.Errorf("count_tokens %d; the request with tools had %d", count.InputTokens, total)
	}
}
