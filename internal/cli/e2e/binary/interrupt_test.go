package binary

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
)

// TestInterruptHook sends SIGINT to the binary while a Bash call runs,
// under a logging Interrupt hook and a Stop hook: the Interrupt hook runs
// once, before the process exits, and reads source "user" and reason
// "stop"; the Stop hook does not run (the turn did not end by itself).
func TestInterruptHook(t *testing.T) {
	t.Parallel()
	bin := clitest.BuildBinary(t)
	c := clitest.NewConv()
	h := clitest.New(t, c.Policy)
	pidFile := filepath.Join(h.Dir, "bash.pid")
	c.On("run something slow", clitest.Calls(clitest.Use("Bash", map[string]any{
		"command": "echo $$ > " + pidFile + "; sleep 300"})))
	interrupted, stopped := filepath.Join(h.Dir, "interrupt.json"), filepath.Join(h.Dir, "stop.json")
	h.Write("interrupt.sh", "cat >> "+interrupted+"\n")
	h.Write("stop.sh", "cat >> "+stopped+"\n")
	h.Write(".cohort/settings.json", `{"hooks": {
  "Interrupt": [{"hooks": [{"type": "command", "command": "sh `+filepath.Join(h.Dir, "interrupt.sh")+`"}]}],
  "Stop": [{"hooks": [{"type": "command", "command": "sh `+filepath.Join(h.Dir, "stop.sh")+`"}]}]}}`)
	var out, errb bytes.Buffer
	interruptSlowRun(t, bin, h, pidFile, &out, &errb)
	data, err := os.ReadFile(interrupted)
	if err != nil {
		t.Fatalf("the Interrupt hook did not run: %v\nstderr: %s", err, errb.String())
	}
	var in map[string]any
	if err := json.Unmarshal(data, &in); err != nil {
		t.Fatalf("the Interrupt hook ran more than once, or read something that is not JSON: %v\n%s", err, data)
	}
	if in["hook_event_name"] != "Interrupt" || in["source"] != "user" || in["reason"] != "stop" || in["session_id"] == "" {
		t.Fatalf("Interrupt input %v", in)
	}
	if _, err := os.Stat(stopped); !os.IsNotExist(err) {
		t.Fatalf("the Stop hook ran for an interrupted turn: %v", err)
	}
}
