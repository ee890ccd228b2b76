package agentdef

import (
	"maps"
	"strings"
)

// EnvSubagentModel names the environment variable that forces every
// subagent's model.
const EnvSubagentModel = "COHORT_SUBAGENT_MODEL"

// Inherit is the model value that means "the parent's model".
const Inherit = "inherit"

// DefaultAliases returns the default alias table (a copy). A table passed to
// ResolveModel overrides it entry by entry; its keys are lower case.
func DefaultAliases() map[string]string {
	return maps.Clone(defaultAliases)
}

var defaultAliases = map[string]string{
	"opus":   "claude-opus-5-5",
	"sonnet": "claude-sonnet-5-5",
	"haiku":  "claude-haiku-5-5",
}

// ResolveModel picks a subagent's model, first set wins: the
// COHORT_SUBAGENT_MODEL variable read through env, the Agent call's model,
// the definition's model, else the parent's. "inherit" at any step means the
// parent's model. The choice then goes through aliases (case-insensitive;
// entries missing there fall back to the defaults). Anything else —
// a full id, a "scripted:FILE" model, an id Cohort does not know — is kept
// as given. A nil env reads no variable.
func ResolveModel(env func(string) string, toolModel, defModel, parentModel string, aliases map[string]string) string {
	var fromEnv string
	if env != nil {
		fromEnv = env(EnvSubagentModel)
	}
	chosen := parentModel
	for _, m := range []string{fromEnv, toolModel, defModel} {
		if m = strings.TrimSpace(m); m != "" {
			chosen = m
			break
		}
	}
	if strings.EqualFold(chosen, Inherit) {
		chosen = parentModel
	}
	return ResolveAlias(chosen, aliases)
}

// ResolveAlias maps an alias (opus|sonnet|haiku, or any key of aliases) to
// its model id and returns anything else unchanged.
func ResolveAlias(model string, aliases map[string]string) string {
	key := strings.ToLower(strings.TrimSpace(model))
	if id, ok := aliases[key]; ok && id != "" {
		return id
	}
	if id, ok := defaultAliases[key]; ok {
		return id
	}
	return model
}
