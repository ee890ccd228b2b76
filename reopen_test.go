package cohort

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestCompactionReopensTheConversation: after a compaction the lead's
// memory opens the conversation again, once, ahead of the summary;
// SessionStart fires with source "compact" (its additionalContext follows
// the summary) after PostCompact, and InstructionsLoaded with load reason
// "compact", with the keys Claude Code 2.1.332 sent in the recorded run
// (internal/conformance/testdata/hook-inputs.json, run "compact").
func TestCompactionReopensTheConversation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	logs := reopenProject(t, e)
	var mu sync.Mutex
	var after *fakeapi.Request
	e.rt.on("talk", func(r *fakeapi.Request) fakeapi.Reply {
		if strings.Contains(r.LastUserText(), "about to be compacted") {
			return fakeapi.TextReply("We talked five times.")
		}
		if strings.Contains(r.LastUserText(), "talk after") {
			mu.Lock()
			after = r
			mu.Unlock()
		}
		return fakeapi.TextReply("noted")
	})
	s := e.open(e.config())
	for i := range 5 {
		collect(t, s, fmt.Sprintf("talk %d", i))
	}
	if err := s.Compact(t.Context()); err != nil {
		t.Fatal(err)
	}
	collect(t, s, "talk after the compaction")

	mu.Lock()
	defer mu.Unlock()
	if after == nil {
		t.Fatal("the prompt after the compaction never reached the model")
	}
	var sent strings.Builder
	for _, m := range after.Messages {
		for _, b := range m.Content {
			sent.WriteString(b.Text + "\n")
		}
	}
	text := sent.String()
	if n := strings.Count(text, shipMemory); n != 1 {
		t.Errorf("the memory is in the request after the compaction %d times, want once:\n%s", n, text)
	}
	m, s5, a := strings.Index(text, shipMemory), strings.Index(text, "We talked five times."), strings.Index(text, added)
	if m < 0 || s5 < 0 || a < 0 || !(m < s5 && s5 < a) || strings.Count(text, added) != 1 {
		t.Errorf("want the memory, then the summary, then the SessionStart context once; got:\n%s", text)
	}
	if strings.Contains(text, "talk 0") {
		t.Errorf("the compacted turns were sent again:\n%s", text)
	}

	var events []map[string]any
	dec := json.NewDecoder(strings.NewReader(readFile(t, filepath.Join(logs, "events"))))
	for dec.More() {
		var in map[string]any
		if err := dec.Decode(&in); err != nil {
			t.Fatal(err)
		}
		events = append(events, in)
	}
	var order []string
	for _, in := range events {
		why, _ := in["source"].(string)
		for _, k := range []string{"load_reason", "trigger"} {
			if v, ok := in[k].(string); ok {
				why = v
			}
		}
		order = append(order, fmt.Sprint(in["hook_event_name"], ":", why))
	}
	want := []string{"SessionStart:startup", "InstructionsLoaded:session_start", "PostCompact:manual",
		"SessionStart:compact", "InstructionsLoaded:compact"}
	if !slices.Equal(order, want) {
		t.Errorf("hooks fired %q, want %q", order, want)
	}

	var rec struct {
		Runs map[string]map[string]struct {
			Keys []string `json:"keys"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(readFile(t, "internal/conformance/testdata/hook-inputs.json")), &rec); err != nil {
		t.Fatal(err)
	}
	for _, in := range events[min(2, len(events)):] { // the ones after the compaction
		ev := in["hook_event_name"].(string)
		for _, k := range rec.Runs["compact"][ev].Keys {
			if _, ok := in[k]; !ok {
				t.Errorf("%s (%v) lacks %q, which Claude Code sends after a compaction", ev, in["source"], k)
			}
		}
	}
}

// shipMemory is the CLAUDE.md of reopenProject's project, and added what its
// SessionStart "compact" hook adds.
const shipMemory, added = "Answer in the voice of a ship's log.", "REOPENED: the release branch is frozen."

// reopenProject gives e's project a CLAUDE.md holding shipMemory and hooks
// that log SessionStart, InstructionsLoaded and PostCompact inputs to
// events in the directory it returns; SessionStart "compact" adds added.
func reopenProject(t *testing.T, e *env) string {
	t.Helper()
	logs := filepath.Join(e.dir, "logs")
	for _, d := range []string{logs, filepath.Join(e.dir, ".claude")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(e.dir, "CLAUDE.md"), []byte(shipMemory+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	logTo := map[string]any{"type": "command", "command": fmt.Sprintf(`cat >> %s/events; echo >> %s/events`, logs, logs)}
	settings := map[string]any{"hooks": map[string]any{
		"SessionStart": []any{
			map[string]any{"hooks": []any{logTo}},
			map[string]any{"matcher": "compact", "hooks": []any{map[string]any{"type": "command",
				"command": `echo '{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"` + added + `"}}'`}}},
		},
		"InstructionsLoaded": []any{map[string]any{"hooks": []any{logTo}}},
		"PostCompact":        []any{map[string]any{"hooks": []any{logTo}}},
	}}
	data, _ := json.Marshal(settings)
	if err := os.WriteFile(filepath.Join(e.dir, ".claude", "settings.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return logs
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestCustomCommandExpands: a prompt naming the project's custom command
// reaches the model as the command's text, after UserPromptExpansion
// hooks heard of it with Claude Code 2.1.332's fields (their
// additionalContext joins the prompt; UserPromptSubmit sees the prompt as
// typed); a hook that blocks refuses the prompt before any model call.
func TestCustomCommandExpands(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	logs := commandProject(t, e, "---\ndescription: Greet\n---\nSay hello to $ARGUMENTS.")
	settings := `{"hooks": {"UserPromptExpansion": [
	{"hooks": [{"type": "command", "command": "cat >> ` + logs + `/expand; echo >> ` + logs + `/expand; echo 'Greet them warmly.'"}]},
	{"matcher": "deploy", "hooks": [{"type": "command", "command": "echo 'no deploys on Friday' >&2; exit 2"}]}],
	"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "cat >> ` + logs + `/submit"}]}]}}`
	if err := os.WriteFile(filepath.Join(e.dir, ".claude", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var got []string
	e.rt.on("hello", func(r *fakeapi.Request) fakeapi.Reply {
		mu.Lock()
		got = append(got, r.LastUserText())
		mu.Unlock()
		return fakeapi.TextReply("hello!")
	})
	s := e.open(e.config())
	collect(t, s, "/greet the whole team")
	mu.Lock()
	// Two blocks, the tags' lines each ending in a newline (LastUserText
	// joins the blocks with another).
	tags := "<command-message>greet</command-message>\n<command-name>/greet</command-name>\n<command-args>the whole team</command-args>\n"
	if len(got) != 1 || !strings.Contains(got[0], tags+"\nSay hello to the whole team.") || !strings.Contains(got[0], "Greet them warmly.") {
		t.Errorf("the model read %q, want Claude Code's tags of the typed command, its text, and the hook's context", got)
	}
	mu.Unlock()
	var in map[string]any
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(logs, "expand"))), &in); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"hook_event_name": "UserPromptExpansion", "expansion_type": "slash_command",
		"command_name": "greet", "command_args": "the whole team", "command_source": "projectSettings", "prompt": "/greet the whole team"} {
		if in[k] != want {
			t.Errorf("UserPromptExpansion %s = %v, want %q", k, in[k], want)
		}
	}
	if sub := readFile(t, filepath.Join(logs, "submit")); !strings.Contains(sub, `"prompt":"/greet the whole team"`) {
		t.Errorf("UserPromptSubmit did not see the prompt as typed: %s", sub)
	}
	var said strings.Builder
	for ev, err := range s.Run(t.Context(), "/deploy") {
		if err != nil {
			said.WriteString(err.Error())
		}
		line, _ := json.Marshal(ev)
		said.Write(line)
	}
	if !strings.Contains(said.String(), "no deploys on Friday") {
		t.Errorf("a blocked /deploy did not say why: %s", said.String())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 {
		t.Errorf("a blocked command reached the model: %q", got)
	}
}

// TestTypedAheadCommandExpands: a custom command typed while the lead
// works (Send) fires UserPromptExpansion with the fields of one typed
// while idle, and the lead reads it expanded, tagged as Claude Code tags
// a typed command; a hook that blocks it refuses the typing with its
// reason, and the model never reads it (issue 38).
func TestTypedAheadCommandExpands(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	logs := commandProject(t, e, "Say hello to $ARGUMENTS.")
	settings := `{"hooks": {"UserPromptExpansion": [
	{"hooks": [{"type": "command", "command": "cat >> ` + logs + `/expand; echo >> ` + logs + `/expand"}]},
	{"matcher": "deploy", "hooks": [{"type": "command", "command": "echo 'no deploys on Friday' >&2; exit 2"}]}]}}`
	if err := os.WriteFile(filepath.Join(e.dir, ".claude", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	g := newGate()
	var mu sync.Mutex
	var later []string
	e.rt.on("work a while", func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 0 {
			if !g.wait(r) {
				return fakeapi.TextReply("cancelled")
			}
			return fakeapi.TextReply("worked")
		}
		mu.Lock()
		later = append(later, r.LastUserText())
		mu.Unlock()
		return fakeapi.TextReply("greeted")
	})
	s := e.open(e.config())
	done := make(chan []Event, 1)
	go func() { done <- collect(t, s, "work a while") }()
	g.await(t)
	if err := s.Send("/greet the team"); err != nil {
		t.Fatalf("typing a command ahead: %v", err)
	}
	if err := s.Send("/deploy"); err == nil || !strings.Contains(err.Error(), "no deploys on Friday") {
		t.Errorf("a typed-ahead command a hook blocks: %v; want refused with the hook's reason", err)
	}
	close(g.open)
	<-done
	mu.Lock()
	tags := "<command-message>greet</command-message>\n<command-name>/greet</command-name>\n<command-args>the team</command-args>"
	if len(later) != 1 || !strings.Contains(later[0], tags+"\n\nSay hello to the team.") || strings.Contains(later[0], "Deploy now") {
		t.Errorf("the lead read %q; want the typed command tagged and expanded, and no blocked command", later)
	}
	mu.Unlock()
	var in map[string]any
	first, _, _ := strings.Cut(readFile(t, filepath.Join(logs, "expand")), "\n")
	if err := json.Unmarshal([]byte(first), &in); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"hook_event_name": "UserPromptExpansion", "expansion_type": "slash_command",
		"command_name": "greet", "command_args": "the team", "command_source": "projectSettings", "prompt": "/greet the team"} {
		if in[k] != want {
			t.Errorf("UserPromptExpansion %s = %v, want %q", k, in[k], want)
		}
	}
}

// commandProject gives e's project the custom commands greet (greet's
// body) and deploy, and returns a directory for the hooks' logs.
func commandProject(t *testing.T, e *env, greet string) string {
	t.Helper()
	logs := filepath.Join(e.dir, "logs")
	for _, d := range []string{logs, filepath.Join(e.dir, ".claude", "commands")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range map[string]string{"greet": greet, "deploy": "Deploy now."} {
		if err := os.WriteFile(filepath.Join(e.dir, ".claude", "commands", name+".md"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return logs
}

// TestResumedCompactionReopensAsFresh: a conversation compacted after
// --resume opens again exactly as a fresh session's does — the same
// messages reach the model after the compaction (the memory, the summary,
// what SessionStart adds, the prompt) and the same hooks fire after
// PostCompact (issue 38: a resumed lead re-added no memory, because its
// opening was known only to the process that started the conversation).
func TestResumedCompactionReopensAsFresh(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	logs := reopenProject(t, e)
	var mu sync.Mutex
	var after []*fakeapi.Request
	e.rt.on("talk", func(r *fakeapi.Request) fakeapi.Reply {
		if strings.Contains(r.LastUserText(), "about to be compacted") {
			return fakeapi.TextReply("We talked five times.")
		}
		if strings.Contains(r.LastUserText(), "talk after") {
			mu.Lock()
			after = append(after, r)
			mu.Unlock()
		}
		return fakeapi.TextReply("noted")
	})
	// hooksAfterCompact is what fired for the compaction, and empties the log.
	hooksAfterCompact := func() []string {
		var order []string
		dec := json.NewDecoder(strings.NewReader(readFile(t, filepath.Join(logs, "events"))))
		for dec.More() {
			var in map[string]any
			if err := dec.Decode(&in); err != nil {
				t.Fatal(err)
			}
			why, _ := in["source"].(string)
			for _, k := range []string{"load_reason", "trigger"} {
				if v, ok := in[k].(string); ok {
					why = v
				}
			}
			order = append(order, fmt.Sprint(in["hook_event_name"], ":", why))
		}
		if err := os.Remove(filepath.Join(logs, "events")); err != nil {
			t.Fatal(err)
		}
		return slices.DeleteFunc(order, func(ev string) bool { // a resumed one's SessionStart comes with its first prompt
			return !strings.HasSuffix(ev, ":manual") && !strings.HasSuffix(ev, ":compact")
		})
	}
	compactAndTalk := func(s *Session) {
		if err := s.Compact(t.Context()); err != nil {
			t.Fatal(err)
		}
		collect(t, s, "talk after the compaction")
	}

	fresh := e.open(e.config())
	for i := range 5 {
		collect(t, fresh, fmt.Sprintf("talk %d", i))
	}
	compactAndTalk(fresh)
	freshHooks := hooksAfterCompact()

	first := e.open(e.config())
	for i := range 5 {
		collect(t, first, fmt.Sprintf("talk %d", i))
	}
	id := first.ID()
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	cfg := e.config()
	cfg.Resume = id
	compactAndTalk(e.open(cfg))
	resumedHooks := hooksAfterCompact()

	mu.Lock()
	defer mu.Unlock()
	if len(after) != 2 {
		t.Fatalf("%d prompts after a compaction reached the model, want 2 (fresh, resumed)", len(after))
	}
	var sent [2]string
	for i, r := range after {
		msgs, err := json.MarshalIndent(r.Messages, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		sent[i] = string(msgs)
	}
	if strings.Count(sent[0], shipMemory) != 1 {
		t.Errorf("a fresh session's compaction re-added the memory %d times, want once:\n%s", strings.Count(sent[0], shipMemory), sent[0])
	}
	if sent[0] != sent[1] {
		t.Errorf("after a compaction, a resumed session sent\n%s\nwant what a fresh session sent:\n%s", sent[1], sent[0])
	}
	want := []string{"PostCompact:manual", "SessionStart:compact", "InstructionsLoaded:compact"}
	if !slices.Equal(freshHooks, want) || !slices.Equal(resumedHooks, freshHooks) {
		t.Errorf("hooks fired for the compaction: fresh %q, resumed %q; want %q both", freshHooks, resumedHooks, want)
	}
}

// TestResumedClearReopensWithMemory: a conversation cleared after --resume
// opens again with the memory, as a fresh session's first prompt does
// (issue 38); the resumed session's first prompt adds none (its history
// holds it).
func TestResumedClearReopensWithMemory(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.dir, "CLAUDE.md"), []byte(shipMemory+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var sent []string
	e.rt.on("talk", func(r *fakeapi.Request) fakeapi.Reply {
		var b strings.Builder
		for _, m := range r.Messages {
			for _, c := range m.Content {
				b.WriteString(c.Text + "\n")
			}
		}
		mu.Lock()
		sent = append(sent, b.String())
		mu.Unlock()
		return fakeapi.TextReply("noted")
	})
	first := e.open(e.config())
	collect(t, first, "talk 0")
	id := first.ID()
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	cfg := e.config()
	cfg.Resume = id
	s := e.open(cfg)
	collect(t, s, "talk 1")
	if err := s.Clear(); err != nil {
		t.Fatal(err)
	}
	collect(t, s, "talk after the clear")
	mu.Lock()
	defer mu.Unlock()
	if len(sent) != 3 {
		t.Fatalf("%d requests, want 3", len(sent))
	}
	for i, want := range []string{"talk 0", "talk 1", "talk after the clear"} {
		if n := strings.Count(sent[i], shipMemory); n != 1 || !strings.Contains(sent[i], want) {
			t.Errorf("request %d (%s) holds the memory %d times, want once:\n%s", i, want, n, sent[i])
		}
	}
	if strings.Contains(sent[2], "talk 0") {
		t.Errorf("the cleared conversation was sent again:\n%s", sent[2])
	}
}
