// Package childenv says which environment variables are credentials that
// Cohort holds, and removes them from the environment of the programs it
// starts on the model's behalf (Bash, hooks, the permission prompt
// command). A Bash command can print its environment (env, printenv and
// jq -n env are read-only commands, so they run without a prompt), and
// whatever it prints goes to the model.
//
// Decisions the spec leaves open:
//
//   - The list is of names Cohort or its providers read: ANTHROPIC_API_KEY,
//     ANTHROPIC_AUTH_TOKEN, CLAUDE_CODE_OAUTH_TOKEN, OPENAI_API_KEY, and
//     NATS credentials: NATS_* and COHORT_NATS_* variables whose name holds
//     CRED, TOKEN, PASS, NKEY, SEED, JWT or USER. A credential the user wants a
//     command to have is put back through settings "env", which callers
//     append after Scrub.
//   - Teammate processes (cohort teammate in a tmux pane) are Cohort
//     itself and need the credentials; they are not scrubbed.
package childenv

import "strings"

// exact are credential variables by name.
var exact = map[string]bool{
	"ANTHROPIC_API_KEY":       true,
	"ANTHROPIC_AUTH_TOKEN":    true,
	"CLAUDE_CODE_OAUTH_TOKEN": true,
	"OPENAI_API_KEY":          true,
}

// natsSecrets are the parts of a NATS variable's name that mark a secret.
var natsSecrets = []string{"CRED", "TOKEN", "PASS", "NKEY", "SEED", "JWT", "USER"}

// Credential reports whether the variable name holds a credential.
func Credential(name string) bool {
	if exact[name] {
		return true
	}
	if strings.HasPrefix(name, "NATS_") || strings.HasPrefix(name, "COHORT_NATS_") {
		for _, s := range natsSecrets {
			if strings.Contains(name, s) {
				return true
			}
		}
	}
	return false
}

// Scrub returns environ (NAME=value entries) without credentials, in a
// new slice.
func Scrub(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !Credential(name) {
			out = append(out, kv)
		}
	}
	return out
}
