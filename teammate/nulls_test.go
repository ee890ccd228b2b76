package teammate

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/tool"
)

// TestSendMessageNullFields: as in Claude Code 2.1.332 (recorded by
// calling its SendMessage with nulls), a null summary or options reads as
// absent; a null notify_when_idle is refused, naming it.
func TestSendMessageNullFields(t *testing.T) {
	send := newSendTool(nil, nil)
	check := func(input string) error {
		return tool.ValidateInput(send.Def().InputSchema, tool.DropNulls(send, json.RawMessage(input)))
	}
	if err := check(`{"to":"uds:/x.sock","message":"hi","summary":null,"options":null}`); err != nil {
		t.Errorf("a null summary and options were refused: %v", err)
	}
	err := check(`{"to":"uds:/x.sock","message":"hi","notify_when_idle":null}`)
	if err == nil || !strings.Contains(err.Error(), `"notify_when_idle"`) {
		t.Errorf("a null notify_when_idle: %v; want it refused by name", err)
	}
}
