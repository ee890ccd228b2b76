package cohort

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/mailbox"
	"github.com/cohort-dev/cohort/sessionsock"
)

// sendAndExit is the test binary run as a plain program (no Cohort
// session) that writes one message to a session's socket: TestMain calls
// it when COHORT_TEST_SEND_TO names the socket.
func sendAndExit(sock string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m := mailbox.Message{From: os.Getenv("COHORT_TEST_SEND_FROM"), Text: os.Getenv("COHORT_TEST_SEND_TEXT")}
	_, err := sessionsock.SendWith(ctx, sock, m, sessionsock.Delivery{Priority: os.Getenv("COHORT_TEST_SEND_PRIORITY")})
	if err != nil {
		os.Stderr.WriteString(err.Error())
		os.Exit(3)
	}
	os.Exit(0)
}

// sendFromAProgram sends a message to a session's socket from a process
// of its own that is no Cohort session, as a script or nc would: what
// sessionorigin judges as not started by the person. It returns the
// send's error as the program reported it.
func sendFromAProgram(t *testing.T, sock, from, text, priority string) error {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "COHORT_TEST_SEND_TO="+sock, "COHORT_TEST_SEND_FROM="+from,
		"COHORT_TEST_SEND_TEXT="+text, "COHORT_TEST_SEND_PRIORITY="+priority)
	out, err := cmd.CombinedOutput()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 3 {
			return &sendError{strings.TrimSpace(string(out))}
		}
		t.Fatalf("the sending program: %v\n%s", err, out)
	}
	return nil
}

type sendError struct{ msg string }

func (e *sendError) Error() string { return e.msg }
