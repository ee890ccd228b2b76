package roles

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// orchestration are the tools that start agents or work a team: only the
// lead has them all; a teammate has the messaging and task-list ones.
var orchestration = []string{"Agent", "SendMessage", "ListAgents", "TeamCreate", "TeamDelete", "TaskCreate", "TaskGet", "TaskUpdate", "TaskList"}

// TestToolSetsByRole: each role is offered its own set (golden), as
// Claude Code has them: subagents, sync or background, get no Agent and no
// team or task-list tools; a fork keeps its parent's tool array byte for
// byte; a teammate gets the team-member set.
func TestToolSetsByRole(t *testing.T) {
	t.Parallel()
	for _, m := range []model{seedModel, ccModel} {
		t.Run(m.name, func(t *testing.T) {
			t.Parallel()
			f := runRoles(t, m, nil)
			var b strings.Builder
			for _, role := range []string{roleLead, roleSubagent, roleBackground, roleFork, roleTeammate} {
				fmt.Fprintf(&b, "%s: %s\n", role, strings.Join(toolNames(f.get(t, role)), ", "))
			}
			fmt.Fprintf(&b, "%s: %s\n", roleDream, strings.Join(toolNames(runDream(t)), ", "))
			golden(t, "tools_"+m.name+".golden", []byte(b.String()))

			for _, role := range []string{roleSubagent, roleBackground} {
				if got := intersect(toolNames(f.get(t, role)), orchestration); len(got) > 0 {
					t.Errorf("a %s is offered %v, which only the lead and teammates get", role, got)
				}
			}
			mate := toolNames(f.get(t, roleTeammate))
			for _, name := range []string{"SendMessage", "TaskCreate", "TaskGet", "TaskUpdate", "TaskList"} {
				if !slices.Contains(mate, name) {
					t.Errorf("a teammate lacks %s", name)
				}
			}
			if got := intersect(mate, []string{"Agent", "TeamCreate", "TeamDelete"}); len(got) > 0 {
				t.Errorf("a teammate is offered %v", got)
			}
			// One implicit team: nobody makes or deletes one.
			if lead := toolNames(f.get(t, roleLead)); m.name == ccModel.name && len(intersect(lead, []string{"TeamCreate", "TeamDelete"})) > 0 {
				t.Errorf("under %s the lead is offered TeamCreate or TeamDelete: %v", m.name, lead)
			}
			// A teammate's array starts with the lead's, byte for byte, up to
			// where their pools part (the lead has its team's task list on
			// demand, a teammate has it at a glance: it is its work), and the
			// lead's first request puts a breakpoint there: the teammates
			// read that cache entry rather than write their own.
			leadDefs, mateDefs := toolDefs(t, f.get(t, roleLead)), toolDefs(t, f.get(t, roleTeammate))
			shared := 0
			for shared < min(len(leadDefs), len(mateDefs)) && bytes.Equal(bytes.ReplaceAll(leadDefs[shared], []byte(cacheMarker), nil), mateDefs[shared]) {
				shared++
			}
			if got := toolNames(f.get(t, roleTeammate)); shared == 0 || got[shared-1] != "SendMessage" {
				t.Errorf("a teammate shares the lead's first %d tools (%v); want up to SendMessage", shared, got[:shared])
			} else if !bytes.Contains(leadDefs[shared-1], []byte(cacheMarker)) {
				t.Errorf("the lead's request has no breakpoint after the tools a teammate shares (%s)", leadDefs[shared-1])
			}
			// A subagent's and a background agent's loaded tools are the
			// start of the lead's, with a breakpoint of the lead's at their
			// end too.
			for _, role := range []string{roleSubagent, roleBackground} {
				defs := toolDefs(t, f.get(t, role))
				for i, d := range defs {
					if !bytes.Equal(bytes.ReplaceAll(leadDefs[i], []byte(cacheMarker), nil), bytes.ReplaceAll(d, []byte(cacheMarker), nil)) {
						t.Errorf("tool %d of the %s's array differs from the lead's:\n%s\n%s", i, role, d, leadDefs[i])
					}
				}
				if len(defs) == 0 || !bytes.Contains(leadDefs[len(defs)-1], []byte(cacheMarker)) {
					t.Errorf("the lead's request has no breakpoint after the %d tools a %s shares", len(defs), role)
				}
			}
			// Every role's on-demand tools follow its ToolSearch, deferred and
			// without a breakpoint (a deferred tool is not in the prompt).
			for _, role := range []string{roleLead, roleSubagent, roleBackground, roleTeammate} {
				r := f.get(t, role)
				search := slices.Index(toolNames(r), "ToolSearch")
				if search < 0 {
					t.Errorf("the %s has no ToolSearch", role)
					continue
				}
				for i, tl := range r.Tools {
					if tl.DeferLoading != (i > search) || tl.DeferLoading && tl.CacheControl != nil {
						t.Errorf("the %s's tool %d (%s): deferred %v, marker %s; want deferred exactly after ToolSearch, never marked", role, i, tl.Name, tl.DeferLoading, tl.CacheControl)
					}
				}
			}
			// The breakpoints differ (the fork's requests place their own);
			// the definitions are the same bytes.
			if lead, fork := rawTools(t, f.get(t, roleLead)), rawTools(t, f.get(t, roleFork)); !bytes.Equal(lead, fork) {
				t.Errorf("the fork's tool array differs from its parent's:\n%s", lineDiff(string(lead), string(fork)))
			}
		})
	}
}

// TestCallingAToolTheRoleLacks: a subagent or a background agent that
// calls Agent or a team tool, a fork that calls them (they are in its
// array, the parent's, but refused at run time) and a teammate that calls
// TeamCreate each get an error naming the tools they do have.
func TestCallingAToolTheRoleLacks(t *testing.T) {
	t.Parallel()
	nested := map[string]any{"description": "nest", "prompt": "role-nested: should never start"}
	calls := map[string][]fakeapi.Block{
		roleSubagent:   {clitest.Use("Agent", nested), clitest.Use("TeamCreate", map[string]any{"team_name": "mine"})},
		roleBackground: {clitest.Use("Agent", nested), clitest.Use("TaskList", map[string]any{})},
		roleFork:       {clitest.Use("Agent", nested), clitest.Use("SendMessage", map[string]any{"to": "team-lead", "message": "hi"})},
		roleTeammate:   {clitest.Use("TeamCreate", map[string]any{"team_name": "mine"})},
	}
	f := runRoles(t, seedModel, calls)
	for _, role := range []string{roleSubagent, roleBackground, roleFork, roleTeammate} {
		results := f.results[role]
		if len(results) != len(calls[role]) {
			t.Errorf("%s: %d results for %d calls: %q", role, len(results), len(calls[role]), results)
			continue
		}
		has := usable(toolNames(f.get(t, role)), role)
		for i, res := range results {
			name := calls[role][i].Name
			if !strings.HasPrefix(res, "ERROR:") || !strings.Contains(res, name) {
				t.Errorf("%s calling %s got %q, want an error naming %s", role, name, res, name)
				continue
			}
			_, list, ok := strings.Cut(res, "Your tools: ")
			if !ok {
				t.Errorf("%s calling %s got %q: it does not name the tools the %s has", role, name, res, role)
				continue
			}
			list = strings.TrimSuffix(strings.TrimSpace(list), ".")
			if got := strings.Split(list, ", "); !slices.Equal(sortedCopy(got), sortedCopy(has)) {
				t.Errorf("%s calling %s was told its tools are %v, want %v", role, name, got, has)
			}
		}
	}
}

// usable is what a role can call: its offered tools, less (for a fork) the
// orchestration tools and the lead's own, which refuse inside it.
func usable(offered []string, role string) []string {
	if role != roleFork {
		return offered
	}
	leadOnly := append([]string{"TaskOutput", "TaskStop", "EnterPlanMode", "ExitPlanMode", "AskUserQuestion", "Workflow"}, orchestration...)
	return slices.DeleteFunc(slices.Clone(offered), func(n string) bool { return slices.Contains(leadOnly, n) })
}

func intersect(a, b []string) []string {
	var out []string
	for _, n := range a {
		if slices.Contains(b, n) {
			out = append(out, n)
		}
	}
	return out
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

// cacheMarker is a breakpoint as sent.
const cacheMarker = `,"cache_control":{"type":"ephemeral"}`

// toolDefs are the tool definitions of r's body, as sent, before its
// ToolSearch: what comes after (the search, listing the role's own tools
// on demand, and those) is no shared prefix. The last one's own breakpoint
// (every role's) is taken out.
func toolDefs(t *testing.T, r *fakeapi.Request) [][]byte {
	t.Helper()
	var body struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(r.Raw, &body); err != nil {
		t.Fatal(err)
	}
	names := toolNames(r)
	if i := slices.Index(names, "ToolSearch"); i >= 0 {
		body.Tools = body.Tools[:i]
	}
	out := make([][]byte, len(body.Tools))
	for i, d := range body.Tools {
		out[i] = d
		if i == len(body.Tools)-1 {
			out[i] = bytes.ReplaceAll(d, []byte(cacheMarker), nil)
		}
	}
	return out
}

// rawTools is the tools array of r's body, as sent.
func rawTools(t *testing.T, r *fakeapi.Request) []byte {
	t.Helper()
	var body struct {
		Tools json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(r.Raw, &body); err != nil {
		t.Fatal(err)
	}
	return bytes.ReplaceAll(body.Tools, []byte(cacheMarker), nil)
}

// runDream runs `cohort dream` on a fake that ends at once and returns the
// dream agent's first request.
func runDream(t *testing.T) *fakeapi.Request {
	t.Helper()
	f := &firsts{}
	h := clitest.New(t, func(r *fakeapi.Request) fakeapi.Reply {
		f.keep(roleDream, r)
		return fakeapi.TextReply("Nothing to consolidate.")
	})
	if out, errOut, code := h.Run("dream"); code != 0 {
		t.Fatalf("cohort dream: exit %d\n%s\n%s", code, out, errOut)
	}
	return f.get(t, roleDream)
}
