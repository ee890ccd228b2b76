package team

import (
	"errors"
	"testing"

	"github.com/cohort-dev/cohort/internal/jsonfile"
)

// FuzzParseConfig does the same for team files.
func FuzzParseConfig(f *testing.F) {
	for _, seed := range []string{
		`{"name":"alpha","description":"d","createdAt":1750000000000,"leadAgentId":"team-lead@alpha","leadSessionId":"s","hiddenPaneIds":["%1"],"teamAllowedPaths":[{"path":"/p","toolName":"Edit","addedBy":"x","addedAt":1,"z":2}],"members":[{"agentId":"team-lead@alpha","name":"team-lead","isActive":false,"extra":[1]}],"future":true}`,
		`{"name":"alpha","members":{}}`,
		`{"name":"alpha","createdAt":"soon"}`,
		`null`, `{}`, `{"members":[null]}`, `[`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseConfig("config.json", data)
		if err != nil {
			var fe *jsonfile.Error
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a *jsonfile.Error", err)
			}
			return
		}
		out, err := MarshalConfig(cfg)
		if err != nil {
			t.Fatalf("MarshalConfig of a parsed file: %v", err)
		}
		again, err := ParseConfig("config.json", out)
		if err != nil {
			t.Fatalf("re-parse of %s: %v", out, err)
		}
		out2, err := MarshalConfig(again)
		if err != nil || string(out) != string(out2) {
			t.Fatalf("second write differs:\n%s\n%s", out, out2)
		}
	})
}
