package claude

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestConfigFromEnv(t *testing.T) {
	env := map[string]string{
		"ANTHROPIC_API_KEY":    "sk-ant-1",
		"ANTHROPIC_AUTH_TOKEN": "tok-2",
		"ANTHROPIC_BASE_URL":   "https://proxy.example/anthropic",
		"ANTHROPIC_MODEL":      "ignored",
		"COHORT_API_RETRY_MAX": "90",
	}
	got := ConfigFromEnv(func(k string) string { return env[k] })
	want := Config{APIKey: "sk-ant-1", AuthToken: "tok-2", BaseURL: "https://proxy.example/anthropic", MaxRetryTime: 90 * time.Second}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(Config{}, "Sleep", "Rand", "Now", "Logf"), cmpopts.IgnoreUnexported(Config{})); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	env["COHORT_API_RETRY_MAX"] = "soon"
	if _, err := New(ConfigFromEnv(func(k string) string { return env[k] })); err == nil || !strings.Contains(err.Error(), `COHORT_API_RETRY_MAX="soon"`) {
		t.Errorf("New with a malformed COHORT_API_RETRY_MAX: %v", err)
	}
}

func TestNewInvalid(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no credentials", Config{}, "set ANTHROPIC_API_KEY (an API key) or ANTHROPIC_AUTH_TOKEN"},
		{"negative attempts", Config{APIKey: "k", MaxAttempts: -1}, "MaxAttempts is -1"},
		{"relative base URL", Config{APIKey: "k", BaseURL: "api.anthropic.com"}, `base URL "api.anthropic.com" (ANTHROPIC_BASE_URL) is not an http(s) URL`},
		{"ftp base URL", Config{APIKey: "k", BaseURL: "ftp://x"}, "not an http(s) URL"},
		{"unparsable base URL", Config{APIKey: "k", BaseURL: "http://[::1"}, "not an http(s) URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
	if _, err := New(Config{}); !errors.Is(err, ErrNoCredentials) {
		t.Errorf("missing credentials: %v is not ErrNoCredentials", err)
	}
}

// TestCredentialHeaders checks what reaches the server for each credential,
// and that the API key wins (with a log line) when both are set.
func TestCredentialHeaders(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		want    string
		wantLog bool
	}{
		{"api key", Config{APIKey: "sk-1"}, "sk-1", false},
		{"auth token", Config{AuthToken: "tok-1"}, "Bearer tok-1", false},
		{"both", Config{APIKey: "sk-2", AuthToken: "tok-2"}, "sk-2", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newRawServer(t, func(w http.ResponseWriter, r *http.Request, n int) { writeSSE(w, textStream("ok")) })
			var logs []string
			cfg := tt.cfg
			cfg.BaseURL = srv.URL
			cfg.Logf = func(f string, a ...any) { logs = append(logs, f) }
			m, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := run(t, m, simpleRequest("hi")); err != nil {
				t.Fatal(err)
			}
			h := srv.header(0)
			sent := h.Get("Authorization") + " " + h.Get("X-Api-Key")
			if !strings.Contains(sent, tt.want) || (tt.wantLog && strings.Contains(sent, "tok-2")) {
				t.Errorf("credential headers %q, want %q only", sent, tt.want)
			}
			if (len(logs) > 0) != tt.wantLog {
				t.Errorf("logs %q", logs)
			}
		})
	}
}
