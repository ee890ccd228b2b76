package roles

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// The roles, in the order goldens list them.
const (
	roleLead       = "lead"
	roleSubagent   = "subagent"
	roleBackground = "background"
	roleFork       = "fork"
	roleTeammate   = "teammate"
	roleDream      = "dream"
)

var allRoles = []string{roleLead, roleSubagent, roleBackground, roleFork, roleTeammate, roleDream}

// firsts keeps the first request each role sent, and what each role was
// answered when it called the tools the scenario makes it call.
type firsts struct {
	// out is what the command printed.
	out     string
	mu      sync.Mutex
	req     map[string]*fakeapi.Request
	results map[string][]string
}

func (f *firsts) keep(role string, r *fakeapi.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.req == nil {
		f.req, f.results = map[string]*fakeapi.Request{}, map[string][]string{}
	}
	if _, ok := f.req[role]; !ok {
		f.req[role] = r
	}
}

func (f *firsts) result(role string, r *fakeapi.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.results[role] = append(f.results[role], clitest.ToolResults(r)...)
}

func (f *firsts) get(t *testing.T, role string) *fakeapi.Request {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.req[role]
	if r == nil {
		t.Fatalf("the %s sent no request", role)
	}
	return r
}

// model names the agent model a scenario runs under: the seed's (the
// default) or Claude Code 2.1.332's, behind its flags.
type model struct {
	name  string
	flags []string
}

var (
	seedModel = model{name: "seed"}
	ccModel   = model{name: "cc2.1.332", flags: []string{"--flag", "background_agents=on", "--flag", "implicit_team=on"}}
)

// forkTag marks a fork's directive (internal/fork).
const forkTag = "<fork-boilerplate>"

// roleOf tells which role of the scenario sent r.
func roleOf(r *fakeapi.Request) string {
	first, last := r.FirstUserText(), r.LastUserText()
	switch {
	case strings.Contains(first, "role-lead") && strings.Contains(last, forkTag) && strings.Contains(last, "role-fork"):
		return roleFork
	case strings.Contains(first, "role-lead") && hasForkTag(r):
		return roleFork
	case strings.Contains(first, "role-lead"):
		return roleLead
	case strings.Contains(first, "role-sub"):
		return roleSubagent
	case strings.Contains(first, "role-bg"):
		return roleBackground
	case strings.Contains(first, "role-mate"):
		return roleTeammate
	}
	return ""
}

func hasForkTag(r *fakeapi.Request) bool {
	for _, m := range r.Messages {
		for _, b := range m.Content {
			if m.Role == "user" && b.Type == "text" && strings.Contains(b.Text, forkTag) {
				return true
			}
		}
	}
	return false
}

// leadCalls is what the scenario's lead does on its first turns: start one
// agent of each kind. Under the seed model a team is created first; a
// 2.1.332 lead has no TeamCreate and names its teammate instead.
func leadCalls(m model, turn int) []fakeapi.Block {
	sub := map[string]any{"description": "look around", "subagent_type": "general-purpose", "prompt": "role-sub: look around and report"}
	bg := map[string]any{"description": "look behind", "subagent_type": "general-purpose", "prompt": "role-bg: look behind and report", "run_in_background": true}
	fork := map[string]any{"description": "fork a worker", "subagent_type": "fork", "prompt": "role-fork: check one thing"}
	mate := map[string]any{"description": "join the team", "name": "alice", "prompt": "role-mate: help the team"}
	if m.name == seedModel.name {
		mate["team_name"] = "crew"
	} else {
		sub["run_in_background"] = false
	}
	switch {
	case turn == 0 && m.name == seedModel.name:
		return []fakeapi.Block{clitest.Use("TeamCreate", map[string]any{"team_name": "crew", "description": "the roles team"}),
			clitest.Use("Agent", sub), clitest.Use("Agent", bg), clitest.Use("Agent", fork)}
	case turn == 0:
		return []fakeapi.Block{clitest.Use("Agent", sub), clitest.Use("Agent", bg), clitest.Use("Agent", fork)}
	case turn == 1:
		return []fakeapi.Block{clitest.Use("Agent", mate)}
	}
	return nil
}

// runRoles runs a lead that starts a subagent, a background agent, a fork
// and a teammate, each of which calls the tools its script names (by role)
// on its first turn and then ends; it returns every role's first request
// and what the tools answered.
func runRoles(t *testing.T, m model, calls map[string][]fakeapi.Block, extra ...string) *firsts {
	t.Helper()
	f := &firsts{}
	policy := func(r *fakeapi.Request) fakeapi.Reply {
		role := roleOf(r)
		if role == "" {
			return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "roles: no rule for " + r.FirstUserText()}}
		}
		f.keep(role, r)
		turn := r.Turn()
		if role == roleFork {
			turn = forkTurn(r)
		}
		if role == roleLead {
			if blocks := leadCalls(m, turn); blocks != nil {
				return fakeapi.Reply{Content: blocks}
			}
			return fakeapi.TextReply("noted")
		}
		if turn == 0 && len(calls[role]) > 0 {
			return fakeapi.Reply{Content: calls[role]}
		}
		if turn == 1 && len(calls[role]) > 0 {
			f.result(role, r)
		}
		return fakeapi.TextReply(role + " done")
	}
	h := clitest.New(t, policy)
	format := "json"
	if slices.Contains(extra, "stream-json") {
		format, extra = "stream-json", slices.DeleteFunc(slices.Clone(extra), func(s string) bool { return s == "stream-json" })
	}
	args := append([]string{"-p", "role-lead: start one agent of each kind", "--output-format", format,
		"--teammate-mode", "in-process", "--flag", "fork_subagent=on"}, m.flags...)
	out, errOut, code := h.Run(append(args, extra...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	f.out = out
	return f
}

// forkTurn counts the fork's own assistant messages after its directive.
func forkTurn(r *fakeapi.Request) int {
	at := -1
	for i, m := range r.Messages {
		for _, b := range m.Content {
			if m.Role == "user" && b.Type == "text" && strings.Contains(b.Text, forkTag) {
				at = i
			}
		}
	}
	n := 0
	for _, m := range r.Messages[at+1:] {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

// toolNames lists the names of r's tools in order.
func toolNames(r *fakeapi.Request) []string {
	var out []string
	for _, tl := range r.Tools {
		out = append(out, tl.Name)
	}
	return out
}

// golden compares got with testdata/name, or writes it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to write it)", err)
	}
	if string(want) != string(got) {
		t.Fatalf("%s differs from what the model was sent (run with -update after checking the change):\n%s", path, lineDiff(string(want), string(got)))
	}
}

// lineDiff shows the first lines where want and got differ.
func lineDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < max(len(wl), len(gl)) && shown < 12; i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			fmt.Fprintf(&b, "line %d:\n- %s\n+ %s\n", i+1, w, g)
			shown++
		}
	}
	return b.String()
}

// stable replaces what differs from run to run (temporary directories,
// ids, dates) with placeholders.
var (
	agentIDs = regexp.MustCompile(`\ba[0-9a-f]{16}\b`)
	toolIDs  = regexp.MustCompile(`toolu_[A-Za-z0-9]+`)
	uuids    = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	dates    = regexp.MustCompile(`Today's date: \d{4}-\d{2}-\d{2}`)
	tmpDirs  = regexp.MustCompile(`/tmp/Test[A-Za-z0-9_.]+/\d+`)
	slugs    = regexp.MustCompile(`-tmp-Test[A-Za-z0-9_-]+-\d+-`)
	// implicit is the implicit team's name (session- and the session id's start).
	implicit = regexp.MustCompile(`\bsession-[0-9a-f]{8}\b`)
)

func stable(s string) string {
	s = tmpDirs.ReplaceAllString(s, "$$TMP")
	s = slugs.ReplaceAllString(s, "-$$TMP-")
	s = agentIDs.ReplaceAllString(s, "$$AGENT_ID")
	s = toolIDs.ReplaceAllString(s, "$$TOOL_USE_ID")
	s = uuids.ReplaceAllString(s, "$$UUID")
	s = implicit.ReplaceAllString(s, "session-$$SESSION")
	return dates.ReplaceAllString(s, "Today's date: $$DATE")
}

// pretty indents a JSON document with sorted keys.
func pretty(t *testing.T, raw []byte) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, '\n')
}
