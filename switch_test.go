package cohort

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestModelSwitchHooks: a PreModelSwitch hook that refuses keeps the
// lead on its model (SetModel says why, PostModelSwitch does not fire);
// once it lets the switch go, the next request names the new model and
// PostModelSwitch hears of it, with the context the first answer left;
// its source is sdk for SetModel, command and picker for a front end's.
func TestModelSwitchHooks(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	logs := filepath.Join(e.dir, "logs")
	gate := filepath.Join(e.dir, "refuse")
	for _, f := range []string{logs, filepath.Join(e.dir, ".claude")} {
		if err := os.MkdirAll(f, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	settings := `{"hooks": {
	"PreModelSwitch": [{"hooks": [{"type": "command", "command": "cat >> ` + logs + `/pre; if [ -e ` + gate + ` ]; then echo 'not during the release' >&2; exit 2; fi"}]}],
	"PostModelSwitch": [{"hooks": [{"type": "command", "command": "cat >> ` + logs + `/post; echo >> ` + logs + `/post"}]}]}}`
	if err := os.WriteFile(filepath.Join(e.dir, ".claude", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	models := make(chan string, 4)
	e.rt.on("which model", func(r *fakeapi.Request) fakeapi.Reply {
		models <- r.Model
		return fakeapi.TextReply("noted")
	})
	s := e.open(e.config())
	collect(t, s, "which model")
	err := s.SetModel("haiku")
	if err == nil || !strings.Contains(err.Error(), "not during the release") {
		t.Fatalf("SetModel = %v, want the hook's refusal", err)
	}
	if _, err := os.Stat(filepath.Join(logs, "post")); !os.IsNotExist(err) {
		t.Errorf("PostModelSwitch fired for a refused switch (%v)", err)
	}
	if err := os.Remove(gate); err != nil {
		t.Fatal(err)
	}
	if err := s.SetModel("haiku"); err != nil {
		t.Fatal(err)
	}
	collect(t, s, "which model again")
	first, second := <-models, <-models
	if !strings.Contains(first, "sonnet") || !strings.Contains(second, "haiku") {
		t.Fatalf("models %q then %q, want sonnet then haiku", first, second)
	}
	// A front end's /model name and its picker say so; an unknown source
	// is refused before any hook runs.
	if err := s.SetModelFrom("sonnet", "command"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetModelFrom("opus", "picker"); err != nil {
		t.Fatal(err)
	}
	if err := s.SetModelFrom("haiku", "menu"); err == nil || !strings.Contains(err.Error(), `unknown source "menu"`) {
		t.Errorf("SetModelFrom with source menu = %v, want it refused", err)
	}
	data, err := os.ReadFile(filepath.Join(logs, "post"))
	if err != nil {
		t.Fatal(err)
	}
	var sources []string
	dec := json.NewDecoder(strings.NewReader(string(data)))
	var post map[string]any
	for i := 0; dec.More(); i++ {
		var in map[string]any
		if err := dec.Decode(&in); err != nil {
			t.Fatalf("PostModelSwitch input: %v\n%s", err, data)
		}
		if i == 0 {
			post = in
		}
		sources = append(sources, in["source"].(string))
	}
	if strings.Join(sources, " ") != "sdk command picker" {
		t.Errorf("PostModelSwitch sources %q, want sdk command picker", sources)
	}
	data, _ = json.Marshal(post)
	if post["requested_model"] != "haiku" || !strings.Contains(post["to_model"].(string), "haiku") ||
		!strings.Contains(post["from_model"].(string), "sonnet") || post["source"] != "sdk" || post["pricing"] != "catalog" ||
		post["prompt_cache_warm"] != true || post["context_tokens"].(float64) <= 0 || post["estimated_cache_write_usd"].(float64) <= 0 {
		t.Errorf("PostModelSwitch input: %s", data)
	}
}

// TestSessionStartSources: SessionStart's source is Claude Code 2.1.332's
// for each way a session starts: startup for a new one, resume for one
// that continues a conversation, fork for one that continues it under a
// new id (ForkSession).
func TestSessionStartSources(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	log := filepath.Join(e.dir, "starts")
	if err := os.MkdirAll(filepath.Join(e.dir, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	settings := `{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "cat >> ` + log + `; echo >> ` + log + `"}]}]}}`
	if err := os.WriteFile(filepath.Join(e.dir, ".claude", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	e.rt.on("start", func(*fakeapi.Request) fakeapi.Reply { return fakeapi.TextReply("ok") })
	s := e.open(e.config())
	collect(t, s, "start")
	id := s.ID()
	s.Close()
	cfg := e.config()
	cfg.Resume = id
	r := e.open(cfg)
	collect(t, r, "start again")
	r.Close()
	cfg.ForkSession = true
	f := e.open(cfg)
	collect(t, f, "start a fork")
	f.Close()
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var in map[string]any
		if err := json.Unmarshal([]byte(line), &in); err != nil {
			t.Fatalf("SessionStart input %q: %v", line, err)
		}
		got = append(got, in["source"].(string))
	}
	if strings.Join(got, " ") != "startup resume fork" {
		t.Errorf("SessionStart sources %q, want startup resume fork", got)
	}
}
