package agentsdk

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/internal/npmtest"
	"github.com/cohort-dev/cohort/internal/testbin"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// The pinned npm packages: the SDK the applications use, and Claude Code,
// the executable the SDK was written for.
const (
	sdkPackage        = "@anthropic-ai/claude-agent-sdk@0.3.337"
	claudeCodePackage = "@anthropic-ai/claude-code@" + cohort.ProtocolVersion
)

// executable is one program the SDK drives: Cohort, or Claude Code.
type executable struct {
	name string
	path string
	// agentTool is the name the executable offers its subagent tool under
	// (Claude Code still lists it as Task; Cohort calls it Agent and
	// reads Task as the same tool).
	agentTool string
}

func executables(t *testing.T) (string, []executable) {
	modules := npmtest.Install(t, sdkPackage, claudeCodePackage)
	return modules, []executable{
		{name: "cohort", path: cohortBinary(t), agentTool: "Agent"},
		{name: "claude-code", path: claudeCodeBinary(t, modules), agentTool: "Task"},
	}
}

// claudeCodeBinary finds the native claude executable npm installed.
func claudeCodeBinary(t *testing.T, modules string) string {
	t.Helper()
	nm := filepath.Join(modules, "node_modules", "@anthropic-ai")
	cands := []string{filepath.Join(nm, "claude-code", "bin", "claude.exe")}
	more, _ := filepath.Glob(filepath.Join(nm, "claude-code-*", "claude"))
	for _, p := range append(cands, more...) {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Size() > 1<<20 {
			return p
		}
	}
	t.Fatalf("no claude executable under %s (looked for %v)", nm, append(cands, more...))
	return ""
}

// observation is one line the driver printed.
type observation struct {
	Kind    string          `json:"kind"`
	Message json.RawMessage `json:"message"`
	Tool    string          `json:"tool"`
	Input   map[string]any  `json:"input"`
	AgentID *string         `json:"agentID"`
	Command *string         `json:"command"`
	Event   string          `json:"event"`
	// Value is a control request's answer, Error its failure (hosted.mjs).
	Value json.RawMessage `json:"value"`
	Error string          `json:"error"`
}

// sdkMessage is the part of an SDK message the checks read.
type sdkMessage struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	Result    string `json:"result"`
	IsError   bool   `json:"is_error"`
	SessionID string `json:"session_id"`
	Tools     []string
}

// run is one scenario's outcome.
type run struct {
	obs      []observation
	results  []sdkMessage
	inits    []sdkMessage
	requests []fakeapi.Recorded
	dir      string
	stderr   string
}

func (r *run) calls(tool string) []observation {
	var out []observation
	for _, o := range r.obs {
		if o.Kind == "can_use_tool" && o.Tool == tool {
			out = append(out, o)
		}
	}
	return out
}

func (r *run) kind(k string) []observation {
	var out []observation
	for _, o := range r.obs {
		if o.Kind == k {
			out = append(out, o)
		}
	}
	return out
}

// modelSaw reports whether some request to the model carried text in a
// tool result.
func (r *run) modelSaw(text string) bool {
	for _, rec := range r.requests {
		if rec.Request != nil && strings.Contains(rec.Request.LastToolResultText(), text) {
			return true
		}
	}
	return false
}

// toolOffered reports whether the request that answers the user message
// holding text offers the tool named name.
func (r *run) toolOffered(text, name string) bool {
	for _, rec := range r.requests {
		if rec.Request == nil || !strings.Contains(rec.Request.LastUserText(), text) {
			continue
		}
		for _, tl := range rec.Request.Tools {
			if tl.Name == name {
				return true
			}
		}
	}
	return false
}

func (r *run) exists(name string) bool {
	_, err := os.Stat(filepath.Join(r.dir, name))
	return err == nil
}

func (r *run) dump() string {
	var b strings.Builder
	for _, o := range r.obs {
		line, _ := json.Marshal(o)
		b.WriteString(clip(string(line), 400) + "\n")
	}
	return b.String() + "stderr:\n" + clip(r.stderr, 4000)
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// record, when set, rewrites internal/sdkproto/testdata: each scenario's
// exchange between the SDK and Cohort, line by line, for the Node-free
// protocol test (go test ./internal/agentsdk -run TestAgentSDKDrivesTheCLI/cohort -sdk.record).
var record = flag.Bool("sdk.record", false, "record the SDK's exchanges with cohort into ../sdkproto/testdata")

// drive runs one scenario of driver.mjs against exe.
func drive(t *testing.T, modules string, exe executable, scenario string) *run {
	t.Helper()
	dir := t.TempDir()
	// Short: the session socket's path must fit in a Unix socket address.
	home, err := os.MkdirTemp("", "csdk")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	srv := fakeapi.New(fakeapi.Config{Policy: Policy(exe.agentTool, dir)})
	defer srv.Close()
	// The driver imports the SDK from node_modules next to it.
	work := t.TempDir()
	for _, name := range []string{"driver.mjs", "record.mjs", "hosted.mjs"} {
		src, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(work, name), src, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(modules, "node_modules"), filepath.Join(work, "node_modules")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npmtest.Node(t), filepath.Join(work, "driver.mjs"), scenario)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "COHORT_HOME=" + filepath.Join(home, ".cohort"),
		"TMPDIR=" + os.TempDir(), "ANTHROPIC_BASE_URL=" + srv.URL, "ANTHROPIC_API_KEY=sk-test",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1", "COHORT_NOTIFY_COALESCE=0",
		"GORACE=" + testbin.RaceOptions(),
		"COHORT_SDK_EXE=" + exe.path, "COHORT_SDK_CWD=" + dir}
	recording := filepath.Join(work, "exchange.jsonl")
	if *record && exe.name == "cohort" {
		cmd.Env = append(cmd.Env, "COHORT_SDK_EXE="+filepath.Join(work, "record.mjs"),
			"COHORT_SDK_RECORD_EXE="+exe.path, "COHORT_SDK_RECORD_FILE="+recording)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 10 * time.Second
	runErr := cmd.Run()
	r := &run{dir: dir, stderr: stderr.String(), requests: srv.Requests()}
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var o observation
		if err := json.Unmarshal(sc.Bytes(), &o); err != nil {
			t.Fatalf("driver printed a line that is not JSON: %q", sc.Text())
		}
		r.obs = append(r.obs, o)
		if o.Kind == "message" {
			var m sdkMessage
			_ = json.Unmarshal(o.Message, &m)
			switch {
			case m.Type == "result":
				r.results = append(r.results, m)
			case m.Type == "system" && m.Subtype == "init":
				r.inits = append(r.inits, m)
			}
		}
	}
	if runErr != nil || len(r.kind("done")) != 1 {
		t.Fatalf("%s %s: the driver failed (%v):\n%s", exe.name, scenario, runErr, r.dump())
	}
	if *record && exe.name == "cohort" {
		saveExchange(t, recording, scenario, dir, home)
	}
	return r
}

// TestAgentSDKDrivesTheCLI runs each scenario with the real Agent SDK
// against Cohort and against Claude Code, with the same checks.
func TestAgentSDKDrivesTheCLI(t *testing.T) {
	modules, exes := executables(t)
	for _, exe := range exes {
		t.Run(exe.name, func(t *testing.T) {
			t.Parallel()
			for _, sc := range scenarioChecks {
				t.Run(sc.name, func(t *testing.T) {
					r := drive(t, modules, exe, sc.name)
					sc.check(t, exe, r)
				})
			}
		})
	}
}
