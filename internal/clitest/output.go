package clitest

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/task"
)

// LastLine is the last line of s, surrounding space trimmed.
func LastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// JSONUnmarshal decodes the JSON text s into v.
func JSONUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

// MustJSON encodes v, failing t if it cannot.
func MustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// Notice is one <task-notification> block as the lead model read it.
type Notice struct {
	TaskID, ToolUseID, OutputFile, Status, Summary, Result string
	HasUsage                                               bool
}

// NoticeBlock matches one task notification; AgentIDText and OutputText
// the agent id and the output file of a launch result.
var (
	NoticeBlock = regexp.MustCompile(`(?s)<task-notification>.*?</task-notification>`)
	AgentIDText = regexp.MustCompile(`agentId: (a[0-9a-f]+)`)
	OutputText  = regexp.MustCompile(`written to (\S+\.output)`)
)

// NoticeField is the text of the first <tag> element of s.
func NoticeField(s, tag string) string {
	re := regexp.MustCompile(`(?s)<` + tag + `>(.*?)</` + tag + `>`)
	if m := re.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return ""
}

func parseNotices(text string) []Notice {
	var out []Notice
	for _, blk := range NoticeBlock.FindAllString(text, -1) {
		out = append(out, Notice{
			TaskID: NoticeField(blk, "task-id"), ToolUseID: NoticeField(blk, "tool-use-id"),
			OutputFile: NoticeField(blk, "output-file"), Status: NoticeField(blk, "status"),
			Summary: NoticeField(blk, "summary"), Result: NoticeField(blk, "result"),
			HasUsage: strings.Contains(blk, "<usage><total_tokens>"),
		})
	}
	return out
}

// UserNotices returns the notifications in the top-level text blocks of
// msgs' user messages, where the engine delivers them.
func UserNotices(msgs []fakeapi.Message) []Notice {
	var out []Notice
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

// ConvRequests returns the successful requests of the conversation whose
// first user message contains marker, in arrival order.
func ConvRequests(srv *fakeapi.Server, marker string) []*fakeapi.Request {
	var out []*fakeapi.Request
	for _, rec := range srv.Requests() {
		if rec.Request != nil && rec.Status == 200 && strings.Contains(rec.Request.FirstUserText(), marker) {
			out = append(out, rec.Request)
		}
	}
	return out
}

// FinalHistory is the longest history the conversation sent: the lead
// runs one request at a time, so it holds every message of every turn.
func FinalHistory(t *testing.T, srv *fakeapi.Server, marker string) []fakeapi.Message {
	t.Helper()
	var best []fakeapi.Message
	for _, r := range ConvRequests(srv, marker) {
		if len(r.Messages) > len(best) {
			best = r.Messages
		}
	}
	if best == nil {
		t.Fatalf("no request of the conversation %q reached the fake", marker)
	}
	return best
}

// Streamed is a decoded --output-format stream-json run.
type Streamed struct {
	Kinds  []string     // "type/subtype" of each line, in order
	Tasks  []task.Event // the system/task_* lines, in order
	Result ResultLine
}

// ParseStream decodes the stdout of a stream-json run, failing t unless
// each line is JSON and the result line comes last.
func ParseStream(t *testing.T, out string) Streamed {
	t.Helper()
	var s Streamed
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i, l := range lines {
		var head struct {
			Type    string `json:"type"`
			Subtype string `json:"subtype"`
		}
		if err := json.Unmarshal([]byte(l), &head); err != nil {
			t.Fatalf("stream-json line %d is not JSON: %v\n%s", i+1, err, l)
		}
		s.Kinds = append(s.Kinds, head.Type+"/"+head.Subtype)
		switch {
		case head.Type == "system" && strings.HasPrefix(head.Subtype, "task_"):
			var ev task.Event
			if err := json.Unmarshal([]byte(l), &ev); err != nil {
				t.Fatalf("task event on line %d: %v\n%s", i+1, err, l)
			}
			s.Tasks = append(s.Tasks, ev)
		case head.Type == "result":
			if i != len(lines)-1 {
				t.Fatalf("the result is line %d of %d; it must come last", i+1, len(lines))
			}
			if err := json.Unmarshal([]byte(l), &s.Result); err != nil {
				t.Fatalf("result line: %v\n%s", err, l)
			}
		}
	}
	if s.Result.Type != "result" {
		t.Fatalf("stream-json output has no result line:\n%s", out)
	}
	return s
}

// Events returns the task events of one subtype.
func (s Streamed) Events(subtype string) []task.Event {
	var out []task.Event
	for _, ev := range s.Tasks {
		if ev.Subtype == subtype {
			out = append(out, ev)
		}
	}
	return out
}
