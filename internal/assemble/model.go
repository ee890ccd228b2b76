package assemble

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort/agentdef"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// scriptedPrefix selects the built-in scripted model.
const scriptedPrefix = "scripted:"

// openedModel is a model client and the name the lead uses.
type openedModel struct {
	// model routes each request to its provider (see provider.go).
	model llm.Model
	name  string
	close func()
	// provider is the lead's provider.
	provider string
	// prices and aliases are the session's price table and model aliases.
	prices  llm.PriceTable
	aliases map[string]string
	// url and key reach the same model from a teammate process.
	url, key string
	// fake is the scripted model's server (nil for real models): what it
	// recorded is what each agent sent (cohort demo's test reads it).
	fake *fakeapi.Server
}

// modelSpec is the lead's model: the plan's, else the settings' "model",
// else sonnet on Anthropic's API (other providers need one named).
func (b *Plan) modelSpec() string {
	spec := b.Model.Spec
	if spec == "" {
		spec = b.settingString("model")
	}
	if spec == "" {
		if p, err := b.leadProvider(); err == nil && p == providerAnthropic {
			spec = "sonnet"
		}
	}
	return spec
}

// newModel opens the model for spec: "scripted:FILE" runs the fake API
// in-process, serving every provider's protocol; anything else is a model
// id (or alias) on the lead's provider, or a "provider/model" id. Every
// configured provider is also a route for agents that name it.
func (b *Plan) newModel(spec string) (*openedModel, error) {
	provider, err := b.leadProvider()
	if err != nil {
		return nil, err
	}
	if p, _, ok := strings.Cut(spec, "/"); ok && b.Model.Provider == "" && isProvider(p) {
		provider = p // a model openai/qwen3 names the provider too
	}
	prices, err := b.prices()
	if err != nil {
		return nil, err
	}
	om := &openedModel{name: spec, provider: provider, prices: prices, close: func() {}}
	var routes map[string]llm.Model
	if file, ok := strings.CutPrefix(spec, scriptedPrefix); ok {
		script, err := fakeapi.LoadScript(file)
		if err != nil {
			return nil, fmt.Errorf("Config.Model %s: %w", spec, err)
		}
		if routes, err = om.startScripted(script); err != nil {
			return nil, err
		}
	} else {
		if spec == "" {
			return nil, fmt.Errorf("Config.Provider %s needs Config.Model NAME: the id of a model the server serves (see its /v1/models), or \"model\" in the settings", provider)
		}
		if routes, err = b.routes(provider, b.Model.BaseURL); err != nil {
			return nil, err
		}
		if f, ok := routes[provider].(llm.Failing); ok {
			return nil, fmt.Errorf("%w (to use %q)", f.Err, spec)
		}
	}
	om.model = &llm.Router{Default: routes[provider], Routes: routes}
	if om.aliases, err = b.aliases(provider, om.name); err != nil {
		om.close()
		return nil, err
	}
	if fb := b.Model.Fallback; fb != "" {
		from, to := agentdef.ResolveAlias(om.name, om.aliases), agentdef.ResolveAlias(fb, om.aliases)
		if from == to {
			om.close()
			return nil, fmt.Errorf("Config.FallbackModel %s is the model itself (%s); name another model", fb, to)
		}
		stderr := b.Process.Stderr
		om.model = &llm.Fallback{Model: om.model, Primary: from, Secondary: to, OnSwitch: func(err error) {
			io.WriteString(stderr, fallbackWarning(from, to, err))
		}}
	}
	return om, nil
}

// startScripted serves script from an in-process fake on loopback and
// points every provider's real client at it.
func (om *openedModel) startScripted(script *fakeapi.Script) (map[string]llm.Model, error) {
	srv, err := fakeapi.Start(fakeapi.Config{Script: script, RecordLimit: 100})
	if err != nil {
		return nil, fmt.Errorf("start the scripted model: %w", err)
	}
	routes, err := scriptedRoutes(srv.URL)
	if err != nil {
		srv.Close()
		return nil, err
	}
	om.name, om.close, om.url, om.key, om.fake = "scripted", srv.Close, srv.URL, "scripted", srv
	return routes, nil
}

func isProvider(name string) bool { return slices.Contains(providerNames, name) }

// openModel opens the session's model for spec; it is closed with the
// session.
func (s *Session) openModel(spec string) error {
	om, err := s.newModel(spec)
	if err != nil {
		return &FieldError{Field: "Model", Err: err}
	}
	s.model = om
	s.usage.setPrices(om.prices)
	s.closers = append(s.closers, om.close)
	return nil
}

// fallbackWarning is what the session says when its model falls back.
func fallbackWarning(from, to string, err error) string {
	return fmt.Sprintf("cohort: warning: model %s cannot serve requests (%v); using the fallback model %s for the rest of the session\n", from, err, to)
}
