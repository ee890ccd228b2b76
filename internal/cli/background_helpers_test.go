package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/task"
)

// router answers each request with the reply of the first route whose
// marker occurs in the conversation's first user message. Unlike conv it
// hands the whole request to one function, so a route can answer any number
// of turns (the lead's turn count depends on how notifications batch).
type router struct {
	mu     sync.Mutex
	routes []route
}

type route struct {
	marker string
	reply  func(*fakeapi.Request) fakeapi.Reply
}

func (rt *router) on(marker string, reply func(*fakeapi.Request) fakeapi.Reply) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.routes = append(rt.routes, route{marker, reply})
}

func (rt *router) policy(r *fakeapi.Request) fakeapi.Reply {
	first := r.FirstUserText()
	rt.mu.Lock()
	var reply func(*fakeapi.Request) fakeapi.Reply
	for _, ro := range rt.routes {
		if strings.Contains(first, ro.marker) {
			reply = ro.reply
			break
		}
	}
	rt.mu.Unlock()
	if reply == nil {
		return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.BadRequest, Message: "test router has no route for: " + first}}
	}
	return reply(r)
}

// pause sleeps for d unless ctx ends first; it reports whether it slept.
func pause(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// gate is a one-shot signal with a bounded wait.
type gate struct {
	once sync.Once
	ch   chan struct{}
}

func newGate() *gate { return &gate{ch: make(chan struct{})} }

func (g *gate) open() { g.once.Do(func() { close(g.ch) }) }

// wait blocks until the gate opens, ctx ends or 20 s pass.
func (g *gate) wait(ctx context.Context) bool {
	select {
	case <-g.ch:
		return true
	case <-ctx.Done():
		return false
	case <-time.After(20 * time.Second):
		return false
	}
}

// notice is one <task-notification> block as the lead model read it.
type notice struct {
	TaskID, ToolUseID, OutputFile, Status, Summary, Result string
	HasUsage                                               bool
}

var (
	noticeBlock = regexp.MustCompile(`(?s)<task-notification>.*?</task-notification>`)
	agentIDText = regexp.MustCompile(`agentId: (a[0-9a-f]+)`)
	outputText  = regexp.MustCompile(`written to (\S+\.output)`)
)

func noticeField(s, tag string) string {
	re := regexp.MustCompile(`(?s)<` + tag + `>(.*?)</` + tag + `>`)
	if m := re.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return ""
}

func parseNotices(text string) []notice {
	var out []notice
	for _, blk := range noticeBlock.FindAllString(text, -1) {
		out = append(out, notice{
			TaskID: noticeField(blk, "task-id"), ToolUseID: noticeField(blk, "tool-use-id"),
			OutputFile: noticeField(blk, "output-file"), Status: noticeField(blk, "status"),
			Summary: noticeField(blk, "summary"), Result: noticeField(blk, "result"),
			HasUsage: strings.Contains(blk, "<usage><total_tokens>"),
		})
	}
	return out
}

// userNotices returns the notifications in the top-level text blocks of
// msgs' user messages, where the engine delivers them.
func userNotices(msgs []fakeapi.Message) []notice {
	var out []notice
	for _, m := range msgs {
		if m.Role != "user" {
			continue
		}
		for _, b := range m.Content {
			if b.Type == "text" {
				out = append(out, parseNotices(b.Text)...)
			}
		}
	}
	return out
}

// lastUserNotices returns the notifications of a request's last message.
func lastUserNotices(r *fakeapi.Request) []notice {
	return userNotices(r.Messages[len(r.Messages)-1:])
}

// convRequests returns the successful requests of the conversation whose
// first user message contains marker, in arrival order.
func convRequests(srv *fakeapi.Server, marker string) []*fakeapi.Request {
	var out []*fakeapi.Request
	for _, rec := range srv.Requests() {
		if rec.Request != nil && rec.Status == 200 && strings.Contains(rec.Request.FirstUserText(), marker) {
			out = append(out, rec.Request)
		}
	}
	return out
}

// finalHistory is the longest history the conversation sent: the lead
// runs one request at a time, so it holds every message of every turn.
func finalHistory(t *testing.T, srv *fakeapi.Server, marker string) []fakeapi.Message {
	t.Helper()
	var best []fakeapi.Message
	for _, r := range convRequests(srv, marker) {
		if len(r.Messages) > len(best) {
			best = r.Messages
		}
	}
	if best == nil {
		t.Fatalf("no request of the conversation %q reached the fake", marker)
	}
	return best
}

// toolUseIDs returns the ids of the tool_use blocks named name in msgs,
// in order.
func toolUseIDs(msgs []fakeapi.Message, name string) []string {
	var ids []string
	for _, m := range msgs {
		for _, b := range m.Content {
			if b.Type == "tool_use" && b.Name == name {
				ids = append(ids, b.ID)
			}
		}
	}
	return ids
}

// resultBlocks returns the tool_result blocks of msgs keyed by tool_use id,
// with their text joined.
func resultBlocks(msgs []fakeapi.Message) map[string]toolResult {
	out := map[string]toolResult{}
	for _, m := range msgs {
		for _, b := range m.Content {
			if b.Type != "tool_result" {
				continue
			}
			var parts []string
			for _, c := range b.Content {
				parts = append(parts, c.Text)
			}
			out[b.ToolUseID] = toolResult{Text: strings.Join(parts, ""), IsError: b.IsError}
		}
	}
	return out
}

type toolResult struct {
	Text    string
	IsError bool
}

// streamed is a decoded --output-format stream-json run.
type streamed struct {
	kinds  []string     // "type/subtype" of each line, in order
	tasks  []task.Event // the system/task_* lines, in order
	result resultLine
}

func parseStream(t *testing.T, out string) streamed {
	t.Helper()
	var s streamed
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i, l := range lines {
		var head struct {
			Type    string `json:"type"`
			Subtype string `json:"subtype"`
		}
		if err := json.Unmarshal([]byte(l), &head); err != nil {
			t.Fatalf("stream-json line %d is not JSON: %v\n%s", i+1, err, l)
		}
		s.kinds = append(s.kinds, head.Type+"/"+head.Subtype)
		switch {
		case head.Type == "system" && strings.HasPrefix(head.Subtype, "task_"):
			var ev task.Event
			if err := json.Unmarshal([]byte(l), &ev); err != nil {
				t.Fatalf("task event on line %d: %v\n%s", i+1, err, l)
			}
			s.tasks = append(s.tasks, ev)
		case head.Type == "result":
			if i != len(lines)-1 {
				t.Fatalf("the result is line %d of %d; it must come last", i+1, len(lines))
			}
			if err := json.Unmarshal([]byte(l), &s.result); err != nil {
				t.Fatalf("result line: %v\n%s", err, l)
			}
		}
	}
	if s.result.Type != "result" {
		t.Fatalf("stream-json output has no result line:\n%s", out)
	}
	return s
}

// events returns the task events of one subtype.
func (s streamed) events(subtype string) []task.Event {
	var out []task.Event
	for _, ev := range s.tasks {
		if ev.Subtype == subtype {
			out = append(out, ev)
		}
	}
	return out
}

// cliRun is a CLI run in the background of a test.
type cliRun struct {
	done           chan struct{}
	stdout, stderr string
	code           int
}

// startCLI runs the CLI in a goroutine, so the test can look at files
// while agents work. Cleanup cancels the run and waits for it.
func startCLI(t *testing.T, h *harness, args ...string) *cliRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	run := &cliRun{done: make(chan struct{})}
	go func() {
		defer close(run.done)
		run.stdout, run.stderr, run.code = h.runCtx(ctx, args...)
	}()
	t.Cleanup(func() {
		cancel()
		<-run.done
	})
	return run
}

// wait returns once the run has ended, failing the test after 60 s.
func (c *cliRun) wait(t *testing.T) {
	t.Helper()
	select {
	case <-c.done:
	case <-time.After(60 * time.Second):
		t.Fatal("the CLI did not finish")
	}
}

// awaitPID waits for path to hold a pid and a newline.
func awaitPID(ctx context.Context, path string) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for {
		data, err := os.ReadFile(path)
		if err == nil && strings.HasSuffix(string(data), "\n") {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil {
				return pid, nil
			}
		}
		if !pause(ctx, 5*time.Millisecond) {
			return 0, fmt.Errorf("no pid in %s: %w", path, ctx.Err())
		}
	}
}

// transcriptLines waits until the output file at path holds at least n
// complete lines and returns them, each checked to be a JSON object with
// a type and a message. The writer is asynchronous, so a line may reach
// the disk a moment after the event that produced it.
func transcriptLines(path string, n int) ([]string, os.FileInfo, error) {
	deadline := time.Now().Add(20 * time.Second)
	for {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, nil, err
		}
		text := string(data)
		// Only complete lines count; a write may be under way.
		if i := strings.LastIndexByte(text, '\n'); i >= 0 {
			text = text[:i]
		} else {
			text = ""
		}
		var lines []string
		if text != "" {
			lines = strings.Split(text, "\n")
		}
		if len(lines) >= n {
			for i, l := range lines {
				var v struct {
					Type    string          `json:"type"`
					Message json.RawMessage `json:"message"`
				}
				if err := json.Unmarshal([]byte(l), &v); err != nil {
					return nil, nil, fmt.Errorf("%s line %d is not JSON: %v: %q", path, i+1, err, l)
				}
				if v.Type == "" || len(v.Message) == 0 {
					return nil, nil, fmt.Errorf("%s line %d has no type or message: %q", path, i+1, l)
				}
			}
			fi, err := os.Lstat(path)
			return lines, fi, err
		}
		if time.Now().After(deadline) {
			return nil, nil, errors.New(path + ": the transcript did not reach " + strconv.Itoa(n) + " lines; it holds:\n" + string(data))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// lineTypes returns the "type" of each transcript line.
func lineTypes(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		var v struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal([]byte(l), &v)
		out[i] = v.Type
	}
	return out
}
