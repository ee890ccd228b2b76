package flags

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDefaultsMatchSpec(t *testing.T) {
	want := map[string]string{
		ForkSubagent: "off", BuiltinExplorePlanAgents: "on", VerificationAgent: "off",
		CoordinatorMode: "off", AgentCwd: "off", AutoBackgroundAgents: "off",
		AutoBackgroundAfterS: "120", SlimSubagentMemory: "on", AgentListAttachment: "off",
		AgentTeams: "on", AutoDream: "on", AutoDreamMinHours: "24",
		AutoDreamMinSessions: "5", RemoteAgents: "off", Workflows: "on", SiblingGate: "on",
		BackgroundAgents: "off", ImplicitTeam: "off",
	}
	got := map[string]string{}
	for _, v := range Default().List() {
		got[v.Name] = v.String()
		if v.Source != SourceDefault || v.Description == "" {
			t.Errorf("%s: source %q, description %q", v.Name, v.Source, v.Description)
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("defaults (-want +got):\n%s", d)
	}
}

func TestResolveSources(t *testing.T) {
	type want struct {
		Value  string
		Source string
	}
	tests := []struct {
		name string
		cfg  Config
		flag string
		want want
	}{
		{"default", Config{}, ForkSubagent, want{"off", "default"}},
		{"settings bool", Config{Settings: []Settings{{"/u/settings.json", map[string]any{ForkSubagent: true}}}},
			ForkSubagent, want{"on", "/u/settings.json"}},
		{"settings number", Config{Settings: []Settings{{"/u/s.json", map[string]any{AutoDreamMinHours: float64(3)}}}},
			AutoDreamMinHours, want{"3", "/u/s.json"}},
		{"settings json.Number", Config{Settings: []Settings{{"/u/s.json", map[string]any{AutoDreamMinHours: json.Number("7")}}}},
			AutoDreamMinHours, want{"7", "/u/s.json"}},
		{"settings string", Config{Settings: []Settings{{"/u/s.json", map[string]any{AgentTeams: "off"}}}},
			AgentTeams, want{"off", "/u/s.json"}},
		{"settings 0/1 for bool", Config{Settings: []Settings{{"/u/s.json", map[string]any{AgentCwd: float64(1)}}}},
			AgentCwd, want{"on", "/u/s.json"}},
		{"later settings file wins", Config{Settings: []Settings{
			{"/u/s.json", map[string]any{ForkSubagent: true}},
			{"/p/.cohort/settings.json", map[string]any{ForkSubagent: false}},
		}}, ForkSubagent, want{"off", "/p/.cohort/settings.json"}},
		{"env beats settings", Config{
			Settings: []Settings{{"/u/s.json", map[string]any{ForkSubagent: false}}},
			Environ:  []string{"COHORT_FLAG_FORK_SUBAGENT=ON"},
		}, ForkSubagent, want{"on", "env COHORT_FLAG_FORK_SUBAGENT"}},
		{"env number", Config{Environ: []string{"COHORT_FLAG_AUTO_BACKGROUND_AFTER_S=30"}},
			AutoBackgroundAfterS, want{"30", "env COHORT_FLAG_AUTO_BACKGROUND_AFTER_S"}},
		{"env empty is unset", Config{Environ: []string{"COHORT_FLAG_AGENT_TEAMS="}},
			AgentTeams, want{"on", "default"}},
		{"unrelated env ignored", Config{Environ: []string{"PATH=/bin", "COHORT_HOME=/h", "cohort_flag_x=1"}},
			AgentTeams, want{"on", "default"}},
		{"cli beats env", Config{
			Environ: []string{"COHORT_FLAG_REMOTE_AGENTS=1"},
			CLI:     []string{"remote_agents=false"},
		}, RemoteAgents, want{"off", "--flag"}},
		{"later cli wins", Config{CLI: []string{"auto_dream=0", "auto_dream=true"}},
			AutoDream, want{"on", "--flag"}},
		{"cli number with spaces", Config{CLI: []string{"auto_dream_min_sessions= 0 "}},
			AutoDreamMinSessions, want{"0", "--flag"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Resolve(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			v, ok := s.Get(tt.flag)
			if !ok {
				t.Fatalf("Get(%q) found nothing", tt.flag)
			}
			if d := cmp.Diff(tt.want, want{v.String(), v.Source}); d != "" {
				t.Errorf("(-want +got):\n%s", d)
			}
		})
	}
}

func TestResolveErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		is   error
		// every fragment must appear in the message
		says []string
	}{
		{"unknown in settings", Config{Settings: []Settings{{"/p/s.json", map[string]any{"fork_subagnet": true}}}},
			ErrUnknown, []string{`"fork_subagnet"`, "/p/s.json", ForkSubagent}},
		{"unknown in env", Config{Environ: []string{"COHORT_FLAG_NOPE=1"}},
			ErrUnknown, []string{`"nope"`, "env COHORT_FLAG_NOPE", "known flags"}},
		{"unknown on cli", Config{CLI: []string{"nope=1"}}, ErrUnknown, []string{`"nope"`, "--flag"}},
		{"bad bool env", Config{Environ: []string{"COHORT_FLAG_AGENT_TEAMS=yes"}},
			ErrBadValue, []string{AgentTeams, `"yes"`, "env COHORT_FLAG_AGENT_TEAMS", "1|true|on or 0|false|off"}},
		{"bad int cli", Config{CLI: []string{"auto_dream_min_hours=-1"}},
			ErrBadValue, []string{AutoDreamMinHours, `"-1"`, "--flag", "digits"}},
		{"int with sign", Config{CLI: []string{"auto_dream_min_hours=+1"}}, ErrBadValue, []string{`"+1"`}},
		{"int decimal", Config{CLI: []string{"auto_dream_min_hours=1.5"}}, ErrBadValue, []string{`"1.5"`}},
		{"int overflow", Config{CLI: []string{"auto_dream_min_hours=99999999999999999999"}}, ErrBadValue, []string{"99999999999999999999"}},
		{"int empty", Config{CLI: []string{"auto_dream_min_hours="}}, ErrBadValue, []string{`""`}},
		{"bool as number in settings", Config{Settings: []Settings{{"/s.json", map[string]any{ForkSubagent: float64(2)}}}},
			ErrBadValue, []string{"2", "/s.json"}},
		{"bool given to int in settings", Config{Settings: []Settings{{"/s.json", map[string]any{AutoDreamMinHours: true}}}},
			ErrBadValue, []string{"true", AutoDreamMinHours}},
		{"fraction in settings", Config{Settings: []Settings{{"/s.json", map[string]any{AutoDreamMinHours: 1.5}}}},
			ErrBadValue, []string{"1.5"}},
		{"object in settings", Config{Settings: []Settings{{"/s.json", map[string]any{AgentTeams: map[string]any{}}}}},
			ErrBadValue, []string{"{}"}},
		{"null in settings", Config{Settings: []Settings{{"/s.json", map[string]any{AgentTeams: nil}}}},
			ErrBadValue, []string{"null"}},
		{"cli without =", Config{CLI: []string{"fork_subagent"}}, nil, []string{"want name=value", `"fork_subagent"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Resolve(tt.cfg)
			if err == nil {
				t.Fatalf("no error; got set %v", s.List())
			}
			if s != nil {
				t.Error("a Set came back with an error")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %v is not %v", err, tt.is)
			}
			for _, frag := range tt.says {
				if !strings.Contains(err.Error(), frag) {
					t.Errorf("error %q does not mention %q", err, frag)
				}
			}
		})
	}
}

func TestResolveReportsEveryProblem(t *testing.T) {
	_, err := Resolve(Config{
		Environ: []string{"COHORT_FLAG_A=1"},
		CLI:     []string{"b=1", "agent_teams=maybe"},
	})
	var count int
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var fe *Error
		if errors.As(e, &fe) {
			count++
		}
	}
	if count != 3 {
		t.Errorf("want 3 *Error, got %d in %v", count, err)
	}
}

func TestGetters(t *testing.T) {
	s, err := Resolve(Config{CLI: []string{"fork_subagent=1", "auto_background_after_s=5"}})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Bool(ForkSubagent) || s.Int(AutoBackgroundAfterS) != 5 || !s.Bool(AgentTeams) {
		t.Errorf("getters disagree with resolved values: %v", s.List())
	}
	var none *Set
	if none.Bool(ForkSubagent) || !none.Bool(AutoDream) || none.Int(AutoDreamMinSessions) != 5 {
		t.Error("a nil Set does not read as defaults")
	}
	if _, ok := none.Get("missing"); ok {
		t.Error("Get found an unregistered flag")
	}
	if len(none.List()) != len(Defs()) {
		t.Error("nil Set lists a different number of flags")
	}
}

func TestGetterPanicsOnProgrammingErrors(t *testing.T) {
	for name, call := range map[string]func(){
		"unregistered": func() { Default().Bool("no_such_flag") },
		"bool as int":  func() { Default().Int(AgentTeams) },
		"int as bool":  func() { Default().Bool(AutoDreamMinHours) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			call()
		})
	}
}

func TestListIsACopy(t *testing.T) {
	s := Default()
	l := s.List()
	l[0].Value = 99
	if s.List()[0].Value == 99 {
		t.Error("List exposes the Set's storage")
	}
}

func FuzzParseText(f *testing.F) {
	for _, s := range []string{"1", "on", "TRUE", "off", "120", "-1", "+3", "", " 7 ", "99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, k := range []Kind{KindBool, KindInt} {
			v, ok := parseText(k, s)
			if !ok {
				continue
			}
			if v < 0 || v > maxInt || (k == KindBool && v > 1) {
				t.Fatalf("parseText(%v, %q) = %d", k, s, v)
			}
		}
	})
}
