package clitest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// ProviderEnv names the provider every CLI test's harness runs on
// (empty: Anthropic's API). ScenariosOnEveryProvider sets it to run the
// multi-agent scenarios again on each OpenAI provider.
const ProviderEnv = "COHORT_TEST_PROVIDER"

// providerPaths is the fake's endpoint for each provider.
var providerPaths = map[string]string{
	ProviderAnthropic: "/v1/messages",
	ProviderOpenAI:    "/v1/chat/completions",
	ProviderResponses: "/v1/responses",
}

// useTestProvider puts the harness on the provider ProviderEnv names.
func (h *Harness) useTestProvider() {
	if p := os.Getenv(ProviderEnv); p != "" {
		h.UseProvider(p)
	}
}

// UseProvider runs every agent of the harness's sessions on provider, with
// the fake as its server: the user settings name the provider and the
// OPENAI_* variables point at the fake. When the test ends, every request
// the fake saw must have come in that provider's protocol.
func (h *Harness) UseProvider(provider string) {
	h.T.Helper()
	path, ok := providerPaths[provider]
	if !ok {
		h.T.Fatalf("%s=%q is not one of %v", ProviderEnv, provider, ProviderNames)
	}
	settings := `{"provider": "` + provider + `", "model": "qwen3-coder"}`
	if provider == ProviderAnthropic {
		settings = `{"provider": "anthropic"}`
	}
	h.WriteUserSettings(settings)
	// Also in the Claude-compatible user file, which a test that moves
	// COHORT_HOME (shortHome, for tmux) keeps.
	WriteFile(h.T, filepath.Join(h.Home, ".claude", "settings.json"), settings)
	h.Vars["OPENAI_BASE_URL"] = h.Srv.URL + "/v1"
	h.Vars["OPENAI_API_KEY"] = "test-key"
	h.T.Cleanup(func() {
		for _, rec := range h.Srv.Requests() {
			if rec.Path != path {
				h.T.Errorf("request %d went to %s, not %s: the test did not run on %s", rec.Index, rec.Path, path, provider)
				return
			}
		}
	})
}

// WriteUserSettings writes $COHORT_HOME/settings.json.
func (h *Harness) WriteUserSettings(content string) {
	h.T.Helper()
	WriteFile(h.T, filepath.Join(h.Vars["COHORT_HOME"], "settings.json"), content)
}

// WriteFile writes content to path, making its directory.
func WriteFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ScenariosOnEveryProvider runs the scenarios (the names of tests of the
// calling package) unchanged, in a child test process whose harness puts
// them on the provider, once per OpenAI provider; each must pass there, and
// every request of theirs must have used the provider's protocol
// (UseProvider checks). tmuxScenarios need tmux (CI has it); without it
// they are left out of the run rather than counted as passed.
func ScenariosOnEveryProvider(t *testing.T, scenarios, tmuxScenarios []string) {
	if os.Getenv(ProviderEnv) != "" {
		t.Fatal("this test must not run inside a provider run (its -test.run excludes it)")
	}
	if _, err := exec.LookPath("tmux"); err == nil {
		scenarios = slices.Concat(scenarios, tmuxScenarios)
	} else {
		t.Logf("tmux is not installed: %v are left out", tmuxScenarios)
	}
	// The child's own timeout ends a hung scenario with its goroutines
	// dumped; the stress loops, run in full under StressEnv, get longer.
	timeout := 4 * time.Minute
	if os.Getenv(StressEnv) != "" {
		timeout = 20 * time.Minute
	}
	for _, provider := range []string{ProviderOpenAI, ProviderResponses} {
		t.Run(provider, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), timeout+time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], "-test.run", "^("+strings.Join(scenarios, "|")+")$",
				"-test.count=1", "-test.v", "-test.timeout="+timeout.String())
			cmd.Env = append(os.Environ(), ProviderEnv+"="+provider)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("the scenarios failed on %s: %v\n%s", provider, err, failures(string(out), 6000))
			}
			for _, name := range scenarios {
				if !strings.Contains(string(out), "--- PASS: "+name+" ") {
					t.Errorf("%s did not pass on %s:\n%s", name, provider, tail(string(out), 3000))
				}
			}
		})
	}
}

// failures is what a failed child run said about its failures: each
// "--- FAIL" line with the indented lines that follow it, and the log lines
// of the failed tests (go test -v prints them before the verdict), cut to
// n bytes; the output's tail when nothing matched.
func failures(out string, n int) string {
	lines := strings.Split(out, "\n")
	failed := map[string]bool{}
	for _, line := range lines {
		if name, ok := strings.CutPrefix(strings.TrimSpace(line), "--- FAIL: "); ok {
			failed[strings.Fields(name)[0]] = true
		}
	}
	var b strings.Builder
	for i, line := range lines {
		trimmed := strings.TrimSpace(line)
		// In -v output a test's log lines follow "=== RUN/CONT/NAME name"
		// (they are streamed, so they come before its "--- FAIL").
		var section bool
		for _, p := range []string{"=== RUN", "=== CONT", "=== NAME"} {
			if rest, ok := strings.CutPrefix(trimmed, p); ok && failed[strings.TrimSpace(rest)] {
				section = true
			}
		}
		if !section && !strings.HasPrefix(trimmed, "--- FAIL") && !strings.Contains(trimmed, "panic:") {
			continue
		}
		b.WriteString(line + "\n")
		indent := len(line) - len(strings.TrimLeft(line, " "))
		if section {
			indent = -1
		}
		for _, next := range lines[i+1:] {
			t := strings.TrimSpace(next)
			if strings.HasPrefix(t, "---") || strings.HasPrefix(t, "===") || len(next)-len(strings.TrimLeft(next, " ")) <= indent {
				break
			}
			b.WriteString(next + "\n")
		}
	}
	if b.Len() == 0 {
		return tail(out, n)
	}
	return tail(b.String(), n)
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
