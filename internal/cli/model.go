package cli

import (
	"fmt"
	"strings"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/claude"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// scriptedPrefix selects the built-in scripted model.
const scriptedPrefix = "scripted:"

// openedModel is a model client and the name the lead uses.
type openedModel struct {
	model llm.Model
	name  string
	close func()
	// url and key reach the same model from a teammate process.
	url, key string
	// fake is the scripted model's server (nil for real models): what it
	// recorded is what each agent sent (cohort demo's test reads it).
	fake *fakeapi.Server
}

// openModel opens the provider for spec: "scripted:FILE" runs the fake
// Messages API in-process; anything else is a Claude model id or alias.
func openModel(spec string, getenv func(string) string) (*openedModel, error) {
	if file, ok := strings.CutPrefix(spec, scriptedPrefix); ok {
		script, err := fakeapi.LoadScript(file)
		if err != nil {
			return nil, fmt.Errorf("--model %s: %w", spec, err)
		}
		return openScripted(script)
	}
	cfg := claude.ConfigFromEnv(getenv)
	if cfg.APIKey == "" && cfg.AuthToken == "" {
		return nil, fmt.Errorf("no API key: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN) to use %q, or run without a key on the scripted model: cohort demo, or --model scripted:FILE", spec)
	}
	m, err := claude.New(cfg)
	if err != nil {
		return nil, err
	}
	return &openedModel{model: m, name: spec, close: func() {}, url: cfg.BaseURL, key: cfg.APIKey}, nil
}

// openScripted serves script from an in-process fake on loopback and points
// the real client at it.
func openScripted(script *fakeapi.Script) (*openedModel, error) {
	srv, err := fakeapi.Start(fakeapi.Config{Script: script, RecordLimit: 100})
	if err != nil {
		return nil, fmt.Errorf("start the scripted model: %w", err)
	}
	m, err := claude.New(claude.Config{APIKey: "scripted", BaseURL: srv.URL})
	if err != nil {
		srv.Close()
		return nil, err
	}
	return &openedModel{model: m, name: "scripted", close: srv.Close, url: srv.URL, key: "scripted", fake: srv}, nil
}
