package main

import (
	"bufio"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/llm/claude"
)

// fakeserve -relay DIR hands a request to files; `fakeserve relay answer`
// reports a malformed answer (exit 1) and delivers a good one.
func TestRelayAnswerCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "relay")
	url, stop := serveRelay(t, dir) // stdin at EOF at once: relay mode does not stop for it
	m, err := claude.New(claude.Config{APIKey: "anything", BaseURL: url, MaxAttempts: 1})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan string, 1)
	go func() {
		text := ""
		for ev, err := range m.Stream(t.Context(), &llm.Request{Model: "m", MaxTokens: 100, Messages: []llm.Message{llm.UserText("Say hi.")}}) {
			if err != nil {
				text = "error: " + err.Error()
				break
			}
			if ev.Type == llm.EventDone {
				text = ev.Response.Message().TextContent()
			}
		}
		done <- text
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if data, _ := os.ReadFile(filepath.Join(dir, "pending")); strings.TrimSpace(string(data)) == "0001" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("request 1 never became pending")
		}
		time.Sleep(5 * time.Millisecond)
	}
	var out, errb strings.Builder
	code := run([]string{"relay", "answer", "-dir", dir, "1", "-"}, strings.NewReader("```tool Bash\ncommand: ls\n```\n"), &out, &errb)
	if code != 1 || !strings.Contains(out.String(), "request 1: invalid\n0001.answer.md:1: tool \"Bash\" is not offered") {
		t.Fatalf("a call of a tool not offered: exit %d, %q, %q", code, out.String(), errb.String())
	}
	out.Reset()
	file := filepath.Join(t.TempDir(), "hi.md")
	os.WriteFile(file, []byte("Hi!\n"), 0o644)
	if code := run([]string{"relay", "answer", "-dir", dir, "1", file}, nil, &out, &errb); code != 0 || out.String() != "request 1: answered\n" {
		t.Fatalf("exit %d, %q, %q", code, out.String(), errb.String())
	}
	if text := <-done; text != "Hi!" {
		t.Fatalf("the client got %q", text)
	}
	if code := stop(); code != 0 {
		t.Fatalf("exit %d", code)
	}
}

// serveRelay runs fakeserve -relay dir until the test stops it.
func serveRelay(t *testing.T, dir string) (string, func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	outR, outW := io.Pipe()
	var errb syncBuilder
	done := make(chan int, 1)
	go func() {
		code := runContext(ctx, []string{"-relay", dir}, strings.NewReader(""), outW, &errb)
		outW.Close()
		done <- code
	}()
	lines := bufio.NewScanner(outR)
	if !lines.Scan() || !strings.HasPrefix(lines.Text(), "http://127.0.0.1:") {
		cancel()
		t.Fatalf("first line %q is not the URL; stderr: %s", lines.Text(), errb.String())
	}
	return lines.Text(), func() int {
		cancel() // as a SIGINT would
		for lines.Scan() {
		}
		return <-done
	}
}

// syncBuilder is a strings.Builder safe for the server's goroutines.
type syncBuilder struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuilder) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuilder) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
