package scenario

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPromptRoundTrip(t *testing.T) {
	for _, s := range []Spec{
		{Agents: 10, Turns: 5, Tools: ToolsBash},
		{Agents: 1000, Turns: 3, PerMessage: 100, Background: true, Tools: ToolsMixed, File: "/tmp/x/data.txt"},
		{Agents: 1, Turns: 0, Tools: ToolsBash},
		{Agents: 5, Turns: 2, Tools: ToolsBash, Brief: 400},
	} {
		got, ok, err := ParsePrompt(s.Prompt())
		if !ok || err != nil {
			t.Fatalf("ParsePrompt(%q) = ok %v, err %v", s.Prompt(), ok, err)
		}
		if d := cmp.Diff(s, got); d != "" {
			t.Errorf("round trip (-want +got):\n%s", d)
		}
	}
}

func TestParsePromptErrors(t *testing.T) {
	for _, tc := range []struct {
		text, want string
	}{
		{"bench-lead agents=x turns=1 tools=bash", "field agents"},
		{"bench-lead agents=0 turns=1 tools=bash", "at least one agent"},
		{"bench-lead agents=2 turns=1 tools=zsh", `tools="zsh"`},
		{"bench-lead agents=2 turns=1 tools=mixed file=rel/path", "absolute file"},
		{"bench-lead agents=2 turns=1 tools=bash colour=red", `unknown field "colour"`},
		{"bench-lead agents=2 turns=-1 tools=bash", "turns=-1"},
		{"bench-lead agents=2 orphan tools=bash", `"orphan" is not key=value`},
		{"bench-lead agents=2 turns=1 tools=bash brief=-3", "brief=-3"},
	} {
		_, ok, err := ParsePrompt("intro\n" + tc.text + "\nmore prose")
		if !ok || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParsePrompt(%q) = ok %v, err %v; want an error containing %q", tc.text, ok, err, tc.want)
		}
	}
	if _, ok, err := ParsePrompt("fix the failing test"); ok || err != nil {
		t.Errorf("a prompt without a bench-lead line: ok %v, err %v; want not ok", ok, err)
	}
}

// A brief pads each subagent's prompt to its size, and the subagent's
// line still parses from it.
func TestBriefSizesTheSubagentPrompts(t *testing.T) {
	s := Spec{Agents: 3, Turns: 2, Tools: ToolsBash, Brief: 400}
	for id := range 3 {
		p := s.subPrompt(id)
		w, ok, err := parseSub(p)
		if len(p) != 400 || !ok || err != nil || w.id != id || w.turns != 2 {
			t.Fatalf("prompt of %d bytes parses as %+v, %v, %v:\n%s", len(p), w, ok, err, p)
		}
	}
	if short := (Spec{Agents: 1, Turns: 1, Tools: ToolsBash}).subPrompt(0); len(short) >= 200 || strings.Contains(short, briefFiller[:20]) {
		t.Fatalf("without a brief the prompt is padded: %q", short)
	}
}

func TestProgressLineCarriesNext(t *testing.T) {
	s := Spec{Agents: 30, Turns: 2, PerMessage: 10, Tools: ToolsBash}
	text := "This conversation continues an earlier one.\n\n<summary>\n" + s.progressLine(20) + "\nprose\n</summary>"
	got, next, ok, err := parseLead(text)
	if !ok || err != nil || next != 20 {
		t.Fatalf("parseLead = next %d, ok %v, err %v; want next 20", next, ok, err)
	}
	if d := cmp.Diff(s, got); d != "" {
		t.Errorf("spec (-want +got):\n%s", d)
	}
}

func FuzzParsePrompt(f *testing.F) {
	f.Add(Spec{Agents: 3, Turns: 2, Tools: ToolsBash}.Prompt())
	f.Add(Spec{Agents: 7, Turns: 3, PerMessage: 2, Background: true, Tools: ToolsMixed, File: "/a/b"}.progressLine(4))
	f.Add("bench-lead agents=99999999999999999999 turns=1 tools=bash")
	f.Add("bench-lead \n bench-lead agents=1")
	f.Add("bench-sub id=3 turns=2 tools=bash file=")
	f.Fuzz(func(t *testing.T, text string) {
		s, _, ok, err := parseLead(text)
		if ok && err == nil {
			again, ok2, err2 := ParsePrompt(s.Prompt())
			if !ok2 || err2 != nil {
				t.Fatalf("a valid spec's prompt does not parse: %v", err2)
			}
			if d := cmp.Diff(s, again); d != "" {
				t.Fatalf("round trip (-want +got):\n%s", d)
			}
		}
		if w, ok, err := parseSub(text); ok && err == nil && w.turns > 0 {
			_ = w.call(0) // must not panic for any parsed worker
		}
	})
}
