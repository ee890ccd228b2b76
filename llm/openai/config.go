package openai

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/internal/jsonenc"
	"github.com/cohort-dev/cohort/llm/internal/retry"
)

// API names the OpenAI protocol a Model speaks.
type API string

// The protocols.
const (
	// Chat is POST /chat/completions, which every OpenAI-compatible server
	// offers (vLLM, llama.cpp, Ollama, LM Studio, gateways).
	Chat API = "chat"
	// Responses is POST /responses: OpenAI's own endpoint and the servers
	// that copy it.
	Responses API = "responses"
)

// Defaults for the zero fields of Config.
const (
	DefaultMaxAttempts = retry.DefaultMaxAttempts
	DefaultIdleTimeout = retry.DefaultIdleTimeout
	// DefaultBaseURL is OpenAI's API.
	DefaultBaseURL = "https://api.openai.com/v1"
)

// How a request's MaxTokens is sent (Config.MaxTokensParam).
const (
	MaxCompletionTokens = "max_completion_tokens"
	MaxTokens           = "max_tokens"
	// OmitMaxTokens sends no bound: the server generates until the model
	// stops or its context is full.
	OmitMaxTokens = "none"
)

// Config configures a Model. The zero value of every field is a sensible
// default, except that OpenAI's own API needs APIKey.
//
// The retry policy is llm/claude's: 408, 409, 429, 5xx, connection errors,
// streams cut before they end, stalled streams and server errors inside a
// stream are retried, up to MaxAttempts attempts in all; 400, 401, 403, 404,
// 413, 422, a 429 for an exhausted quota (insufficient_quota) and anything
// marked x-should-retry: false are not, nor is 529 for a request marked
// Background. The wait is the server's retry-after-ms or retry-after
// (capped at 60 s), else 0.5 s·2^(n-1) capped at 32 s plus up to 25 %
// jitter.
type Config struct {
	// API is the protocol: Chat (the default) or Responses.
	API API
	// APIKey is sent as a bearer token. It may be empty for a local server
	// (BaseURL set) that needs none.
	APIKey string
	// BaseURL replaces DefaultBaseURL: the server's URL up to and including
	// /v1 ("http://localhost:8000/v1" for vLLM, "http://localhost:11434/v1"
	// for Ollama).
	BaseURL string
	// HTTPClient sends the requests; nil uses a client on a transport shared
	// by every Model of the process that keeps up to 256 idle connections
	// per host. Leave its Timeout at zero: IdleTimeout
	// catches a stalled stream.
	HTTPClient *http.Client
	// MaxTokensParam names the request member that carries
	// llm.Request.MaxTokens: MaxCompletionTokens, MaxTokens or
	// OmitMaxTokens. The default is MaxCompletionTokens for OpenAI's own
	// API and OmitMaxTokens for every other server: local servers bound the
	// answer by the context left, and a bound larger than that (the engine
	// asks for 32,000 tokens) is an error there; an answer sent no bound is
	// cut off by the client at twice MaxTokens (see the package doc). The
	// Responses API always uses max_output_tokens unless this is
	// OmitMaxTokens.
	MaxTokensParam string

	// MaxAttempts bounds the attempts per request, the first included
	// (default 10).
	MaxAttempts int
	// IdleTimeout abandons an attempt (as a retryable error) when no event
	// of the response has arrived for this long (default 90 s; negative
	// turns the watchdog off). SSE comments do not count: a server that
	// only says it is alive is stalled.
	IdleTimeout time.Duration

	// Sleep waits between attempts and returns early with ctx's error.
	// Sleep, Rand, Now and Logf are called from every concurrent Stream and
	// must be safe for concurrent use.
	Sleep func(ctx context.Context, d time.Duration) error
	// Rand returns a number in [0, 1) for the jitter; nil uses
	// math/rand/v2.
	Rand func() float64
	// Now reads an HTTP-date retry-after; nil is time.Now.
	Now func() time.Time
	// Logf, when set, receives one line per retry.
	Logf func(format string, args ...any)
	// MaxRetryTime caps the time one request spends on retries, counted
	// from its first attempt (0: no cap but MaxAttempts).
	// COHORT_API_RETRY_MAX sets it through ConfigFromEnv.
	MaxRetryTime time.Duration

	// envErr is a variable ConfigFromEnv could not read; New reports it.
	envErr error
}

// ConfigFromEnv reads OPENAI_API_KEY, OPENAI_BASE_URL and
// COHORT_API_RETRY_MAX through getenv (os.Getenv in production). A
// malformed COHORT_API_RETRY_MAX makes New fail, naming it.
func ConfigFromEnv(getenv func(string) string) Config {
	cfg := Config{APIKey: getenv("OPENAI_API_KEY"), BaseURL: getenv("OPENAI_BASE_URL")}
	cfg.MaxRetryTime, cfg.envErr = retry.ParseMaxTime(getenv("COHORT_API_RETRY_MAX"))
	return cfg
}

// ErrNoCredentials reports a Config for OpenAI's own API without a key.
var ErrNoCredentials = errors.New("openai: no OpenAI credentials: set OPENAI_API_KEY, or OPENAI_BASE_URL (--base-url) for a local server that needs no key")

// Model streams responses from an OpenAI-compatible server. It is safe for
// concurrent use; each Stream call is independent.
type Model struct {
	client sdk.Client
	cfg    Config
	// stable caches the encoded tool schemas and long texts.
	stable jsonenc.Cache
	// lastSize is the size of the last request body, to allocate the next
	// one at once.
	lastSize atomic.Int64
	// reached is set once the server has answered at all; until then a
	// refused connection at a base URL of the user's fails fast.
	reached  atomic.Bool
	official bool
}

var _ llm.Model = (*Model)(nil)

// New checks cfg, fills in its defaults and returns a Model.
func New(cfg Config) (*Model, error) {
	switch cfg.API {
	case "":
		cfg.API = Chat
	case Chat, Responses:
	default:
		return nil, fmt.Errorf("openai: API %q is neither %q nor %q", cfg.API, Chat, Responses)
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	u, perr := url.Parse(cfg.BaseURL)
	if perr != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("openai: base URL %q (OPENAI_BASE_URL, --base-url) is not an http(s) URL; set it like http://localhost:8000/v1", cfg.BaseURL)
	}
	if cfg.envErr != nil {
		return nil, fmt.Errorf("openai: %w", cfg.envErr)
	}
	official := u.Host == "api.openai.com"
	if cfg.APIKey == "" && official {
		return nil, ErrNoCredentials
	}
	switch cfg.MaxTokensParam {
	case "":
		cfg.MaxTokensParam = OmitMaxTokens
		if official {
			cfg.MaxTokensParam = MaxCompletionTokens
		}
	case MaxCompletionTokens, MaxTokens, OmitMaxTokens:
	default:
		return nil, fmt.Errorf("openai: MaxTokensParam %q is not one of %s, %s, %s", cfg.MaxTokensParam, MaxCompletionTokens, MaxTokens, OmitMaxTokens)
	}
	set, err := retry.Settings{MaxAttempts: cfg.MaxAttempts, IdleTimeout: cfg.IdleTimeout, Sleep: cfg.Sleep,
		Rand: cfg.Rand, Now: cfg.Now, HTTPClient: cfg.HTTPClient, MaxRetryTime: cfg.MaxRetryTime}.Fill("openai")
	if err != nil {
		return nil, err
	}
	cfg.MaxAttempts, cfg.IdleTimeout, cfg.Sleep, cfg.Rand, cfg.Now, cfg.HTTPClient = set.MaxAttempts, set.IdleTimeout, set.Sleep, set.Rand, set.Now, set.HTTPClient
	// The client is built from our options only: sdk.NewClient would
	// also read OPENAI_* from the process environment, and credentials are
	// resolved by the caller (ConfigFromEnv takes an injected getenv).
	opts := []option.RequestOption{
		option.WithHTTPClient(cfg.HTTPClient),
		option.WithBaseURL(strings.TrimSuffix(cfg.BaseURL, "/") + "/"),
		option.WithMaxRetries(0),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	return &Model{client: sdk.Client{Options: opts}, cfg: cfg, official: official}, nil
}

// API returns the protocol the Model speaks.
func (m *Model) API() API { return m.cfg.API }

func (m *Model) policy() retry.Policy {
	return retry.Policy{Name: "openai", MaxAttempts: m.cfg.MaxAttempts, Sleep: m.cfg.Sleep, Rand: m.cfg.Rand, Logf: m.cfg.Logf,
		URL: m.cfg.BaseURL, FailFast: !m.official && !m.reached.Load(), MaxTime: m.cfg.MaxRetryTime, Now: m.cfg.Now}
}

// encode checks req and serializes its body.
func (m *Model) encode(req *llm.Request) ([]byte, error) {
	last := int(m.lastSize.Load())
	var body []byte
	var err error
	if m.cfg.API == Responses {
		body, err = encodeResponses(req, &m.stable, m.cfg.MaxTokensParam, last+last/8)
	} else {
		body, err = encodeChat(req, &m.stable, m.cfg.MaxTokensParam, last+last/8)
	}
	if err == nil {
		m.lastSize.Store(int64(len(body)))
	}
	return body, err
}
