package assemble

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/claude"
	"github.com/cohort-dev/cohort/llm/openai"
)

// Providers. The lead's provider comes from the plan, else the settings'
// "provider", else the Anthropic API. Every provider that is configured is
// also a route: an agent whose model is "openai/qwen3" runs on the OpenAI
// chat provider with the model "qwen3", whatever the lead runs on. A route
// that is not configured fails, with the reason, when an agent first uses
// it; only the lead's own provider must be configured to start.
//
// Settings (every key optional):
//
//	{
//	  "provider": "openai",
//	  "model": "qwen3-coder",
//	  "providers": {
//	    "openai": {"baseURL": "http://localhost:8000/v1", "apiKeyEnv": "VLLM_API_KEY", "maxTokensParam": "max_tokens"},
//	    "openai-responses": {"baseURL": "https://api.openai.com/v1"}
//	  },
//	  "modelAliases": {"haiku": "openai/qwen3-4b"},
//	  "prices": {"openai/gpt-4.1": {"input": 2, "output": 8, "cache_read": 0.5}}
//	}
//
// baseURL and the key default to OPENAI_BASE_URL and OPENAI_API_KEY for
// both OpenAI providers (apiKeyEnv names another variable); the plan's base URL
// overrides the lead's provider's. On a provider other than Anthropic the
// aliases opus, sonnet and haiku (which built-in agents such as Explore
// use) name the lead's model unless "modelAliases" says otherwise: a
// session on a local model does not send Claude ids to its server.
// "prices" extends the default price table (US dollars per million
// tokens); a model it does not list costs nothing, as local models do.
const (
	providerAnthropic = "anthropic"
	providerOpenAI    = "openai"
	providerResponses = "openai-responses"
)

var providerNames = []string{providerAnthropic, providerOpenAI, providerResponses}

// providerSettings is one entry of the settings' "providers".
type providerSettings struct {
	BaseURL        string `json:"baseURL"`
	APIKeyEnv      string `json:"apiKeyEnv"`
	MaxTokensParam string `json:"maxTokensParam"`
}

// leadProvider resolves the lead's provider.
func (b *Plan) leadProvider() (string, error) {
	p := b.Model.Provider
	from := "Config.Provider"
	if p == "" {
		p, from = b.settingString("provider"), `settings "provider"`
	}
	if p == "" {
		return providerAnthropic, nil
	}
	if !slices.Contains(providerNames, p) {
		return "", fmt.Errorf("%s %q is not one of %s", from, p, strings.Join(providerNames, ", "))
	}
	return p, nil
}

// providers reads the settings' "providers", later files winning per
// provider.
func (b *Plan) providers() (map[string]providerSettings, error) {
	out := map[string]providerSettings{}
	for _, sec := range b.Settings.Loaded.Section("providers") {
		var m map[string]providerSettings
		if err := json.Unmarshal(sec.Value, &m); err != nil {
			return nil, fmt.Errorf("%s:%d: \"providers\" must map provider names (%s) to {baseURL, apiKeyEnv, maxTokensParam}: %v",
				sec.Source.Path, sec.Line, strings.Join(providerNames, ", "), err)
		}
		for name, ps := range m {
			if !slices.Contains(providerNames, name) {
				return nil, fmt.Errorf("%s:%d: \"providers\" names %q; the providers are %s", sec.Source.Path, sec.Line, name, strings.Join(providerNames, ", "))
			}
			out[name] = ps
		}
	}
	return out, nil
}

// prices is the default price table extended by the settings' "prices".
func (b *Plan) prices() (llm.PriceTable, error) {
	out := maps.Clone(llm.DefaultPrices)
	for _, sec := range b.Settings.Loaded.Section("prices") {
		var m map[string]llm.Price
		if err := json.Unmarshal(sec.Value, &m); err != nil {
			return nil, fmt.Errorf("%s:%d: \"prices\" must map model ids to {input, output, cache_write, cache_read} in dollars per million tokens: %v", sec.Source.Path, sec.Line, err)
		}
		maps.Copy(out, m)
	}
	return out, nil
}

// aliases is the alias table for a session whose lead runs leadModel on
// provider: the defaults on Anthropic's API, the lead's model elsewhere,
// and the settings' "modelAliases" over either.
func (b *Plan) aliases(provider, leadModel string) (map[string]string, error) {
	out := agentdef.DefaultAliases()
	if provider != providerAnthropic {
		for k := range out {
			out[k] = leadModel
		}
	}
	for _, sec := range b.Settings.Loaded.Section("modelAliases") {
		var m map[string]string
		if err := json.Unmarshal(sec.Value, &m); err != nil {
			return nil, fmt.Errorf("%s:%d: \"modelAliases\" must map aliases to model ids: %v", sec.Source.Path, sec.Line, err)
		}
		for k, v := range m {
			out[strings.ToLower(k)] = v
		}
	}
	return out, nil
}

// routes opens a model for every provider. The one that cannot be opened
// is a model that fails with the reason; baseURL, when set, is the lead's
// provider's (the plan's).
func (b *Plan) routes(lead, baseURL string) (map[string]llm.Model, error) {
	conf, err := b.providers()
	if err != nil {
		return nil, err
	}
	getenv := b.Process.Getenv
	routes := map[string]llm.Model{}
	for _, name := range providerNames {
		ps := conf[name]
		if name == lead && baseURL != "" {
			ps.BaseURL = baseURL
		}
		m, err := openProvider(name, ps, b.keyFor(name), b.Model.Betas, getenv)
		if err != nil {
			m = llm.Failing{Err: fmt.Errorf("provider %s: %w", name, err)}
		}
		routes[name] = m
	}
	return routes, nil
}

// keyFor is the plan's API key when it is provider's: Config.APIKey is
// the key of Config.Provider (Anthropic's when empty; both OpenAI
// providers read the same key).
func (b *Plan) keyFor(provider string) string {
	switch b.Model.Provider {
	case providerOpenAI, providerResponses:
		if provider != providerAnthropic {
			return b.Model.APIKey
		}
	default:
		if provider == providerAnthropic {
			return b.Model.APIKey
		}
	}
	return ""
}

// openProvider opens one provider from its settings, the plan's key (over
// the environment's; a settings apiKeyEnv wins over both), the beta
// headers (Anthropic's only) and the environment.
func openProvider(name string, ps providerSettings, key string, betas []string, getenv func(string) string) (llm.Model, error) {
	if name == providerAnthropic {
		cfg := claude.ConfigFromEnv(getenv)
		cfg.Betas = betas
		if key != "" {
			cfg.APIKey = key
		}
		if ps.BaseURL != "" {
			cfg.BaseURL = ps.BaseURL
		}
		if ps.APIKeyEnv != "" {
			cfg.APIKey = getenv(ps.APIKeyEnv)
		}
		if cfg.APIKey == "" && cfg.AuthToken == "" {
			return nil, errors.New("no API key: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN), or run without a key on the scripted model: cohort demo, or Config.Model scripted:FILE")
		}
		return claude.New(cfg)
	}
	cfg := openai.ConfigFromEnv(getenv)
	if key != "" {
		cfg.APIKey = key
	}
	if ps.BaseURL != "" {
		cfg.BaseURL = ps.BaseURL
	}
	if ps.APIKeyEnv != "" {
		cfg.APIKey = getenv(ps.APIKeyEnv)
	}
	cfg.MaxTokensParam = ps.MaxTokensParam
	if name == providerResponses {
		cfg.API = openai.Responses
	}
	return openai.New(cfg)
}

// scriptedRoutes points every provider at the scripted model's server, so a
// scripted session exercises each protocol an agent asks for.
func scriptedRoutes(url string) (map[string]llm.Model, error) {
	routes := map[string]llm.Model{}
	for _, name := range providerNames {
		var m llm.Model
		var err error
		switch name {
		case providerAnthropic:
			m, err = claude.New(claude.Config{APIKey: "scripted", BaseURL: url})
		case providerOpenAI:
			m, err = openai.New(openai.Config{APIKey: "scripted", BaseURL: url + "/v1"})
		default:
			m, err = openai.New(openai.Config{APIKey: "scripted", BaseURL: url + "/v1", API: openai.Responses})
		}
		if err != nil {
			return nil, err
		}
		routes[name] = m
	}
	return routes, nil
}

// keySource names where the lead's credential comes from, for the init
// line's apiKeySource.
func (s *Session) keySource() string {
	om, getenv := s.model, s.Process.Getenv
	key := s.keyFor(om.provider)
	switch {
	case om.name == "scripted":
		return "none"
	case om.provider == providerAnthropic && (key != "" || getenv("ANTHROPIC_API_KEY") != ""):
		return "ANTHROPIC_API_KEY"
	case om.provider == providerAnthropic && getenv("ANTHROPIC_AUTH_TOKEN") != "":
		return "ANTHROPIC_AUTH_TOKEN"
	case om.provider != providerAnthropic && (key != "" || getenv("OPENAI_API_KEY") != ""):
		return "OPENAI_API_KEY"
	}
	return "none"
}
