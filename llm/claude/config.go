package claude

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/internal/jsonenc"
	"github.com/cohort-dev/cohort/llm/internal/retry"
)

// DefaultBaseURL is the Anthropic API, used when Config.BaseURL is empty.
const (
	DefaultBaseURL = "https://" + DefaultHost
	DefaultHost    = "api.anthropic.com"
)

// Defaults for the zero fields of Config and llm.Request.
const (
	DefaultMaxAttempts = retry.DefaultMaxAttempts
	DefaultIdleTimeout = retry.DefaultIdleTimeout
	DefaultMaxTokens   = 8192
)

// Config configures a Model. The zero value of every field but the
// credentials is a sensible default.
//
// The retry policy: 408, 409, 429, 5xx and 529, connection errors, streams
// cut before message_stop, stalled streams and error events inside a stream
// are retried, up to MaxAttempts attempts in all. 400, 401, 403, 404, 413 and
// a 429 for a reached spend limit are never retried; neither is 529 (or an
// overloaded_error) for a request marked Background. The wait before attempt
// n+1 is the server's retry-after-ms or retry-after header, capped at 60 s;
// without one it is 0.5 s·2^(n-1), capped at 32 s, plus up to 25 % jitter.
type Config struct {
	// APIKey is sent as the API key credential; AuthToken as a bearer token.
	// One of them is required; APIKey wins when both are set.
	APIKey    string
	AuthToken string
	// BaseURL replaces https://api.anthropic.com (a proxy or llm/fakeapi).
	BaseURL string
	// Betas are sent, comma-separated, in every request's anthropic-beta
	// header (Claude Code's --betas).
	Betas []string
	// HTTPClient sends the requests; nil uses a client on a transport shared
	// by every Model of the process: http.DefaultTransport's settings, but
	// keeping up to [MaxIdleConnsPerHost] idle connections to the API
	// instead of 2, so that hundreds of agents streaming at once reuse
	// their connections rather than dial one per request. Leave its Timeout
	// at zero: a long answer streams for minutes, and IdleTimeout already
	// catches a stalled one.
	HTTPClient *http.Client

	// MaxAttempts bounds the attempts per request, the first included
	// (default 10).
	MaxAttempts int
	// IdleTimeout abandons an attempt (as a retryable error) when no byte of
	// the response has arrived for this long (default 90 s; negative turns
	// the watchdog off).
	IdleTimeout time.Duration

	// Sleep waits between attempts; it must return early with ctx's error
	// when ctx is done. Nil uses a timer. Tests inject one that records.
	// Sleep, Rand, Now and Logf are called from every concurrent Stream and
	// must be safe for concurrent use.
	Sleep func(ctx context.Context, d time.Duration) error
	// Rand returns a number in [0, 1) for the backoff jitter; nil uses
	// math/rand/v2.
	Rand func() float64
	// Now is the clock used to read an HTTP-date retry-after; nil is
	// time.Now.
	Now func() time.Time
	// Logf, when set, receives one line per retry.
	Logf func(format string, args ...any)

	// MaxRetryTime caps the time one request spends on retries, counted
	// from its first attempt: a retry whose wait would end past the cap is
	// not made and the request fails (0: no cap but MaxAttempts).
	// COHORT_API_RETRY_MAX sets it through ConfigFromEnv.
	MaxRetryTime time.Duration

	// envErr is a variable ConfigFromEnv could not read; New reports it.
	envErr error
}

// ConfigFromEnv reads ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN,
// ANTHROPIC_BASE_URL and COHORT_API_RETRY_MAX through getenv (os.Getenv in
// production). A malformed COHORT_API_RETRY_MAX makes New fail, naming it.
func ConfigFromEnv(getenv func(string) string) Config {
	cfg := Config{
		APIKey:    getenv("ANTHROPIC_API_KEY"),
		AuthToken: getenv("ANTHROPIC_AUTH_TOKEN"),
		BaseURL:   getenv("ANTHROPIC_BASE_URL"),
	}
	cfg.MaxRetryTime, cfg.envErr = retry.ParseMaxTime(getenv("COHORT_API_RETRY_MAX"))
	return cfg
}

// ErrNoCredentials reports a Config with neither an API key nor a token.
var ErrNoCredentials = errors.New("claude: no Anthropic credentials: set ANTHROPIC_API_KEY (an API key) or ANTHROPIC_AUTH_TOKEN (a bearer token)")

// MaxIdleConnsPerHost is how many idle connections to the API the default
// transport keeps: enough for one per agent at the default agent limits.
const MaxIdleConnsPerHost = retry.MaxIdleConnsPerHost

// Model streams responses from the Messages API. It is safe for concurrent
// use; each Stream call is independent.
type Model struct {
	client anthropic.Client
	cfg    Config
	// stable caches the encoded tool definitions and system prompt.
	stable jsonenc.Cache
	// lastSize is the size of the last request body, to allocate the next
	// one at once.
	lastSize atomic.Int64
	// reached is set once the server at the base URL has answered at all;
	// until then a refused connection at a base URL of the user's fails
	// fast (retry.Policy.FailFast).
	reached atomic.Bool
	// custom: the base URL is not the Anthropic API's.
	custom bool
}

var _ llm.Model = (*Model)(nil)

// New checks cfg, fills in its defaults and returns a Model.
func New(cfg Config) (*Model, error) {
	if cfg.APIKey == "" && cfg.AuthToken == "" {
		return nil, ErrNoCredentials
	}
	if cfg.envErr != nil {
		return nil, fmt.Errorf("claude: %w", cfg.envErr)
	}
	set, err := retry.Settings{MaxAttempts: cfg.MaxAttempts, IdleTimeout: cfg.IdleTimeout, Sleep: cfg.Sleep,
		Rand: cfg.Rand, Now: cfg.Now, HTTPClient: cfg.HTTPClient, MaxRetryTime: cfg.MaxRetryTime}.Fill("claude")
	if err != nil {
		return nil, err
	}
	cfg.MaxAttempts, cfg.IdleTimeout, cfg.Sleep, cfg.Rand, cfg.Now, cfg.HTTPClient = set.MaxAttempts, set.IdleTimeout, set.Sleep, set.Rand, set.Now, set.HTTPClient
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithMaxRetries(0),
		option.WithHTTPClient(cfg.HTTPClient),
	}
	if cfg.APIKey != "" {
		if cfg.AuthToken != "" {
			cfg.logf("claude: both an API key and an auth token are configured; using the API key")
		}
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	} else {
		opts = append(opts, option.WithAuthToken(cfg.AuthToken))
	}
	if cfg.BaseURL != "" {
		u, err := url.Parse(cfg.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("claude: base URL %q (ANTHROPIC_BASE_URL) is not an http(s) URL; set it like https://api.anthropic.com", cfg.BaseURL)
		}
		opts = append(opts, option.WithBaseURL(cfg.BaseURL))
	}
	if len(cfg.Betas) > 0 {
		opts = append(opts, option.WithHeader("anthropic-beta", strings.Join(cfg.Betas, ",")))
	}
	custom := false
	if cfg.BaseURL != "" {
		u, _ := url.Parse(cfg.BaseURL)
		custom = u.Host != DefaultHost
	}
	return &Model{client: anthropic.NewClient(opts...), cfg: cfg, custom: custom}, nil
}

// encode checks req and serializes its body.
func (m *Model) encode(req *llm.Request) ([]byte, error) {
	last := int(m.lastSize.Load())
	body, err := encodeRequest(req, &m.stable, last+last/8)
	if err == nil {
		m.lastSize.Store(int64(len(body)))
	}
	return body, err
}

func (c *Config) logf(format string, args ...any) {
	if c.Logf != nil {
		c.Logf(format, args...)
	}
}
