package binary

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestVersionFlag: --version and -v print "<version> (Cohort; speaks
// Claude Code <release>)", shaped as Claude Code's "<version> (Claude
// Code)", naming cohort.ProtocolVersion, and run nothing.
func TestVersionFlag(t *testing.T) {
	t.Parallel()
	h := clitest.New(t, nil)
	for _, flag := range []string{"--version", "-v"} {
		out, errOut, code := h.RunBinary(flag)
		want := regexp.MustCompile(`^\S+ \(Cohort; speaks Claude Code ` + regexp.QuoteMeta(cohort.ProtocolVersion) + `\)\n$`)
		if code != 0 || !want.MatchString(out) {
			t.Fatalf("%s: exit %d, stdout %q, stderr %q", flag, code, out, errOut)
		}
	}
	if n := len(h.Srv.Requests()); n != 0 {
		t.Fatalf("--version sent %d requests", n)
	}
}

// TestDangerouslySkipPermissions: the flag is bypassPermissions, so a Bash
// call print mode would refuse runs; it conflicts with another mode.
func TestDangerouslySkipPermissions(t *testing.T) {
	t.Parallel()
	c := clitest.NewConv()
	h := clitest.New(t, c.Policy)
	c.On("make a file", clitest.Calls(clitest.Use("Bash", map[string]any{"command": "touch made.txt"})), clitest.Text("done"))
	out, errOut, code := h.RunBinary("-p", "make a file", "--output-format", "json")
	if r := h.Result(out); code != 0 || len(r.PermissionDenials) != 1 {
		t.Fatalf("without the flag: exit %d, %+v\n%s", code, r, errOut)
	}
	out, errOut, code = h.RunBinary("-p", "make a file", "--output-format", "json", "--dangerously-skip-permissions")
	if r := h.Result(out); code != 0 || len(r.PermissionDenials) != 0 {
		t.Fatalf("with the flag: exit %d, %+v\n%s", code, r, errOut)
	}
	if _, err := os.Stat(filepath.Join(h.Dir, "made.txt")); err != nil {
		t.Fatalf("the Bash call did not run: %v", err)
	}
	_, errOut, code = h.RunBinary("-p", "x", "--dangerously-skip-permissions", "--permission-mode", "plan")
	if code != 2 || !strings.Contains(errOut, "--permission-mode plan") {
		t.Fatalf("conflict: exit %d, %s", code, errOut)
	}
}

// TestToolsFlagIsAFilter: --tools decides which tools exist (the model is
// offered those only), without approving them; "" leaves none, "default"
// all, and an unknown name is an error.
func TestToolsFlagIsAFilter(t *testing.T) {
	t.Parallel()
	c := clitest.NewConv()
	h := clitest.New(t, c.Policy)
	c.On("list tools", clitest.Text("ok"))
	c.On("use bash", clitest.Calls(clitest.Use("Bash", map[string]any{"command": "touch x"})), clitest.Text("ok"))
	offered := func(args ...string) []string {
		t.Helper()
		before := len(h.Srv.Requests())
		out, errOut, code := h.RunBinary(append([]string{"-p", "list tools", "--output-format", "json"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, out, errOut)
		}
		var names []string
		for _, tl := range h.Srv.Requests()[before].Request.Tools {
			names = append(names, tl.Name)
		}
		return names
	}
	if diff := cmp.Diff([]string{"Glob", "Read"}, offered("--tools", "Read,Glob")); diff != "" {
		t.Errorf("--tools Read,Glob (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Bash", "Agent"}, offered("--tools", "Bash Task")); diff != "" {
		t.Errorf("--tools \"Bash Task\" (-want +got):\n%s", diff)
	}
	if got := offered("--tools", ""); len(got) != 0 {
		t.Errorf(`--tools "": offered %v`, got)
	}
	if all := offered("--tools", "default"); !slices.Contains(all, "Bash") || !slices.Contains(all, "Write") || !slices.Contains(all, "Agent") {
		t.Errorf("--tools default: offered %v", all)
	}
	out, _, code := h.RunBinary("-p", "use bash", "--output-format", "json", "--tools", "Bash")
	if r := h.Result(out); code != 0 || len(r.PermissionDenials) != 1 {
		t.Errorf("--tools Bash must not approve Bash: exit %d, denials %+v", code, r.PermissionDenials)
	}
	_, errOut, code := h.RunBinary("-p", "x", "--tools", "Read,Bsh")
	if code != 2 || !strings.Contains(errOut, `--tools: "Bsh" is not a tool`) {
		t.Errorf("unknown tool: exit %d, %s", code, errOut)
	}
}

// TestSettingSources: --setting-sources reads only the scopes it names;
// the project file's allow rule applies with project, not with user only.
func TestSettingSources(t *testing.T) {
	t.Parallel()
	c := clitest.NewConv()
	h := clitest.New(t, c.Policy)
	h.Write(".cohort/settings.json", `{"permissions": {"allow": ["Bash(touch:*)"]}}`)
	c.On("touch it", clitest.Calls(clitest.Use("Bash", map[string]any{"command": "touch t.txt"})), clitest.Text("ok"))
	denials := func(args ...string) int {
		t.Helper()
		out, errOut, code := h.RunBinary(append([]string{"-p", "touch it", "--output-format", "json"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s", args, code, errOut)
		}
		return len(h.Result(out).PermissionDenials)
	}
	if n := denials(); n != 0 {
		t.Errorf("all sources: %d denials, want the project rule to allow", n)
	}
	if n := denials("--setting-sources", "user,project"); n != 0 {
		t.Errorf("user,project: %d denials", n)
	}
	if n := denials("--setting-sources", "user,local"); n != 1 {
		t.Errorf("user,local: %d denials, want the project file unread", n)
	}
	_, errOut, code := h.RunBinary("-p", "x", "--setting-sources", "user,team")
	if code != 2 || !strings.Contains(errOut, `"team" is not one of user, project, local`) {
		t.Errorf("bad source: exit %d, %s", code, errOut)
	}
}

// TestMaxThinkingTokens: the budget reaches the API as the thinking
// parameter; one the API would refuse is a usage error.
func TestMaxThinkingTokens(t *testing.T) {
	t.Parallel()
	h := clitest.New(t, func(*fakeapi.Request) fakeapi.Reply { return fakeapi.TextReply("thought") })
	out, errOut, code := h.RunBinary("-p", "think", "--max-thinking-tokens", "2048")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	var th struct {
		Type   string `json:"type"`
		Budget int    `json:"budget_tokens"`
	}
	if err := json.Unmarshal(h.Srv.Requests()[0].Request.Thinking, &th); err != nil || th.Type != "enabled" || th.Budget != 2048 {
		t.Fatalf("thinking sent: %s (%v)", h.Srv.Requests()[0].Request.Thinking, err)
	}
	if _, _, code := h.RunBinary("-p", "no thinking"); code != 0 || h.Srv.Requests()[1].Request.Thinking != nil {
		t.Fatalf("without the flag thinking must be off: %s", h.Srv.Requests()[1].Request.Thinking)
	}
	_, errOut, code = h.RunBinary("-p", "x", "--max-thinking-tokens", "100")
	if code != 2 || !strings.Contains(errOut, "1024 to 31999") {
		t.Fatalf("too small: exit %d, %s", code, errOut)
	}
}

// TestMCPConfigFlags: broken JSON is a usage error; a configuration that
// declares none (what scripts pass with --strict-mcp-config to run without
// servers) is fine; a missing file is a usage error naming it.
func TestMCPConfigFlags(t *testing.T) {
	t.Parallel()
	h := clitest.New(t, func(*fakeapi.Request) fakeapi.Reply { return fakeapi.TextReply("ran") })
	out, errOut, code := h.RunBinary("-p", "x", "--mcp-config", `{"mcpServers": {`, "--output-format", "json")
	if code != 2 || !strings.Contains(errOut, "--mcp-config") || !strings.Contains(errOut, "invalid JSON") {
		t.Fatalf("broken JSON: exit %d, %s", code, errOut)
	}
	if r := h.Result(out); !r.IsError {
		t.Fatalf("json result: %+v", r)
	}
	empty := h.Write("none.json", `{"mcpServers": {}}`)
	out, errOut, code = h.RunBinary("-p", "x", "--mcp-config", empty, "--strict-mcp-config")
	if code != 0 || strings.TrimSpace(out) != "ran" {
		t.Fatalf("no servers: exit %d, %s %s", code, out, errOut)
	}
	_, errOut, code = h.RunBinary("-p", "x", "--mcp-config", "missing.json")
	if code != 2 || !strings.Contains(errOut, "missing.json") {
		t.Fatalf("missing file: exit %d, %s", code, errOut)
	}
}

// TestDebugFlag: --debug logs every category on stderr, --debug=LIST only
// those, !NAME all but one; stdout is unchanged.
func TestDebugFlag(t *testing.T) {
	t.Parallel()
	c := clitest.NewConv()
	h := clitest.New(t, c.Policy)
	c.On("debug me", clitest.Calls(clitest.Use("Glob", map[string]any{"pattern": "*.go"})), clitest.Text("debugged"))
	h.Write(".cohort/settings.json", `{"hooks": {"PostToolUse": [{"matcher": "Glob", "hooks": [{"type": "command", "command": "true"}]}]}}`)
	run := func(args ...string) string {
		t.Helper()
		out, errOut, code := h.RunBinary(append([]string{"-p", "debug me"}, args...)...)
		if code != 0 || strings.TrimSpace(out) != "debugged" {
			t.Fatalf("%v: exit %d, stdout %q\n%s", args, code, out, errOut)
		}
		return errOut
	}
	all := run("--debug")
	for _, want := range []string{"[debug api] session:", "[debug api] lead: response", "[debug tools] lead: call Glob", "[debug tools] lead: result"} {
		if !strings.Contains(all, want) {
			t.Errorf("--debug lacks %q:\n%s", want, all)
		}
	}
	if !strings.Contains(all, "[hook] PostToolUse true exit=0") {
		t.Errorf("--debug lacks the hooks run:\n%s", all)
	}
	if hooks := run("--debug=hooks"); !strings.Contains(hooks, "[hook] PostToolUse") || strings.Contains(hooks, "[debug") {
		t.Errorf("--debug=hooks:\n%s", hooks)
	}
	if only := run("--debug=tools"); strings.Contains(only, "[debug api]") || strings.Contains(only, "[hook]") || !strings.Contains(only, "[debug tools]") {
		t.Errorf("--debug=tools:\n%s", only)
	}
	if but := run("--debug=!tools"); strings.Contains(but, "[debug tools]") || !strings.Contains(but, "[debug api]") {
		t.Errorf("--debug=!tools:\n%s", but)
	}
	if quiet := run(); strings.Contains(quiet, "[debug") {
		t.Errorf("no --debug:\n%s", quiet)
	}
	if _, errOut, code := h.RunBinary("-p", "x", "--debug=apis"); code != 2 || !strings.Contains(errOut, `"apis" is not a category`) {
		t.Errorf("bad category: exit %d, %s", code, errOut)
	}
}

// TestFallbackModel: when the model does not exist (404) or stays
// overloaded (529 through the retries), the request is sent again on the
// fallback model, and the rest of the session goes there directly.
func TestFallbackModel(t *testing.T) {
	t.Parallel()
	for _, fault := range []fakeapi.FaultKind{fakeapi.NotFound, fakeapi.Overloaded} {
		t.Run(string(fault), func(t *testing.T) {
			t.Parallel()
			const primary, fallback = "claude-primary-test", "claude-fallback-test"
			h := clitest.New(t, func(r *fakeapi.Request) fakeapi.Reply {
				if r.Model == primary {
					return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fault, Message: "model busy or gone"}}
				}
				if r.Turn() == 0 {
					return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Glob", map[string]any{"pattern": "*"})}}
				}
				return fakeapi.TextReply("answered by " + r.Model)
			})
			h.Vars["COHORT_API_RETRY_MAX"] = "1s" // the 529 retries end soon
			out, errOut, code := h.RunBinary("-p", "fall back", "--output-format", "json", "--model", primary, "--fallback-model", fallback)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
			}
			if r := h.Result(out); r.Result != "answered by "+fallback || r.ModelUsage[fallback] == nil {
				t.Fatalf("result = %+v", r)
			}
			if !strings.Contains(errOut, "using the fallback model "+fallback) {
				t.Fatalf("stderr does not say it fell back:\n%s", errOut)
			}
			var onPrimary, turns int
			for _, rec := range h.Srv.Requests() {
				if rec.Request.Model == primary {
					onPrimary++
				} else {
					turns++
				}
			}
			if turns != 2 || (fault == fakeapi.NotFound && onPrimary != 1) {
				t.Fatalf("%d requests on the primary, %d on the fallback: the second turn must go to the fallback directly", onPrimary, turns)
			}
			if _, errOut, code := h.RunBinary("-p", "x", "--model", primary, "--fallback-model", primary); code != 2 || !strings.Contains(errOut, "same as --model") {
				t.Fatalf("same model: exit %d, %s", code, errOut)
			}
		})
	}
}

// TestSessionsCommand: cohort sessions lists the project's sessions, the
// newest first, with the first prompt and the cost.
func TestSessionsCommand(t *testing.T) {
	t.Parallel()
	h := clitest.New(t, func(*fakeapi.Request) fakeapi.Reply { return fakeapi.TextReply("noted") })
	if out, _, code := h.RunBinary("sessions"); code != 0 || !strings.Contains(out, "no sessions") {
		t.Fatalf("empty project: exit %d, %q", code, out)
	}
	var ids []string
	for _, p := range []string{"first job: fix the build", "second job: write docs"} {
		out, errOut, code := h.RunBinary("-p", p, "--output-format", "json")
		if code != 0 {
			t.Fatalf("exit %d\n%s", code, errOut)
		}
		ids = append(ids, h.Result(out).SessionID)
	}
	out, errOut, code := h.RunBinary("sessions", "--output-format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var list []struct {
		ID          string  `json:"session_id"`
		FirstPrompt string  `json:"first_prompt"`
		Cost        float64 `json:"total_cost_usd"`
		Started     string  `json:"started"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(list) != 2 || list[0].ID != ids[1] || list[1].ID != ids[0] {
		t.Fatalf("sessions = %+v, want %v newest first", list, ids)
	}
	if list[0].FirstPrompt != "second job: write docs" || list[1].FirstPrompt != "first job: fix the build" || list[0].Cost <= 0 || list[0].Started == "" {
		t.Fatalf("sessions = %+v", list)
	}
	text, _, _ := h.RunBinary("sessions")
	if lines := strings.Split(strings.TrimSpace(text), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[1], ids[1]) || !strings.Contains(lines[2], "first job") {
		t.Fatalf("text listing:\n%s", text)
	}
}
