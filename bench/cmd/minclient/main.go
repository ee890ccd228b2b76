// Command minclient is the least a program can do to run the parallel
// benchmark's work: the same model requests and Bash calls as cohort — a
// lead that starts subagents, subagents that run bash until they report —
// and nothing else: no engine, prompts, permission checks, transcripts,
// tasks or hooks; plain net/http, encoding/json and a line-based SSE reader.
// benchall runs it beside cohort against the same fake (-floor), so the
// fan-out's wall time can be read against what this machine allows.
//
// It takes cohort's arguments (-p PROMPT and --cwd DIR; the rest are
// ignored) and environment (ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY), and
// prints a result line shaped like cohort's --output-format json, so the
// benchmark harness checks its work the same way.
//
// Like cohort, it starts each subagent as soon as the lead's Agent call is
// complete in the stream (its content_block_stop), not when the lead's
// message ends: at a model's pace the lead writes its briefs for seconds,
// and a floor that waited for the end would be slower than cohort.
// --start-at-end starts them when the message ends instead (how it ran
// before), so both can be measured.
//
// Built with -tags sdks it also links the official Anthropic and OpenAI
// SDKs, unused (sdks.go): the floor's peak RSS with what linking them
// alone costs. With -tags anthropicsdk it links the Anthropic SDK only, and
// with -tags cohortimports every package cmd/cohort links
// (cohortimports.go), initialised and never called.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"
)

const model = "claude-sonnet-5-5"

func main() {
	prompt, cwd, atEnd := "", ".", false
	args := os.Args[1:]
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "--start-at-end":
			atEnd = true
		case "-p", "--print":
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				prompt = args[i+1]
				i++
			}
		case "--cwd":
			if i+1 < len(args) {
				cwd = args[i+1]
				i++
			}
		default:
			if !strings.HasPrefix(args[i], "-") && prompt == "" {
				prompt = args[i]
			}
		}
	}
	c := &client{base: strings.TrimRight(os.Getenv("ANTHROPIC_BASE_URL"), "/"), key: os.Getenv("ANTHROPIC_API_KEY"), cwd: cwd,
		http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}, atEnd: atEnd}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	text, turns, err := c.lead(ctx, prompt)
	out := map[string]any{"type": "result", "subtype": "success", "is_error": err != nil, "num_turns": turns, "result": text}
	if err != nil {
		out["subtype"], out["result"] = "error_during_execution", err.Error()
	}
	line, _ := json.Marshal(out)
	os.Stdout.Write(append(line, '\n'))
	if err != nil {
		os.Exit(1)
	}
}

type client struct {
	base, key, cwd string
	http           *http.Client
	// atEnd starts the lead's Agent calls when its message ends, not as
	// each call's block completes.
	atEnd bool
}

type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   string          `json:"content,omitempty"`
}

type message struct {
	Role    string   `json:"role"`
	Content []*block `json:"content"`
}

var tools = []map[string]any{
	{"name": "Agent", "description": "Start a subagent.", "input_schema": map[string]any{"type": "object",
		"properties": map[string]any{"description": map[string]any{"type": "string"}, "prompt": map[string]any{"type": "string"},
			"subagent_type": map[string]any{"type": "string"}}, "required": []string{"description", "prompt"}}},
	{"name": "Bash", "description": "Run a command.", "input_schema": map[string]any{"type": "object",
		"properties": map[string]any{"command": map[string]any{"type": "string"}, "description": map[string]any{"type": "string"}},
		"required":   []string{"command"}}},
}

// lead runs the lead: one request, its Agent calls as parallel subagents
// (each started as its block completes), then requests until it ends its
// turn.
func (c *client) lead(ctx context.Context, prompt string) (string, int, error) {
	msgs := []message{{Role: "user", Content: []*block{{Type: "text", Text: prompt}}}}
	for turn := 1; ; turn++ {
		var pending []chan *block // each call's result, in call order
		onCall := func(b *block) { pending = append(pending, c.call(ctx, b)) }
		if c.atEnd {
			onCall = nil
		}
		resp, err := c.send(ctx, msgs, onCall)
		if err != nil {
			return "", turn, err
		}
		msgs = append(msgs, message{Role: "assistant", Content: resp})
		if c.atEnd {
			for _, b := range resp {
				if b.Type == "tool_use" {
					pending = append(pending, c.call(ctx, b))
				}
			}
		}
		if len(pending) == 0 {
			return joinText(resp), turn, nil
		}
		results := make([]*block, len(pending))
		for i, ch := range pending {
			results[i] = <-ch
		}
		msgs = append(msgs, message{Role: "user", Content: results})
	}
}

// call runs one of the lead's calls on its own goroutine; its result
// arrives on the returned channel.
func (c *client) call(ctx context.Context, call *block) chan *block {
	out := make(chan *block, 1)
	go func() {
		var in struct{ Prompt string }
		text := "unknown tool"
		if call.Name == "Agent" && json.Unmarshal(call.Input, &in) == nil {
			var err error
			if text, err = c.sub(ctx, in.Prompt); err != nil {
				text = "the agent failed: " + err.Error()
			}
		}
		out <- &block{Type: "tool_result", ToolUseID: call.ID, Content: text}
	}()
	return out
}

// sub runs one subagent until it answers without a tool call.
func (c *client) sub(ctx context.Context, prompt string) (string, error) {
	msgs := []message{{Role: "user", Content: []*block{{Type: "text", Text: prompt}}}}
	for {
		resp, err := c.send(ctx, msgs, nil)
		if err != nil {
			return "", err
		}
		msgs = append(msgs, message{Role: "assistant", Content: resp})
		var results []*block
		for _, b := range resp {
			if b.Type != "tool_use" {
				continue
			}
			var in struct{ Command string }
			out := "unknown tool"
			if b.Name == "Bash" && json.Unmarshal(b.Input, &in) == nil {
				cmd := exec.CommandContext(ctx, "bash", "-c", in.Command)
				cmd.Dir = c.cwd
				data, _ := cmd.CombinedOutput()
				out = string(data)
			}
			results = append(results, &block{Type: "tool_result", ToolUseID: b.ID, Content: out})
		}
		if len(results) == 0 {
			return joinText(resp), nil
		}
		msgs = append(msgs, message{Role: "user", Content: results})
	}
}

// send makes one streaming request and returns the response's blocks;
// onCall, when set, gets each tool_use block as soon as it is complete.
func (c *client) send(ctx context.Context, msgs []message, onCall func(*block)) ([]*block, error) {
	body, err := json.Marshal(map[string]any{"model": model, "max_tokens": 32000, "stream": true,
		"system": "You are a benchmark client.", "tools": tools, "messages": msgs})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/v1/messages", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("content-type", "application/json")
	req.Header.Set("x-api-key", c.key)
	req.Header.Set("anthropic-version", "2023-06-01")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("status %d: %s", resp.StatusCode, data)
	}
	return readStream(resp.Body, onCall)
}

// readStream accumulates the content blocks of an SSE response, handing
// each complete tool_use block to onCall when it is set.
func readStream(r io.Reader, onCall func(*block)) ([]*block, error) {
	var blocks []*block
	var partial []strings.Builder // tool inputs as they stream, by block index
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type         string `json:"type"`
			Index        int    `json:"index"`
			ContentBlock block  `json:"content_block"`
			Delta        struct {
				Type        string `json:"type"`
				Text        string `json:"text"`
				PartialJSON string `json:"partial_json"`
			} `json:"delta"`
			Error *struct{ Message string } `json:"error"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			return nil, err
		}
		switch ev.Type {
		case "content_block_start":
			b := ev.ContentBlock
			b.Input = nil
			blocks = append(blocks, &b)
			partial = append(partial, strings.Builder{})
		case "content_block_delta":
			if ev.Index < len(blocks) {
				blocks[ev.Index].Text += ev.Delta.Text
				partial[ev.Index].WriteString(ev.Delta.PartialJSON)
			}
		case "content_block_stop":
			if ev.Index < len(blocks) && blocks[ev.Index].Type == "tool_use" {
				b := blocks[ev.Index]
				b.Input = json.RawMessage(partial[ev.Index].String())
				if len(b.Input) == 0 {
					b.Input = json.RawMessage("{}")
				}
				if onCall != nil {
					onCall(b)
				}
			}
		case "message_stop":
			return blocks, nil
		case "error":
			return nil, errors.New(ev.Error.Message)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, errors.New("the stream ended before message_stop")
}

func joinText(bs []*block) string {
	var parts []string
	for _, b := range bs {
		if b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}
