package agentdef

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestResolveModel(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == EnvSubagentModel {
				return v
			}
			return "unrelated"
		}
	}
	const parent = "claude-opus-4-8"
	tests := []struct {
		name                string
		env                 func(string) string
		tool, def, parentID string
		aliases             map[string]string
		want                string
	}{
		{"nothing set inherits", nil, "", "", parent, nil, parent},
		{"definition", nil, "", "claude-sonnet-4-6", parent, nil, "claude-sonnet-4-6"},
		{"tool beats definition", nil, "claude-haiku-4-5", "claude-sonnet-4-6", parent, nil, "claude-haiku-4-5"},
		{"env beats tool", env("claude-opus-5"), "claude-haiku-4-5", "sonnet", parent, nil, "claude-opus-5"},
		{"empty env is unset", env(""), "", "sonnet", parent, nil, "claude-sonnet-5-5"},
		{"blank env is unset", env("  "), "haiku", "", parent, nil, "claude-haiku-5-5"},
		{"definition inherit", nil, "", "inherit", parent, nil, parent},
		{"tool inherit beats definition", nil, "inherit", "haiku", parent, nil, parent},
		{"env inherit beats everything", env("inherit"), "opus", "haiku", parent, nil, parent},
		{"INHERIT in capitals", nil, "", "INHERIT", parent, nil, parent},
		{"alias opus", nil, "opus", "", parent, nil, "claude-opus-5-5"},
		{"alias sonnet", nil, "", "sonnet", parent, nil, "claude-sonnet-5-5"},
		{"alias haiku with case and space", nil, " Haiku ", "", parent, nil, "claude-haiku-5-5"},
		{"configured alias", nil, "haiku", "", parent, map[string]string{"haiku": "claude-haiku-4-5"}, "claude-haiku-4-5"},
		{"configured table falls back to defaults", nil, "opus", "", parent, map[string]string{"haiku": "x"}, "claude-opus-5-5"},
		{"custom alias", nil, "fast", "", parent, map[string]string{"fast": "claude-haiku-4-5"}, "claude-haiku-4-5"},
		{"env alias", env("sonnet"), "", "", parent, nil, "claude-sonnet-5-5"},
		{"parent alias resolved", nil, "", "", "opus", nil, "claude-opus-5-5"},
		{"scripted kept", nil, "scripted:turns.yaml", "haiku", parent, nil, "scripted:turns.yaml"},
		{"scripted parent inherited", nil, "", "inherit", "scripted:/tmp/s.yaml", nil, "scripted:/tmp/s.yaml"},
		{"unknown id kept", nil, "", "gpt-5.2-codex", parent, nil, "gpt-5.2-codex"},
		{"no parent, nothing set", nil, "", "", "", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ResolveModel(tt.env, tt.tool, tt.def, tt.parentID, tt.aliases)
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDefaultAliasesIsACopy(t *testing.T) {
	a := DefaultAliases()
	a["opus"] = "changed"
	want := map[string]string{"opus": "claude-opus-5-5", "sonnet": "claude-sonnet-5-5", "haiku": "claude-haiku-5-5"}
	if diff := cmp.Diff(want, DefaultAliases()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
