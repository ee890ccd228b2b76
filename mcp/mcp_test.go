package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/cohort-dev/cohort/internal/mcptest"
	"github.com/cohort-dev/cohort/settings"
	"github.com/cohort-dev/cohort/tool"
)

var serverBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "mcptest")
	if err != nil {
		panic(err)
	}
	if serverBin, err = mcptest.Build(dir); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goroutine leak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// warnings collects Options.Warn reports.
type warnings struct {
	mu   sync.Mutex
	msgs []string
}

func (w *warnings) add(m string) { w.mu.Lock(); w.msgs = append(w.msgs, m); w.mu.Unlock() }
func (w *warnings) all() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.msgs, "\n")
}

func start(t *testing.T, spec Spec, o Options) (*Server, *warnings) {
	t.Helper()
	w := &warnings{}
	o.Warn = w.add
	s := Start(t.Context(), spec, o)
	t.Cleanup(s.Close)
	return s, w
}

func call(t *testing.T, s *Server, name, input string) tool.Result {
	t.Helper()
	for _, tl := range s.Tools() {
		if tl.Def().Name == name {
			res, err := tl.Run(t.Context(), &tool.Env{}, json.RawMessage(input))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return res
		}
	}
	t.Fatalf("no tool %s in %v", name, s.Status().Tools)
	return tool.Result{}
}

func stdioSpec(args ...string) Spec {
	return Spec{Name: "test", Type: TypeStdio, Command: serverBin, Args: args, Source: "test"}
}

// TestStdioServer: a go-sdk server process on stdio; its tools are listed
// as mcp__test__…, the one with a broken schema skipped with a warning
// naming it, and a call reaches the server.
func TestStdioServer(t *testing.T) {
	s, w := start(t, stdioSpec(), Options{})
	st := s.Status()
	want := []string{"mcp__test__echo", "mcp__test__pid", "mcp__test__crash", "mcp__test__sleep"}
	if st.State != StateConnected || !cmp.Equal(sortedCopy(st.Tools), sortedCopy(want)) {
		t.Fatalf("status = %+v; want connected with %v", st, want)
	}
	if !strings.Contains(w.all(), `tool "bad_schema" skipped`) || !strings.Contains(w.all(), "properties.x.type") {
		t.Errorf("warnings = %q; want bad_schema skipped with where its schema is wrong", w.all())
	}
	if res := call(t, s, "mcp__test__echo", `{"text":"hi"}`); res.IsError || res.TextOf() != "echo: hi" {
		t.Errorf("echo = %+v", res)
	}
}

func sortedCopy(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }

// TestHTTPServer: the same server over streamable HTTP, with the
// configured header sent; without it the server refuses and the server is
// failed with the reason.
func TestHTTPServer(t *testing.T) {
	hs := httptest.NewServer(mcptest.Handler("Authorization", "Bearer k"))
	defer hs.Close()
	s, _ := start(t, Spec{Name: "web", Type: TypeHTTP, URL: hs.URL, Headers: map[string]string{"Authorization": "Bearer k"}}, Options{})
	if res := call(t, s, "mcp__web__echo", `{"text":"over http"}`); res.IsError || res.TextOf() != "echo: over http" {
		t.Errorf("echo = %+v", res)
	}
	bad, _ := start(t, Spec{Name: "web", Type: TypeHTTP, URL: hs.URL}, Options{})
	if st := bad.Status(); st.State != StateFailed || !strings.Contains(st.Error, "Unauthorized") {
		t.Errorf("without the header: %+v; want failed, Unauthorized", st)
	}
}

// TestCrashRestartsOnce: a server that exits mid-call answers that call
// with an error saying so, is reported and restarted (a new process); the
// second exit leaves it failed and its tools say why.
func TestCrashRestartsOnce(t *testing.T) {
	s, w := start(t, stdioSpec(), Options{})
	first := call(t, s, "mcp__test__pid", `{}`).TextOf()
	res := call(t, s, "mcp__test__crash", `{}`)
	if !res.IsError || !strings.Contains(res.TextOf(), "exited during the call (exit code 3)") {
		t.Fatalf("crash = %+v", res)
	}
	second := call(t, s, "mcp__test__pid", `{}`)
	if second.IsError || second.TextOf() == first {
		t.Fatalf("after the restart pid = %+v (first %s); want a new process", second, first)
	}
	if !strings.Contains(w.all(), `MCP server "test" exited (exit code 3); restarting it once`) {
		t.Errorf("warnings = %q", w.all())
	}
	call(t, s, "mcp__test__crash", `{}`)
	res = call(t, s, "mcp__test__echo", `{"text":"x"}`)
	if !res.IsError || !strings.Contains(res.TextOf(), "exited again") {
		t.Errorf("echo after the second crash = %+v", res)
	}
	if st := s.Status(); st.State != StateFailed {
		t.Errorf("state = %s; want failed", st.State)
	}
}

// TestSilentServerTimesOut: a server that never answers initialize fails
// within the start timeout with a message that says what to do, and its
// process is gone.
func TestSilentServerTimesOut(t *testing.T) {
	begin := time.Now()
	s, _ := start(t, stdioSpec("-silent"), Options{StartTimeout: 300 * time.Millisecond})
	st := s.Status()
	if st.State != StateFailed || !strings.Contains(st.Error, `MCP server "test" did not answer initialize within 300ms`) || !strings.Contains(st.Error, "MCP_TIMEOUT") {
		t.Fatalf("status = %+v", st)
	}
	if len(s.Tools()) != 0 {
		t.Errorf("a failed server has tools: %v", s.Tools())
	}
	if d := time.Since(begin); d > 10*time.Second {
		t.Errorf("Start took %s", d)
	}
}

// TestCloseDuringCall: Close while a call runs ends the call and the
// process; nothing is left running (goleak in TestMain).
func TestCloseDuringCall(t *testing.T) {
	s := Start(t.Context(), stdioSpec(), Options{})
	var sleep tool.Tool
	for _, tl := range s.Tools() {
		if tl.Def().Name == "mcp__test__sleep" {
			sleep = tl
		}
	}
	done := make(chan tool.Result, 1)
	started := make(chan struct{})
	go func() {
		close(started)
		res, _ := sleep.Run(t.Context(), &tool.Env{}, json.RawMessage(`{}`))
		done <- res
	}()
	<-started
	s.Close()
	select {
	case res := <-done:
		if !res.IsError {
			t.Errorf("the call = %+v; want an error", res)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the call did not end after Close")
	}
}

// TestResources: ListMcpResourcesTool and ReadMcpResourceTool reach the
// server's resources.
func TestResources(t *testing.T) {
	set := StartAll(t.Context(), []Spec{stdioSpec()}, Options{})
	defer set.Close()
	tools := set.Tools(true)
	byName := map[string]tool.Tool{}
	for _, tl := range tools {
		byName[tl.Def().Name] = tl
	}
	list, err := byName[ListResourcesName].Run(t.Context(), &tool.Env{}, json.RawMessage(`{}`))
	if err != nil || !strings.Contains(list.TextOf(), `"uri": "test://greeting"`) || !strings.Contains(list.TextOf(), `"server": "test"`) {
		t.Fatalf("list = %+v, %v", list, err)
	}
	read, err := byName[ReadResourceName].Run(t.Context(), &tool.Env{}, json.RawMessage(`{"server":"test","uri":"test://greeting"}`))
	if err != nil || !strings.Contains(read.TextOf(), "hello from the test server") {
		t.Fatalf("read = %+v, %v", read, err)
	}
	miss, _ := byName[ReadResourceName].Run(t.Context(), &tool.Env{}, json.RawMessage(`{"server":"nope","uri":"x"}`))
	if !miss.IsError || !strings.Contains(miss.TextOf(), `no MCP server is called "nope"`) {
		t.Errorf("unknown server = %+v", miss)
	}
}

// TestParseBadInput: each broken server names its file and line and what
// to do; the good ones still load.
func TestParseBadInput(t *testing.T) {
	doc := `{"mcpServers": {
  "ok": {"command": "x", "args": ["${HOME_DIR:-/h}/a"]},
  "bad name": {"command": "x"},
  "old": {"type": "sse", "url": "http://x"},
  "typo": {"comand": "x"},
  "web": {"url": "http://h/${TOKEN}"}
}}`
	specs, errs := Parse("/p/.mcp.json", ScopeProject, []byte(doc), func(k string) string {
		return map[string]string{"TOKEN": "t0k"}[k]
	})
	var got []string
	for _, s := range specs {
		got = append(got, s.Name+" "+s.Type+" "+s.Source+" "+strings.Join(s.Args, ",")+s.URL)
	}
	want := []string{"ok stdio /p/.mcp.json:2 /h/a", "web http /p/.mcp.json:6 http://h/t0k"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("specs (-want +got):\n%s", diff)
	}
	all := fmt.Sprint(errs)
	for _, w := range []string{`/p/.mcp.json:3: MCP server "bad name": the name may hold only`, `/p/.mcp.json:4: MCP server "old": the deprecated SSE`, `/p/.mcp.json:5: MCP server "typo": json: unknown field "comand"`} {
		if !strings.Contains(all, w) {
			t.Errorf("errors %q lack %q", all, w)
		}
	}
}

// TestApproval: a project server is disabled until approved in the local
// settings; approvals in the repository's own settings do not count;
// --mcp-config servers are approved; --strict-mcp-config keeps only them.
func TestApproval(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".mcp.json", `{"mcpServers": {"proj": {"command": "p"}}}`)
	write(".cohort/settings.json", `{"enableAllProjectMcpServers": true, "enabledMcpjsonServers": ["proj"]}`)
	load := func(strict bool) []Spec {
		env, _ := settings.NewEnv(func(k string) string { return map[string]string{"HOME": dir + "/home", "COHORT_HOME": dir + "/ch"}[k] }, dir)
		specs, errs := Load(LoadConfig{Settings: settings.Load(env), ProjectDirs: []string{dir}, Dir: dir, Strict: strict,
			CLI: []string{`{"mcpServers": {"cli": {"command": "c"}}}`}})
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		return specs
	}
	specs := load(false)
	if len(specs) != 2 || specs[0].Name != "cli" || specs[0].Disabled || specs[1].Name != "proj" || !specs[1].Disabled ||
		!strings.Contains(specs[1].Reason, "cohort mcp approve proj") {
		t.Fatalf("before approval: %+v", specs)
	}
	path, err := Approve(t.Context(), dir, specs[1:])
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); !strings.Contains(string(data), `"enabledMcpjsonServers": [`) || !strings.Contains(string(data), `"proj": "sha256:`) {
		t.Errorf("%s = %s", path, data)
	}
	if specs := load(false); specs[1].Disabled {
		t.Errorf("after approval: %+v", specs[1])
	}
	if specs := load(true); len(specs) != 1 || specs[0].Name != "cli" {
		t.Errorf("strict: %+v", specs)
	}
	// Issue 36, escape 7: an approval is for what the server runs. A
	// rewritten definition (the command, an argument, the environment)
	// is not started until approved again.
	for _, changed := range []string{`{"command": "sh", "args": ["-c", "pwned"]}`, `{"command": "p", "args": ["x"]}`, `{"command": "p", "env": {"LD_PRELOAD": "x"}}`} {
		write(".mcp.json", `{"mcpServers": {"proj": `+changed+`}}`)
		if specs := load(false); !specs[1].Disabled || !strings.Contains(specs[1].Reason, "definition changed") || !strings.Contains(specs[1].Reason, "cohort mcp approve proj") {
			t.Errorf("%s after approval of another definition: %+v", changed, specs[1])
		}
	}
	// Claude Code's approval by name says nothing of what runs.
	write(".mcp.json", `{"mcpServers": {"other": {"command": "o"}}}`)
	write(".cohort/settings.local.json", `{"enabledMcpjsonServers": ["other"]}`)
	if specs := load(false); !specs[1].Disabled || !strings.Contains(specs[1].Reason, "by name only") {
		t.Errorf("approved by name only: %+v", specs[1])
	}
}

// TestBrokenMCPJSON: an .mcp.json that does not parse is reported with its
// file, line and what to do, and none of its servers starts; the other
// sources' servers still load.
func TestBrokenMCPJSON(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte("{\n  \"mcpServers\": {\"x\": {\"command\": \"touch pwned\",}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	specs, errs := Load(LoadConfig{ProjectDirs: []string{dir}, Dir: dir, CLI: []string{`{"mcpServers": {"cli": {"command": "c"}}}`}})
	if len(specs) != 1 || specs[0].Name != "cli" {
		t.Errorf("specs = %+v, want only the --mcp-config server", specs)
	}
	all := fmt.Sprint(errs)
	if !strings.Contains(all, filepath.Join(dir, ".mcp.json")+":2") || !strings.Contains(all, "none of the MCP servers it names is started") {
		t.Errorf("errors %q do not name the file and line and say nothing starts", all)
	}
}

// TestSetClosesAll: Close on a Set with a running and a failed server
// returns with every process gone.
func TestSetClosesAll(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	set := StartAll(ctx, []Spec{stdioSpec(), {Name: "gone", Type: TypeStdio, Command: filepath.Join(t.TempDir(), "missing")}}, Options{})
	sts := set.Statuses()
	if sts[0].State != StateConnected || sts[1].State != StateFailed || !strings.Contains(sts[1].Error, "cannot start") {
		t.Errorf("statuses = %+v", sts)
	}
	set.Close()
}
