package main

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cohort-dev/cohort/bench/scenario"
	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/claude"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// serve runs fakeserve with args until the test closes its stdin, and
// returns its URL and a function that stops it and returns the exit code.
func serve(t *testing.T, args ...string) (string, func() int) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var errb strings.Builder
	done := make(chan int, 1)
	go func() {
		code := run(args, inR, outW, &errb)
		outW.Close()
		done <- code
	}()
	lines := bufio.NewScanner(outR)
	if !lines.Scan() || !strings.HasPrefix(lines.Text(), "http://127.0.0.1:") {
		t.Fatalf("first line %q is not the URL; stderr: %s", lines.Text(), errb.String())
	}
	return lines.Text(), func() int {
		inW.Close()
		for lines.Scan() { // the summary
		}
		return <-done
	}
}

// With -first-token and -tps a reply takes at least the delay plus its
// content at that rate (the fake waits that long; more is the machine).
func TestPaceFlags(t *testing.T) {
	url, stop := serve(t, "-first-token", "300ms", "-tps", "1000")
	m, err := claude.New(claude.Config{APIKey: "k", BaseURL: url, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	spec := scenario.Spec{Agents: 2, Turns: 1, Tools: scenario.ToolsBash, Brief: 400}
	req := &llm.Request{Model: "m", MaxTokens: 100, Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.Text(spec.Prompt())}}}}
	start := time.Now()
	var resp *llm.Response
	for ev, err := range m.Stream(t.Context(), req) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == llm.EventDone {
			resp = ev.Response
		}
	}
	elapsed := time.Since(start)
	bytes := 0
	for _, c := range resp.Message().ToolUses() {
		bytes += len(c.Input)
	}
	// Two Agent calls with 400-byte briefs: over 800 bytes, 200 tokens,
	// 0.2 s at 1,000 tokens a second.
	if want := 300*time.Millisecond + time.Duration(bytes)*time.Second/4000; bytes < 800 || elapsed < want {
		t.Fatalf("the reply (%d bytes of tool input) took %s; a paced one takes at least %s", bytes, elapsed, want)
	}
	if code := stop(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// TestServesUntilStdinCloses starts the server, sends one lead request,
// closes stdin and reads the summary.
func TestServesUntilStdinCloses(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var errb strings.Builder
	done := make(chan int, 1)
	go func() {
		code := run(nil, inR, outW, &errb)
		outW.Close()
		done <- code
	}()
	lines := bufio.NewScanner(outR)
	if !lines.Scan() || !strings.HasPrefix(lines.Text(), "http://127.0.0.1:") {
		t.Fatalf("first line %q is not the URL", lines.Text())
	}
	m, err := claude.New(claude.Config{APIKey: "k", BaseURL: lines.Text(), MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	spec := scenario.Spec{Agents: 3, Turns: 1, Tools: scenario.ToolsBash}
	req := &llm.Request{Model: "m", MaxTokens: 100, Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{llm.Text(spec.Prompt())}}}}
	var resp *llm.Response
	for ev, err := range m.Stream(t.Context(), req) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == llm.EventDone {
			resp = ev.Response
		}
	}
	if n := len(resp.Message().ToolUses()); n != 3 {
		t.Fatalf("the lead got %d Agent calls, want 3", n)
	}
	inW.Close()
	if !lines.Scan() {
		t.Fatalf("no summary line; stderr: %s", errb.String())
	}
	var sum scenario.Summary
	if err := json.Unmarshal(lines.Bytes(), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Requests != 1 || sum.LeadRequests != 1 {
		t.Fatalf("summary = %+v", sum)
	}
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
}

func TestBadArguments(t *testing.T) {
	for _, args := range [][]string{{"extra"}, {"-script", "/no/such/script.yaml"}, {"-nosuchflag"}, {"-window", "-1"},
		{"-tps", "-1"}, {"-first-token", "-1s"}, {"-script", "s.yaml", "-relay", "d"}, {"-relay-timeout", "1m"},
		{"relay"}, {"relay", "answer", "1"}, {"relay", "answer", "x", "f"}, {"relay", "answer", "-dir", "/no/such/dir", "1", "/no/such/answer"}} {
		var errb strings.Builder
		if code := run(args, strings.NewReader(""), io.Discard, &errb); code != 2 || errb.Len() == 0 {
			t.Errorf("run(%q) = %d with stderr %q; want 2 and a message", args, code, errb.String())
		}
	}
}
