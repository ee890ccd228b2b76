package agentsdk

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// scenarioChecks are the scenarios of driver.mjs and what each must show,
// for either executable.
var scenarioChecks = []struct {
	name  string
	check func(t *testing.T, exe executable, r *run)
}{
	{"plain", checkPlain},
	{"fanout", checkFanout},
	{"hook", checkHook},
	{"interrupt", checkInterrupt},
	{"mode", checkMode},
	{"multiturn", checkMultiTurn},
	{"sdkmcp", checkSDKMCP},
	{"rewind", checkRewind},
}

// checkRewind: the host's rewindFiles (rewind_files) to its first prompt
// lists the file the turn wrote on a dry run, leaving it, then removes it.
func checkRewind(t *testing.T, exe executable, r *run) {
	rw := r.kind("rewind")
	if len(rw) != 2 {
		t.Fatalf("%s: want a dry run and a rewind:\n%s", exe.name, r.dump())
	}
	for i, o := range rw {
		var res struct {
			CanRewind    bool     `json:"canRewind"`
			Error        string   `json:"error"`
			FilesChanged []string `json:"filesChanged"`
		}
		if err := json.Unmarshal(o.Result, &res); err != nil || !res.CanRewind {
			t.Fatalf("%s: rewind %d = %s (%v):\n%s", exe.name, i, o.Result, err, r.dump())
		}
		if i == 0 && (len(res.FilesChanged) != 1 || filepath.Base(res.FilesChanged[0]) != "rewind.txt") {
			t.Errorf("%s: the dry run lists %q, want rewind.txt", exe.name, res.FilesChanged)
		}
	}
	if r.exists("rewind.txt") {
		t.Errorf("%s: rewind.txt is still there after the rewind", exe.name)
	}
}

// checkPlain: one prompt, one answer, an init message first.
func checkPlain(t *testing.T, exe executable, r *run) {
	if len(r.results) != 1 || r.results[0].IsError || r.results[0].Result != "hello from the scripted model" {
		t.Fatalf("%s: want one successful result with the model's answer:\n%s", exe.name, r.dump())
	}
	if len(r.inits) == 0 || r.inits[0].SessionID == "" {
		t.Fatalf("%s: no system/init message with a session id:\n%s", exe.name, r.dump())
	}
	if r.results[0].SessionID != r.inits[0].SessionID {
		t.Errorf("%s: result session %q, init session %q", exe.name, r.results[0].SessionID, r.inits[0].SessionID)
	}
}

// checkFanout: three subagents each call Write once; the host decides each
// call (once per call, naming the subagent), and only the allowed writes
// happen; the refusal's message reaches the subagent's model.
func checkFanout(t *testing.T, exe executable, r *run) {
	writes := r.calls("Write")
	if len(writes) != 3 {
		t.Fatalf("%s: canUseTool was called %d times for Write, want once per subagent (3):\n%s", exe.name, len(writes), r.dump())
	}
	files := map[string]bool{}
	agents := map[string]bool{}
	for _, w := range writes {
		p, _ := w.Input["file_path"].(string)
		files[filepath.Base(p)] = true
		if w.AgentID == nil || *w.AgentID == "" {
			t.Errorf("%s: the Write of %s reached canUseTool without the subagent's agentID", exe.name, p)
		} else {
			agents[*w.AgentID] = true
		}
	}
	if len(files) != 3 {
		t.Errorf("%s: the host was asked about %v, want sub-1, sub-2 and sub-3 once each", exe.name, files)
	}
	if len(agents) != 3 && !t.Failed() {
		t.Errorf("%s: the three calls named %d agents, want three", exe.name, len(agents))
	}
	for _, name := range []string{"sub-1.txt", "sub-3.txt"} {
		data, err := os.ReadFile(filepath.Join(r.dir, name))
		if err != nil || !strings.HasPrefix(string(data), "written by") {
			t.Errorf("%s: allowed write %s: %q, %v", exe.name, name, data, err)
		}
	}
	if r.exists("sub-2.txt") {
		t.Errorf("%s: sub-2.txt was written although the host denied it", exe.name)
	}
	if !r.modelSaw("the host refuses sub-2") {
		t.Errorf("%s: the host's refusal never reached the subagent's model", exe.name)
	}
	if len(r.results) != 1 || r.results[0].IsError || r.results[0].Result != "all three writers reported" {
		t.Errorf("%s: want the lead's answer as the result:\n%s", exe.name, r.dump())
	}
}

// checkHook: a PreToolUse hook the host registered denies Bash; the
// command does not run and the hook's reason reaches the model.
func checkHook(t *testing.T, exe executable, r *run) {
	hooks := r.kind("hook")
	if len(hooks) != 1 || hooks[0].Event != "PreToolUse" || hooks[0].Tool != "Bash" || hooks[0].Command == nil ||
		!strings.Contains(*hooks[0].Command, "hooked.txt") {
		t.Fatalf("%s: want one PreToolUse hook call for the Bash command:\n%s", exe.name, r.dump())
	}
	if r.exists("hooked.txt") {
		t.Errorf("%s: the command ran although the host's hook denied it", exe.name)
	}
	if !r.modelSaw("the host hook forbids Bash here") {
		t.Errorf("%s: the hook's reason never reached the model:\n%s", exe.name, r.dump())
	}
	if len(r.calls("Bash")) != 0 {
		t.Errorf("%s: canUseTool was asked about a call the hook had denied", exe.name)
	}
}

// checkInterrupt: interrupt() during a long Bash call ends the turn with
// an error result; the command's end never comes.
func checkInterrupt(t *testing.T, exe executable, r *run) {
	if len(r.kind("interrupted")) != 1 {
		t.Fatalf("%s: the interrupt request was not answered:\n%s", exe.name, r.dump())
	}
	if len(r.results) != 1 {
		t.Fatalf("%s: want one result after the interrupt:\n%s", exe.name, r.dump())
	}
	if res := r.results[0]; res.Result == "slow done" {
		t.Errorf("%s: the turn ran to its end although it was interrupted: %+v", exe.name, res)
	}
	if r.exists("slow.txt") {
		t.Errorf("%s: the interrupted command finished", exe.name)
	}
}

// checkMode: in acceptEdits the Write needs no answer from the host; back
// in default mode it does, and the host's denial stands.
func checkMode(t *testing.T, exe executable, r *run) {
	if len(r.results) != 2 {
		t.Fatalf("%s: want two results:\n%s", exe.name, r.dump())
	}
	for _, w := range r.calls("Write") {
		if p, _ := w.Input["file_path"].(string); strings.HasSuffix(p, "mode-one.txt") {
			t.Errorf("%s: acceptEdits still asked the host about %s", exe.name, p)
		}
	}
	if !r.exists("mode-one.txt") {
		t.Errorf("%s: mode-one.txt was not written in acceptEdits", exe.name)
	}
	if len(r.calls("Write")) != 1 {
		t.Errorf("%s: want one canUseTool call (for mode-two.txt, in default mode):\n%s", exe.name, r.dump())
	}
	if r.exists("mode-two.txt") {
		t.Errorf("%s: mode-two.txt was written although the host denied it", exe.name)
	}
}

// checkMultiTurn: two prompts over one process and one conversation.
func checkMultiTurn(t *testing.T, exe executable, r *run) {
	if len(r.results) != 2 {
		t.Fatalf("%s: want two results:\n%s", exe.name, r.dump())
	}
	if r.results[0].Result != "noted" || r.results[1].Result != "you gave me 42" {
		t.Errorf("%s: results %q, %q; want the second turn to see the first", exe.name, r.results[0].Result, r.results[1].Result)
	}
	if r.results[0].SessionID != r.results[1].SessionID {
		t.Errorf("%s: the turns ran in sessions %s and %s", exe.name, r.results[0].SessionID, r.results[1].SessionID)
	}
}

// checkSDKMCP: a tool of an MCP server the host runs in its own process
// (createSdkMcpServer) is called by the model through the control
// protocol, and its answer reaches the model.
func checkSDKMCP(t *testing.T, exe executable, r *run) {
	calls := r.kind("mcp_call")
	if len(calls) != 1 || calls[0].Input["key"] != "alpha" {
		t.Fatalf("%s: want one call of the host's lookup tool with key alpha:\n%s", exe.name, r.dump())
	}
	if len(r.results) != 1 || !strings.Contains(r.results[0].Result, "host value for alpha: 7312") {
		t.Errorf("%s: the host tool's answer did not reach the model:\n%s", exe.name, r.dump())
	}
}
