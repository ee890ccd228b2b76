package sdkproto_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/sessionsock"
)

// TestAMessageWakesAnIdleSDKSession: a stream-json session that has
// answered its prompt and waits for the next reads a message from
// another session in a turn of its own: the host gets that turn's
// assistant message and a result line though it sent no user line.
func TestAMessageWakesAnIdleSDKSession(t *testing.T) {
	t.Parallel()
	h := newHost(t, func(r *fakeapi.Request) fakeapi.Reply {
		if strings.Contains(r.LastUserText(), "NOTE-7") {
			return fakeapi.TextReply("read NOTE-7")
		}
		return fakeapi.TextReply("hello")
	}, nil)
	h.user("hi")
	first := h.await("the prompt's result", isType("result", ""))
	sock := filepath.Join(h.home, "sessions", str(first, "session_id")+".sock")
	if _, err := sessionsock.SendWith(t.Context(), sock, mailbox.Message{From: "peer", Text: "NOTE-7 the build is green"},
		sessionsock.Delivery{Priority: sessionsock.PriorityLater}); err != nil {
		t.Fatal(err)
	}
	res := h.await("the woken turn's result", isType("result", ""))
	if str(res, "result") != "read NOTE-7" || res["is_error"] == true {
		t.Errorf("the woken turn's result: %v", res)
	}
	if err := h.close(); err != nil {
		t.Fatal(err)
	}
}
