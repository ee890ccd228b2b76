package print

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
	"github.com/cohort-dev/cohort/worktree"
)

// streamScript is one scripted run: the lead reads a file, delegates to a
// subagent that searches, and answers.
func streamScript(h *clitest.Harness) fakeapi.Policy {
	file := h.Write("notes.txt", "the notes\n")
	return func(r *fakeapi.Request) fakeapi.Reply {
		if strings.Contains(r.FirstUserText(), "SEARCHER") {
			if r.Turn() == 0 {
				return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Glob", map[string]any{"pattern": "*.txt"})}}
			}
			return fakeapi.TextReply("found notes.txt")
		}
		switch r.Turn() {
		case 0:
			return fakeapi.Reply{Content: []fakeapi.Block{fakeapi.TextBlock("Reading first."), clitest.Use("Read", map[string]any{"file_path": file})}}
		case 1:
			return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Agent", map[string]any{"description": "search", "prompt": "SEARCHER: find text files", "subagent_type": "general-purpose"})}}
		}
		return fakeapi.TextReply("The notes are in notes.txt.")
	}
}

// TestStreamJSONIsTheEventEncoding: print mode's stream-json output is,
// line for line, the JSON encoding of the events Session.Run yields for
// the same scripted run (ids, times and paths aside, which differ between
// any two runs).
func TestStreamJSONIsTheEventEncoding(t *testing.T) {
	t.Parallel()
	const prompt = "where are the notes?"

	cliH := clitest.New(t, nil)
	cliH.Srv.Close()
	cliH.Srv = fakeapi.New(fakeapi.Config{Policy: streamScript(cliH)})
	t.Cleanup(cliH.Srv.Close)
	cliH.Vars["ANTHROPIC_BASE_URL"] = cliH.Srv.URL
	stdout, stderr, code := cliH.Run("-p", prompt, "--output-format", "stream-json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	printed := normalizeStream(t, cliH, strings.Split(strings.TrimSpace(stdout), "\n"))

	libH := clitest.New(t, nil)
	libH.Srv.Close()
	libH.Srv = fakeapi.New(fakeapi.Config{Policy: streamScript(libH)})
	t.Cleanup(libH.Srv.Close)
	libH.Vars["ANTHROPIC_BASE_URL"] = libH.Srv.URL
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	s, err := cohort.New(ctx, cohort.Config{Dir: libH.Dir, StopAfterRun: true,
		Getenv: func(k string) string { return libH.Vars[k] }, Environ: libH.Environ, Stderr: &strings.Builder{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var encoded []string
	for ev, err := range s.Run(ctx, prompt) {
		if err != nil {
			t.Fatal(err)
		}
		data, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		encoded = append(encoded, string(data))
	}
	yielded := normalizeStream(t, libH, encoded)

	// Each agent's lines are in order; how the lead's and a subagent's
	// interleave is not fixed between two runs: a subagent starts as soon
	// as its Agent block is complete in the stream, before the lead's
	// message ends (issue 40). So the runs are compared agent by agent.
	if d := cmp.Diff(byAgent(yielded), byAgent(printed)); d != "" {
		t.Fatalf("stream-json differs from the events' encoding (-events +printed):\n%s", d)
	}
	kinds := map[string]int{}
	for _, l := range printed {
		var head struct{ Type, Subtype string }
		_ = json.Unmarshal([]byte(l), &head)
		kinds[head.Type+"/"+head.Subtype]++
	}
	for _, k := range []string{"system/init", "assistant/", "user/", "system/task_started", "result/success"} {
		if kinds[k] == 0 {
			t.Errorf("no %s line: the comparison covers less than it should (%v)", k, kinds)
		}
	}
}

// byAgent splits normalized lines by the agent they come from (their
// agent_id; the lead's have none), each in its order.
func byAgent(lines []string) map[string][]string {
	out := map[string][]string{}
	for _, l := range lines {
		key := "lead"
		if m := agentField.FindStringSubmatch(l); m != nil {
			key = m[1]
		}
		out[key] = append(out[key], l)
	}
	return out
}

var (
	agentField = regexp.MustCompile(`"agent_id":"([^"]*)"`)
	uuidField  = regexp.MustCompile(`"uuid":"[^"]*"`)
	durations  = regexp.MustCompile(`"(duration_ms|duration_api_ms|durationMs|totalDurationMs|end_time)":\d+`)
	agentIDs   = regexp.MustCompile(`\ba[0-9a-f]{16}\b|\btoolu_[A-Za-z0-9]+`)
	xmlTimes   = regexp.MustCompile(`duration_ms=\\"\d+\\"`)
)

// normalizeStream replaces what differs between any two runs: the session
// id, event uuids, durations, agent, task and tool-use ids (numbered by
// first appearance; the fake derives tool-use ids from the request bytes),
// and the harness's directories.
func normalizeStream(t *testing.T, h *clitest.Harness, lines []string) []string {
	t.Helper()
	var init struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &init); err != nil || init.SessionID == "" {
		t.Fatalf("first line %q has no session id", lines[0])
	}
	ids := map[string]string{}
	out := make([]string, len(lines))
	for i, l := range lines {
		l = strings.ReplaceAll(l, init.SessionID, "SESSION")
		l = strings.ReplaceAll(l, worktree.ProjectSlug(h.Dir), "SLUG") // in the memory dir's path
		l = strings.ReplaceAll(l, h.Dir, "PROJECT")
		l = strings.ReplaceAll(l, h.Home, "HOME")
		l = uuidField.ReplaceAllString(l, `"uuid":"U"`)
		l = durations.ReplaceAllString(l, `"$1":0`)
		l = xmlTimes.ReplaceAllString(l, `duration_ms=\"0\"`)
		l = agentIDs.ReplaceAllStringFunc(l, func(id string) string {
			if _, ok := ids[id]; !ok {
				ids[id] = fmt.Sprintf("ID%d", len(ids))
			}
			return ids[id]
		})
		out[i] = l
	}
	return out
}
