package fakeapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
)

// openaiClient returns the official OpenAI SDK client pointed at srv,
// without retries.
func openaiClient(t *testing.T, srv *Server) openai.Client {
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	return openai.NewClient(option.WithBaseURL(srv.URL+"/v1/"), option.WithAPIKey("test"), option.WithMaxRetries(0),
		option.WithHTTPClient(&http.Client{Transport: tr}))
}

func chatParams(prompt string) openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model: "qwen3-coder",
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage(longSystem),
			openai.UserMessage(prompt),
		},
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: "Bash", Description: openai.String("Runs a command."),
			Parameters: shared.FunctionParameters{"type": "object", "properties": map[string]any{"command": map[string]any{"type": "string"}}},
		})},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
}

// TestOpenAISDKChatStream: the SDK's own accumulator rebuilds every scripted
// block from the fake's chunks, over many seeds, and the usage arrives in
// the final chunk.
func TestOpenAISDKChatStream(t *testing.T) {
	reply := Reply{Content: []Block{
		ThinkingBlock("Think é 😀 first.", ""),
		TextBlock("Running it — \"now\" <b>&</b>."),
		ToolUseBlock("", "Bash", json.RawMessage(trickyInput)),
		ToolUseBlock("", "Bash", map[string]string{"command": "ls"}),
	}}
	for seed := range int64(12) {
		srv := start(t, Config{Seed: seed, Policy: func(*Request) Reply { return reply }})
		client := openaiClient(t, srv)
		stream := client.Chat.Completions.NewStreaming(t.Context(), chatParams("run it"))
		var acc openai.ChatCompletionAccumulator
		var reasoning strings.Builder
		for stream.Next() {
			chunk := stream.Current()
			acc.AddChunk(chunk)
			if len(chunk.Choices) > 0 {
				if f, ok := chunk.Choices[0].Delta.JSON.ExtraFields["reasoning_content"]; ok {
					var s string
					json.Unmarshal([]byte(f.Raw()), &s)
					reasoning.WriteString(s)
				}
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		stream.Close()
		if len(acc.Choices) != 1 {
			t.Fatalf("seed %d: %d choices", seed, len(acc.Choices))
		}
		msg := acc.Choices[0].Message
		var calls []string
		for _, c := range msg.ToolCalls {
			calls = append(calls, c.Function.Name+" "+c.Function.Arguments+" "+c.ID[:5])
		}
		got := []any{reasoning.String(), msg.Content, calls, acc.Choices[0].FinishReason, acc.Usage.PromptTokens > 0, acc.Usage.CompletionTokens}
		want := []any{"Think é 😀 first.", "Running it — \"now\" <b>&</b>.",
			[]string{"Bash " + trickyInput + " call_", `Bash {"command":"ls"} call_`}, "tool_calls", true, int64(srv.Requests()[0].Usage.OutputTokens)}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("seed %d (-want +got):\n%s", seed, diff)
		}
	}
}

// TestOpenAISDKChatJSON: without "stream" the fake answers a whole
// chat.completion the SDK decodes.
func TestOpenAISDKChatJSON(t *testing.T) {
	srv := start(t, Config{Policy: func(*Request) Reply {
		return Reply{Content: []Block{TextBlock("Listing."), ToolUseBlock("call_1", "Bash", map[string]string{"command": "ls"})}}
	}})
	client := openaiClient(t, srv)
	p := chatParams("list")
	p.StreamOptions = openai.ChatCompletionStreamOptionsParam{}
	res, err := client.Chat.Completions.New(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	m := res.Choices[0].Message
	got := []string{m.Content, m.ToolCalls[0].ID, m.ToolCalls[0].Function.Arguments, res.Choices[0].FinishReason, string(res.Object)}
	if diff := cmp.Diff([]string{"Listing.", "call_1", `{"command":"ls"}`, "tool_calls", "chat.completion"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestOpenAISDKChatCache: the second request with the same long prefix
// reports it in prompt_tokens_details.cached_tokens, as automatic prefix
// caching does; no markers are involved.
func TestOpenAISDKChatCache(t *testing.T) {
	srv := start(t, Config{Now: newClock().Now})
	client := openaiClient(t, srv)
	var cached []int64
	for range 2 {
		res, err := client.Chat.Completions.New(t.Context(), chatParams("hi"))
		if err != nil {
			t.Fatal(err)
		}
		cached = append(cached, res.Usage.PromptTokensDetails.CachedTokens)
		if res.Usage.PromptTokens <= res.Usage.PromptTokensDetails.CachedTokens {
			t.Fatalf("usage %+v: prompt_tokens must count the cached part too", res.Usage)
		}
	}
	if cached[0] != 0 || cached[1] < 1024 {
		t.Errorf("cached tokens %v, want 0 then the long system prompt", cached)
	}
}

// TestOpenAISDKErrors: errors come in OpenAI's shape, which the SDK decodes
// into *openai.Error with the status, type and code.
func TestOpenAISDKErrors(t *testing.T) {
	tests := []struct {
		fault  Fault
		status int
		typ    string
		code   string
	}{
		{Fault{Kind: RateLimited, RetryAfter: "2"}, 429, "requests", "rate_limit_exceeded"},
		{Fault{Kind: SpendLimit}, 429, "insufficient_quota", "insufficient_quota"},
		{Fault{Kind: Overloaded}, 503, "server_error", ""},
		{Fault{Kind: BadRequest, Message: "nope"}, 400, "invalid_request_error", ""},
		{Fault{Kind: Unauthorized}, 401, "invalid_request_error", "invalid_api_key"},
	}
	for _, tt := range tests {
		t.Run(string(tt.fault.Kind), func(t *testing.T) {
			f := tt.fault
			srv := start(t, Config{Policy: func(*Request) Reply { return Reply{Fault: &f} }})
			client := openaiClient(t, srv)
			_, err := client.Chat.Completions.New(t.Context(), chatParams("x"))
			var e *openai.Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not an *openai.Error", err)
			}
			if got := []any{e.StatusCode, e.Type, e.Code, e.Message != ""}; !cmp.Equal(got, []any{tt.status, tt.typ, tt.code, true}) {
				t.Errorf("error %v, want %d %s %s", got, tt.status, tt.typ, tt.code)
			}
			if e.Response.Header.Get("x-request-id") == "" {
				t.Error("no x-request-id header")
			}
		})
	}
}

func responsesParams(prompt string) responses.ResponseNewParams {
	return responses.ResponseNewParams{
		Model:        "gpt-test",
		Instructions: openai.String(longSystem),
		Input:        responses.ResponseNewParamsInputUnion{OfString: openai.String(prompt)},
		Tools: []responses.ToolUnionParam{{OfFunction: &responses.FunctionToolParam{
			Name: "Bash", Description: openai.String("Runs a command."), Strict: openai.Bool(false),
			Parameters: map[string]any{"type": "object", "properties": map[string]any{"command": map[string]any{"type": "string"}}},
		}}},
	}
}

// TestOpenAISDKResponsesStream: the SDK decodes every event of the fake's
// Responses stream, the deltas add up to the items of response.completed,
// and sequence numbers count up from 0.
func TestOpenAISDKResponsesStream(t *testing.T) {
	reply := Reply{Content: []Block{
		ThinkingBlock("Plan ü.", "enc-1"),
		TextBlock("Running 😀."),
		ToolUseBlock("", "Bash", json.RawMessage(trickyInput)),
	}}
	for seed := range int64(6) {
		srv := start(t, Config{Seed: seed, Policy: func(*Request) Reply { return reply }})
		client := openaiClient(t, srv)
		stream := client.Responses.NewStreaming(t.Context(), responsesParams("run it"))
		var text, args, summary strings.Builder
		var final responses.Response
		seq := int64(0)
		for stream.Next() {
			ev := stream.Current()
			if ev.SequenceNumber != seq {
				t.Fatalf("seed %d: sequence number %d, want %d", seed, ev.SequenceNumber, seq)
			}
			seq++
			switch ev.Type {
			case "response.output_text.delta":
				text.WriteString(ev.Delta)
			case "response.function_call_arguments.delta":
				args.WriteString(ev.Delta)
			case "response.reasoning_summary_text.delta":
				summary.WriteString(ev.Delta)
			case "response.completed":
				final = ev.Response
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		stream.Close()
		if len(final.Output) != 3 {
			t.Fatalf("seed %d: %d output items", seed, len(final.Output))
		}
		call := final.Output[2].AsFunctionCall()
		rs := final.Output[0].AsReasoning()
		got := []any{summary.String(), text.String(), args.String(), final.Output[1].AsMessage().Content[0].Text,
			call.Name, call.Arguments, strings.HasPrefix(call.CallID, "call_"), rs.EncryptedContent, rs.Summary[0].Text,
			string(final.Status), final.Usage.OutputTokens > 0}
		want := []any{"Plan ü.", "Running 😀.", trickyInput, "Running 😀.", "Bash", trickyInput, true, "enc-1", "Plan ü.", "completed", true}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("seed %d (-want +got):\n%s", seed, diff)
		}
	}
}

// TestOpenAISDKResponsesRoundTrip sends a function call and its output
// back; the fake sees them as a tool_use and its tool_result, and reads the
// shared prefix from its cache.
func TestOpenAISDKResponsesRoundTrip(t *testing.T) {
	srv := start(t, Config{Now: newClock().Now, Policy: func(r *Request) Reply {
		if r.Turn() == 0 {
			return ToolReply("", "Bash", map[string]string{"command": "ls"})
		}
		return TextReply("saw: " + r.LastToolResultText())
	}})
	client := openaiClient(t, srv)
	first, err := client.Responses.New(t.Context(), responsesParams("list"))
	if err != nil {
		t.Fatal(err)
	}
	call := first.Output[0].AsFunctionCall()
	output := responses.ResponseInputItemParamOfFunctionCallOutput("a.go b.go")
	output.OfFunctionCallOutput.CallID = openai.String(call.CallID)
	p := responsesParams("list")
	p.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
		responses.ResponseInputItemParamOfMessage("list", responses.EasyInputMessageRoleUser),
		responses.ResponseInputItemParamOfFunctionCall(call.Arguments, call.CallID, call.Name),
		output,
	}}
	second, err := client.Responses.New(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	if got := second.OutputText(); got != "saw: a.go b.go" {
		t.Errorf("second answer %q", got)
	}
	if second.Usage.InputTokensDetails.CachedTokens < 1024 {
		t.Errorf("usage %+v: the instructions and tools should be read from the cache", second.Usage)
	}
	msgs := srv.Requests()[1].Request.Messages
	if len(msgs) != 3 || msgs[1].Content[0].Type != "tool_use" || msgs[2].Content[0].ToolUseID != call.CallID {
		t.Errorf("the fake read %+v", msgs)
	}
}
