package cohort

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestRunFanOut: one prompt, three subagents in parallel, a second prompt
// on the same session; every subagent's events carry its Agent call's id,
// and the second prompt continues the conversation.
func TestRunFanOut(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.rt.on("WORKER", func(r *fakeapi.Request) fakeapi.Reply {
		return fakeapi.TextReply("counted " + r.FirstUserText()[len("WORKER "):])
	})
	e.rt.on("survey", func(r *fakeapi.Request) fakeapi.Reply {
		switch r.Turn() {
		case 0:
			var calls []fakeapi.Block
			for _, d := range []string{"a", "b", "c"} {
				calls = append(calls, use("Agent", map[string]any{"description": "count " + d, "prompt": "WORKER " + d, "subagent_type": "general-purpose"}))
			}
			return fakeapi.Reply{Content: calls}
		case 1:
			return fakeapi.TextReply("all three counted")
		}
		return fakeapi.TextReply("second answer: " + r.LastUserText())
	})
	s := e.open(e.config())
	evs := collect(t, s, "survey the tree")
	if evs[0].Type != EventSystem || evs[0].Subtype != SubtypeInit || len(evs[0].Tools) == 0 || evs[0].SessionID != s.ID() {
		t.Fatalf("first event %+v, want system/init", evs[0])
	}
	calls := map[string]bool{}
	for _, ev := range evs {
		if ev.Type == EventAssistant && ev.ParentToolUseID == "" {
			for _, b := range ev.Message.Content {
				if b.Name == "Agent" {
					calls[b.ID] = true
				}
			}
		}
	}
	seen := map[string]int{}
	for _, ev := range evs {
		if ev.ParentToolUseID != "" && ev.Type == EventAssistant {
			if !calls[ev.ParentToolUseID] {
				t.Errorf("an event names Agent call %s, which the lead did not make", ev.ParentToolUseID)
			}
			seen[ev.ParentToolUseID]++
		}
	}
	if len(calls) != 3 || len(seen) != 3 {
		t.Fatalf("Agent calls %v, subagents seen %v: want three of each", calls, seen)
	}
	r := last(evs)
	if r.IsError || r.Result != "all three counted" || r.NumTurns != 2 || r.Usage == nil || r.Usage.OutputTokens == 0 {
		t.Fatalf("result %+v", r)
	}
	second := collect(t, s, "and now?")
	if got := last(second).Result; got != "second answer: and now?" {
		t.Fatalf("second result %q", got)
	}
	for _, ev := range second {
		if ev.Subtype == SubtypeInit {
			t.Error("the second Run yields an init event again")
		}
	}
	if u := last(second).Usage; u.OutputTokens <= r.Usage.OutputTokens {
		t.Errorf("usage is not cumulative: %d then %d output tokens", r.Usage.OutputTokens, u.OutputTokens)
	}
}

// TestNewRejectsBadConfig: a Config that cannot work fails in New, naming
// the field, and nothing is written under Home.
func TestNewRejectsBadConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		edit  func(*Config, *env)
		field string
		want  string
	}{
		{"no directory", func(c *Config, e *env) { c.Dir = filepath.Join(e.dir, "missing") }, "Dir", "is not a directory"},
		{"permission mode", func(c *Config, _ *env) { c.PermissionMode = "yolo" }, "PermissionMode", "yolo"},
		{"flag", func(c *Config, _ *env) { c.Flags = []string{"no_such_flag=on"} }, "Flags", "no_such_flag"},
		{"no key", func(c *Config, _ *env) { c.APIKey, c.BaseURL = "", "" }, "Model", "ANTHROPIC_API_KEY"},
		{"script", func(c *Config, e *env) { c.Model = "scripted:" + filepath.Join(e.dir, "none.yaml") }, "Model", "none.yaml"},
		{"agent", func(c *Config, _ *env) { c.Agent = "nobody" }, "Agent", "nobody"},
		{"resume", func(c *Config, _ *env) { c.Resume = "00000000-0000-0000-0000-000000000000" }, "Resume", "cannot resume"},
		{"both", func(c *Config, _ *env) { c.Resume, c.Continue = "x", true }, "Continue", "cannot be used together"},
		{"teammate mode", func(c *Config, _ *env) { c.TeammateMode = "cloud" }, "TeammateMode", "cloud"},
		{"limits", func(c *Config, _ *env) { c.MaxTurns = -1 }, "MaxTurns", "negative"},
		{"settings", func(c *Config, _ *env) { c.Settings = []string{`{"model": }`} }, "Settings", "invalid JSON"},
		{"hook", func(c *Config, _ *env) {
			c.Hooks = []Hook{{Event: "PreTooluse", Func: func(context.Context, json.RawMessage) (json.RawMessage, error) { return nil, nil }}}
		}, "Hooks", "PreToolUse"},
		{"sandbox", func(c *Config, _ *env) { c.Sandbox = "maybe" }, "Sandbox", "maybe"},
		{"tool pool", func(c *Config, _ *env) { c.ToolPool = []string{"Read", "Raed"} }, "ToolPool", `"Raed" is not a tool`},
		{"setting sources", func(c *Config, _ *env) { c.SettingSources = []string{"managed"} }, "SettingSources", "managed"},
		{"thinking", func(c *Config, _ *env) { c.MaxThinkingTokens = 64000 }, "MaxThinkingTokens", "below 32000"},
		{"fallback", func(c *Config, _ *env) { c.Model, c.FallbackModel = "opus", "opus" }, "FallbackModel", "the model itself"},
		{"json schema", func(c *Config, _ *env) { c.JSONSchema = `{"type": "object", "required": "name"}` }, "JSONSchema", "required: want an array"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			cfg := e.config()
			tt.edit(&cfg, e)
			s, err := New(t.Context(), cfg)
			if err == nil {
				s.Close()
				t.Fatal("New succeeded")
			}
			var ce *ConfigError
			if !errors.As(err, &ce) || ce.Field != tt.field || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v (%T), want a ConfigError on %s saying %q", err, err, tt.field, tt.want)
			}
			if _, err := os.Stat(e.cohortHome()); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("Home was written: %v", err)
			}
		})
	}
}

// TestClosedSession: every method of a closed session returns ErrClosed,
// and Close can be called again.
func TestClosedSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s, err := New(t.Context(), e.config())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	for ev, err := range s.Run(t.Context(), "hi") {
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("Run on a closed session: %+v, %v", ev, err)
		}
	}
	calls := map[string]error{
		"Send":              s.Send("hi"),
		"Interrupt":         s.Interrupt(),
		"SetPermissionMode": s.SetPermissionMode("plan"),
		"SetModel":          s.SetModel("opus"),
		"StopAgent":         s.StopAgent("x"),
		"Background":        s.Background("x"),
		"Message":           s.Message("x", "hi"),
		"Compact":           s.Compact(t.Context()),
		"Clear":             s.Clear(),
	}
	for name, err := range calls {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s on a closed session: %v, want ErrClosed", name, err)
		}
	}
	_ = s.Agents() // a snapshot is still fine
}

// TestOneRunAtATime: a second Run while one is going yields ErrBusy.
func TestOneRunAtATime(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := newGate()
	e.rt.on("slow", func(r *fakeapi.Request) fakeapi.Reply {
		g.wait(r)
		return fakeapi.TextReply("done")
	})
	s := e.open(e.config())
	done := make(chan []Event)
	go func() { done <- collect(t, s, "slow one") }()
	g.await(t)
	for _, err := range s.Run(t.Context(), "another") {
		if !errors.Is(err, ErrBusy) {
			t.Errorf("second Run: %v, want ErrBusy", err)
		}
	}
	if err := s.Clear(); !errors.Is(err, ErrBusy) {
		t.Errorf("Clear during a turn: %v, want ErrBusy", err)
	}
	close(g.open)
	select {
	case evs := <-done:
		if last(evs).Result != "done" {
			t.Errorf("result %+v", last(evs))
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the first Run never ended")
	}
}
