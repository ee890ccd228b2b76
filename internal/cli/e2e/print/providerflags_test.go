package print

import (
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestProviderFromFlagsAndSettings: the lead's provider, base URL, model
// and key come from --provider/--base-url/--model, from a provider/model id,
// or from the settings, and the requests go out accordingly.
func TestProviderFromFlagsAndSettings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     []string
		settings string
		vars     map[string]string
		path     string
		model    string
		auth     string
	}{
		{"flags, a local server without a key", []string{"--provider", "openai", "--base-url", "{URL}/v1", "--model", "qwen3-coder"}, "", nil,
			"/v1/chat/completions", "qwen3-coder", ""},
		{"provider/model and the environment", []string{"--model", "openai/qwen3-coder"}, "", map[string]string{"OPENAI_BASE_URL": "{URL}/v1", "OPENAI_API_KEY": "sk-env"},
			"/v1/chat/completions", "qwen3-coder", "Bearer sk-env"},
		{"settings", nil, `{"provider": "openai-responses", "model": "gpt-test", "providers": {"openai-responses": {"baseURL": "{URL}/v1", "apiKeyEnv": "MY_KEY"}}}`,
			map[string]string{"MY_KEY": "sk-mine"}, "/v1/responses", "gpt-test", "Bearer sk-mine"},
		{"the flag beats the settings", []string{"--provider", "openai", "--base-url", "{URL}/v1"}, `{"provider": "openai-responses", "model": "m1"}`, nil,
			"/v1/chat/completions", "m1", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := clitest.New(t, func(*fakeapi.Request) fakeapi.Reply { return fakeapi.TextReply("hello") })
			url := h.Srv.URL
			for k, v := range tt.vars {
				h.Vars[k] = strings.ReplaceAll(v, "{URL}", url)
			}
			if tt.settings != "" {
				h.WriteUserSettings(strings.ReplaceAll(tt.settings, "{URL}", url))
			}
			var args []string
			for _, a := range tt.args {
				args = append(args, strings.ReplaceAll(a, "{URL}", url))
			}
			out, errOut, code := h.Run(append([]string{"-p", "hi"}, args...)...)
			if code != 0 || strings.TrimSpace(out) != "hello" {
				t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
			}
			rec := h.Srv.Requests()[0]
			got := []string{rec.Path, rec.Request.Model, rec.Request.Header.Get("Authorization")}
			if want := []string{tt.path, tt.model, tt.auth}; strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("request %v, want %v", got, want)
			}
		})
	}
}

// TestProviderUsageErrors: what is wrong and what to do, with exit code 2.
func TestProviderUsageErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     []string
		settings string
		want     string
	}{
		{"unknown provider", []string{"--provider", "bedrock"}, "", `--provider "bedrock" is not one of anthropic, openai, openai-responses`},
		{"unknown provider in the settings", nil, `{"provider": "gemini"}`, `settings "provider" "gemini" is not one of`},
		{"no model", []string{"--provider", "openai", "--base-url", "http://127.0.0.1:1/v1"}, "", "--provider openai needs --model NAME"},
		{"bad base URL", []string{"--provider", "openai", "--base-url", "localhost:8000", "--model", "m"}, "", `base URL "localhost:8000" (OPENAI_BASE_URL, --base-url) is not an http(s) URL`},
		{"no key for OpenAI", []string{"--provider", "openai", "--model", "gpt-4.1"}, "", "set OPENAI_API_KEY, or OPENAI_BASE_URL (--base-url) for a local server"},
		{"providers not an object", nil, `{"providers": ["openai"]}`, `settings.json:1: "providers" must map provider names`},
		{"unknown provider in providers", nil, `{"providers": {"vllm": {}}}`, `"providers" names "vllm"`},
		{"bad prices", nil, `{"prices": {"m": 3}}`, `"prices" must map model ids`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := clitest.New(t, nil)
			if tt.settings != "" {
				h.WriteUserSettings(tt.settings)
			}
			_, errOut, code := h.Run(append([]string{"-p", "hi"}, tt.args...)...)
			if code != 2 || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, errOut, tt.want)
			}
		})
	}
}

// TestAgentsOnALocalLead: with the lead on a local model, the built-in
// Explore agent (whose definition says haiku) runs on the lead's model, and
// a definition that names an unconfigured provider fails only that agent,
// with the reason, as a tool error the lead reads.
func TestAgentsOnALocalLead(t *testing.T) {
	t.Parallel()
	c := clitest.NewConv()
	c.On("lead-job", clitest.Calls(
		clitest.Use("Agent", map[string]any{"description": "explore", "subagent_type": "Explore", "prompt": "explore-job: look"}),
		clitest.Use("Agent", map[string]any{"description": "claude", "subagent_type": "on-claude", "prompt": "claude-job: think"}),
	), func(r *fakeapi.Request) fakeapi.Reply {
		return fakeapi.TextReply(strings.Join(clitest.ToolResults(r), " || "))
	})
	c.On("explore-job", clitest.Text("explored"))
	h := clitest.New(t, c.Policy)
	h.Vars["ANTHROPIC_API_KEY"] = ""
	h.Write(".cohort/agents/on-claude.md", "---\nname: on-claude\ndescription: Runs on Claude.\nmodel: anthropic/claude-opus-5-5\n---\nThink.\n")
	out, errOut, code := h.Run("-p", "lead-job: delegate", "--provider", "openai", "--base-url", h.Srv.URL+"/v1", "--model", "qwen3-coder")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "explored") || !strings.Contains(out, "ERROR:") || !strings.Contains(out, "provider anthropic: no API key: set ANTHROPIC_API_KEY") {
		t.Errorf("the lead saw %q", out)
	}
	for _, rec := range h.Srv.Requests() {
		if strings.Contains(rec.Request.FirstUserText(), "explore-job") && rec.Request.Model != "qwen3-coder" {
			t.Errorf("Explore asked for model %q, not the lead's", rec.Request.Model)
		}
		if rec.Path != "/v1/chat/completions" {
			t.Errorf("a request went to %s", rec.Path)
		}
	}
}

// TestBadInputFromALocalModel: a proxy's HTML error page is retried;
// arguments that are not JSON are refused with an error result the model
// reads, and the model's next call runs; a stream error after a tool call
// began is retried, and the tool still runs once.
func TestBadInputFromALocalModel(t *testing.T) {
	t.Parallel()
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		switch r.Turn() {
		case 0:
			if r.Attempt == 1 {
				return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.HTMLError}}
			}
			return fakeapi.Reply{Content: []fakeapi.Block{fakeapi.BadArguments("Bash", `{"command": "echo once >> log.txt"`)}}
		case 1:
			reply := fakeapi.Reply{Content: []fakeapi.Block{fakeapi.TextBlock("Fixed the call."), clitest.Use("Bash", map[string]any{"command": "echo once >> log.txt"})}}
			if r.Attempt == 1 {
				reply.Fault = &fakeapi.Fault{Kind: fakeapi.StreamError, Message: "CUDA out of memory"}
			}
			return reply
		}
		return fakeapi.TextReply("done: " + strings.Join(clitest.ToolResults(r), ""))
	}
	h := clitest.New(t, policy)
	out, errOut, code := h.Run("-p", "log once", "--provider", "openai", "--base-url", h.Srv.URL+"/v1", "--model", "qwen3-coder",
		"--allowedTools", "Bash", "--verbose")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if got := h.Read("log.txt"); got != "once\n" {
		t.Errorf("log.txt = %q: the command must run exactly once", got)
	}
	var badResult string
	for _, rec := range h.Srv.Requests() {
		if rec.Request != nil && rec.Request.Turn() == 1 {
			badResult = strings.Join(clitest.ToolResults(rec.Request), "")
		}
	}
	if !strings.HasPrefix(badResult, "ERROR:") || !strings.Contains(badResult, "not a JSON object") {
		t.Errorf("the model was told %q about its bad arguments", badResult)
	}
	for _, want := range []string{"(502 Bad Gateway); retry 2/", "CUDA out of memory"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr does not report the retried %q:\n%s", want, errOut)
		}
	}
	if n := len(h.Srv.Requests()); n != 5 {
		t.Errorf("%d requests, want 5 (two attempts each for the first two turns, one for the last)", n)
	}
}
