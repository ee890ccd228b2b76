package cli

import (
	"os"
	"path/filepath"
	"strings"
)

// testProviderEnv names the provider every CLI test's harness runs on
// (empty: Anthropic's API). TestScenariosOnEveryProvider sets it to run the
// multi-agent scenarios again on each OpenAI provider.
const testProviderEnv = "COHORT_TEST_PROVIDER"

// providerPaths is the fake's endpoint for each provider.
var providerPaths = map[string]string{
	providerAnthropic: "/v1/messages",
	providerOpenAI:    "/v1/chat/completions",
	providerResponses: "/v1/responses",
}

// useTestProvider puts the harness on the provider testProviderEnv names.
func (h *harness) useTestProvider() {
	if p := os.Getenv(testProviderEnv); p != "" {
		h.useProvider(p)
	}
}

// useProvider runs every agent of the harness's sessions on provider, with
// the fake as its server: the user settings name the provider and the
// OPENAI_* variables point at the fake. When the test ends, every request
// the fake saw must have come in that provider's protocol.
func (h *harness) useProvider(provider string) {
	h.t.Helper()
	path, ok := providerPaths[provider]
	if !ok {
		h.t.Fatalf("%s=%q is not one of %v", testProviderEnv, provider, providerNames)
	}
	home := h.vars["COHORT_HOME"]
	if err := os.MkdirAll(home, 0o755); err != nil {
		h.t.Fatal(err)
	}
	settings := `{"provider": "` + provider + `", "model": "qwen3-coder"}`
	if err := os.WriteFile(filepath.Join(home, "settings.json"), []byte(settings), 0o644); err != nil {
		h.t.Fatal(err)
	}
	h.vars["OPENAI_BASE_URL"] = h.srv.URL + "/v1"
	h.vars["OPENAI_API_KEY"] = "test-key"
	h.t.Cleanup(func() {
		for _, rec := range h.srv.Requests() {
			if rec.Path != path {
				h.t.Errorf("request %d went to %s, not %s: the test did not run on %s", rec.Index, rec.Path, path, provider)
				return
			}
		}
	})
}

var _ = strings.Contains
