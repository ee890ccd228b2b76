package openai

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

// capture records a request body and answers with an empty stream.
type capture struct {
	mu   sync.Mutex
	body []byte
}

func (c *capture) RoundTrip(r *http.Request) (*http.Response, error) {
	b, _ := io.ReadAll(r.Body)
	r.Body.Close()
	c.mu.Lock()
	c.body = b
	c.mu.Unlock()
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(strings.NewReader("data: [DONE]\n\n")), Request: r}, nil
}

// TestGoldenMatchesSDKParams: the golden chat body is, as JSON, what the
// official SDK sends for the same request built from its own parameter
// types: every member where the SDK puts it, with the SDK's names and
// nesting.
func TestGoldenMatchesSDKParams(t *testing.T) {
	schema := func(s string) shared.FunctionParameters {
		var m shared.FunctionParameters
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	req := goldenRequest()
	call := func(id, name, args string) sdk.ChatCompletionMessageToolCallUnionParam {
		return sdk.ChatCompletionMessageToolCallUnionParam{OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
			ID: id, Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: name, Arguments: args}}}
	}
	assistant := sdk.ChatCompletionAssistantMessageParam{
		Content:   sdk.ChatCompletionAssistantMessageParamContentUnion{OfString: sdk.String("Reading it.")},
		ToolCalls: []sdk.ChatCompletionMessageToolCallUnionParam{call("call_1", "Read", `{"file_path": "main.go"}`), call("call_2", "Bash", "ls -l, not JSON")},
	}
	params := sdk.ChatCompletionNewParams{
		Model: req.Model,
		Messages: []sdk.ChatCompletionMessageParamUnion{
			sdk.SystemMessage("You are a careful engineer.\n\nProject notes: <none> & nothing else."),
			sdk.UserMessage("Read main.go"),
			{OfAssistant: &assistant},
			sdk.ToolMessage("package main", "call_1"),
			sdk.ToolMessage("<tool_use_error>not valid JSON</tool_use_error>", "call_2"),
			sdk.UserMessage([]sdk.ChatCompletionContentPartUnionParam{
				sdk.TextContentPart("(The image returned by tool call call_1:)"),
				sdk.ImageContentPart(sdk.ChatCompletionContentPartImageImageURLParam{URL: "data:image/png;base64,iVBORw0KGgo="}),
				sdk.TextContentPart("Now explain it."),
			}),
		},
		Tools: []sdk.ChatCompletionToolUnionParam{
			sdk.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "Read", Description: sdk.String("Reads a file."),
				Parameters: schema(string(req.Tools[0].InputSchema))}),
			sdk.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{Name: "Bash", Description: sdk.String("Runs a command."),
				Parameters: schema(string(req.Tools[1].InputSchema))}),
		},
		MaxTokens:       sdk.Int(4096),
		Temperature:     sdk.Float(0.2),
		Stop:            sdk.ChatCompletionNewParamsStopUnion{OfStringArray: []string{"\n\nUser:"}},
		ReasoningEffort: shared.ReasoningEffortHigh,
		StreamOptions:   sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)},
	}
	tr := &capture{}
	client := sdk.NewClient(option.WithBaseURL("http://oracle.invalid/v1/"), option.WithAPIKey("k"), option.WithMaxRetries(0),
		option.WithHTTPClient(&http.Client{Transport: tr}))
	stream := client.Chat.Completions.NewStreaming(t.Context(), params)
	for stream.Next() {
	}
	stream.Close()
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile(filepath.Join("testdata", "chat_request.golden"))
	if err != nil {
		t.Fatal(err)
	}
	var want, got any
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if err := json.Unmarshal(tr.body, &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(golden, &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("golden body differs from the SDK's (-sdk +golden):\n%s", diff)
	}
}
