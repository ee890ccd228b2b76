package clitest

import (
	"encoding/json"
	"os"
	"path/filepath"
)

// TeamConfig reads the team file.
func (h *Harness) TeamConfig(name string) map[string]any {
	h.T.Helper()
	data, err := os.ReadFile(filepath.Join(h.Vars["COHORT_HOME"], "teams", name, "config.json"))
	if err != nil {
		h.T.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(data, &cfg); err != nil {
		h.T.Fatal(err)
	}
	return cfg
}

// MemberActive maps each member of a team file to its isActive flag.
func MemberActive(cfg map[string]any) map[string]bool {
	out := map[string]bool{}
	for _, m := range cfg["members"].([]any) {
		mm := m.(map[string]any)
		active, ok := mm["isActive"].(bool)
		out[mm["name"].(string)] = !ok || active
	}
	return out
}
