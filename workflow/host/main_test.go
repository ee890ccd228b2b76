package host_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/cohort-dev/cohort/internal/testbin"
	"go.uber.org/goleak"
)

// fakeEnv makes the test binary a misbehaving host: the value names how.
const fakeEnv = "COHORT_FAKE_WORKFLOW_HOST"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeEnv); mode != "" {
		os.Exit(actAsHost(mode))
	}
	testbin.UseRaceOptions()
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// actAsHost reads the request and then does what mode says.
func actAsHost(mode string) int {
	in := bufio.NewReader(os.Stdin)
	if _, err := in.ReadString('\n'); err != nil {
		return 2
	}
	drain := func() { _, _ = io.Copy(io.Discard, in) }
	switch mode {
	case "garbage":
		fmt.Println(`{"type":"event","event":{"kind":"log","text":"fine"}}`)
		fmt.Println("this is not json")
		drain()
	case "unknown":
		fmt.Println(`{"type":"bogus"}`)
		drain()
	case "agent-without-id":
		fmt.Println(`{"type":"agent","agent":{"prompt":"x"}}`)
		drain()
	case "torn":
		fmt.Print(`{"type":"done"`)
		return 0
	case "die":
		fmt.Fprintln(os.Stderr, "boom: the engine crashed")
		return 3
	case "silent":
		drain() // never answers; only the closing of stdin ends it
	case "stubborn":
		// Ignores the closing of stdin: only a signal ends it.
		select {}
	default:
		return 2
	}
	return 0
}
