package sdkproto_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort"
	"github.com/cohort-dev/cohort/internal/agentsdk"
	"github.com/cohort-dev/cohort/internal/sdkproto"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestRecordedSDKExchanges replays what the real Agent SDK sent Cohort in
// each recorded scenario (testdata/*.jsonl, written by go test
// ./internal/agentsdk -sdk.record) against the protocol server, answering
// the server's requests with the SDK's recorded answers, and checks that
// the server says what it said then: the same control requests and
// responses, the same results, the same kinds of messages. No Node needed.
func TestRecordedSDKExchanges(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	if err != nil || len(files) < 6 {
		t.Fatalf("want the six recorded scenarios in testdata, found %v (%v)", files, err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".jsonl"), func(t *testing.T) {
			t.Parallel()
			replayFile(t, f)
		})
	}
}

type recLine struct {
	Dir  string          `json:"dir"`
	Line json.RawMessage `json:"line"`
}

// obj is a decoded protocol line.
type obj = map[string]any

func decode(raw []byte) obj {
	var m obj
	_ = json.Unmarshal(raw, &m)
	return m
}

func str(m obj, path ...string) string {
	var cur any = m
	for _, k := range path {
		o, ok := cur.(obj)
		if !ok {
			return ""
		}
		cur = o[k]
	}
	s, _ := cur.(string)
	return s
}

// counted reports whether a line counts for pacing and comparison: every
// line but task progress, whose number depends on timing.
func counted(m obj) bool {
	return !(m["type"] == "system" && m["subtype"] == "task_progress") && m["type"] != "stream_event"
}

// signature is what must be the same, live and recorded, for a line.
func signature(m obj, answered map[string]string) string {
	switch m["type"] {
	case "control_request":
		req, _ := m["request"].(obj)
		s := "control_request:" + str(req, "subtype") + ":" + str(req, "tool_name")
		if in, ok := req["input"].(obj); ok && str(req, "subtype") == "hook_callback" {
			s += str(in, "hook_event_name") + ":" + str(in, "tool_name")
		}
		return s
	case "control_response":
		return "control_response:" + str(m, "response", "subtype") + ":" + answered[str(m, "response", "request_id")]
	case "result":
		return fmt.Sprintf("result:%s:%v:%s", m["subtype"], m["is_error"], m["result"])
	case "system":
		return "system:" + str(m, "subtype")
	}
	return fmt.Sprint(m["type"])
}

// requestKey matches a live request to a recorded one: the same subtype,
// tool and input (or hook callback and event).
func requestKey(m obj) string {
	req, _ := m["request"].(obj)
	in, _ := json.Marshal(req["input"])
	if str(req, "subtype") == "mcp_message" {
		msg, _ := req["message"].(obj)
		return fmt.Sprintf("mcp:%s:%s:%v", str(req, "server_name"), str(msg, "method"), msg["id"])
	}
	if str(req, "subtype") == "hook_callback" {
		inp, _ := req["input"].(obj)
		return "hook:" + str(req, "callback_id") + ":" + str(inp, "hook_event_name") + ":" + str(inp, "tool_name")
	}
	return str(req, "subtype") + ":" + str(req, "tool_name") + ":" + string(in)
}

func replayFile(t *testing.T, file string) {
	dir := t.TempDir()
	home, err := os.MkdirTemp("", "csdk")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(strings.ReplaceAll(string(data), "$DIR", dir), "$HOME", home)
	var args []string
	var rec []recLine
	for i, l := range strings.Split(strings.TrimSpace(text), "\n") {
		var r recLine
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("%s:%d: %v", file, i+1, err)
		}
		if r.Dir == "args" {
			_ = json.Unmarshal(r.Line, &args)
			continue
		}
		rec = append(rec, r)
	}
	srv := fakeapi.New(fakeapi.Config{Policy: agentsdk.Policy("Agent", dir)})
	defer srv.Close()
	env := map[string]string{"HOME": home, "COHORT_HOME": filepath.Join(home, ".cohort"), "TMPDIR": os.TempDir(),
		"PATH": os.Getenv("PATH"), "COHORT_NOTIFY_COALESCE": "0"}
	cfg := cohort.Config{Dir: dir, Home: env["COHORT_HOME"], BaseURL: srv.URL, APIKey: "sk-test",
		Getenv: func(k string) string { return env[k] }, Environ: func() []string {
			var out []string
			for k, v := range env {
				out = append(out, k+"="+v)
			}
			return out
		}, Stderr: io.Discard}
	opts := sdkproto.Options{Config: cfg}
	for _, a := range args {
		switch {
		case a == "--permission-prompt-tool=stdio":
			opts.PermissionPrompts = true
		case strings.HasPrefix(a, "--allowedTools="):
			opts.Config.AllowedTools = append(opts.Config.AllowedTools, strings.TrimPrefix(a, "--allowedTools="))
		case strings.HasPrefix(a, "--") && !slices.Contains([]string{"--output-format", "--verbose", "--input-format"}, a):
			t.Fatalf("%s: the recording passed %s, which this replay does not know how to apply", file, a)
		}
	}

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	served := make(chan error, 1)
	go func() {
		served <- sdkproto.Serve(ctx, inR, outW, opts)
		outW.Close()
	}()
	live := make(chan obj, 1024)
	go func() {
		defer close(live)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			m := decode(sc.Bytes())
			if m == nil {
				t.Errorf("the server wrote a line that is not a JSON object: %q", sc.Text())
				continue
			}
			live <- m
		}
	}()

	var got []obj
	ids := map[string]string{}      // recorded request_id → live
	used := map[string]bool{}       // live requests already matched
	recReq := map[string]obj{}      // recorded request_id → its line
	answered := map[string]string{} // request_id (either side) → what the response answers
	next := func() obj {
		select {
		case m, ok := <-live:
			if !ok {
				t.Fatalf("the server's output ended early; so far:\n%s", dump(got))
			}
			got = append(got, m)
			return m
		case <-ctx.Done():
			t.Fatalf("no line from the server in time; so far:\n%s", dump(got))
		}
		return nil
	}
	countedGot := func() int {
		n := 0
		for _, m := range got {
			if counted(m) {
				n++
			}
		}
		return n
	}
	need := 0 // counted out-lines before the current point of the recording
	for _, r := range rec {
		m := decode(r.Line)
		if r.Dir == "out" {
			if counted(m) {
				need++
			}
			if m["type"] == "control_request" {
				recReq[str(m, "request_id")] = m
			}
			continue
		}
		for countedGot() < need {
			next()
		}
		line := r.Line
		switch m["type"] {
		case "control_request":
			answered[str(m, "request_id")] = str(m["request"].(obj), "subtype")
		case "control_response":
			recID := str(m, "response", "request_id")
			want := requestKey(recReq[recID])
			liveID := ""
			for liveID == "" {
				for _, g := range got {
					if g["type"] == "control_request" && !used[str(g, "request_id")] && requestKey(g) == want {
						liveID = str(g, "request_id")
						break
					}
				}
				if liveID == "" {
					next()
				}
			}
			used[liveID], ids[recID] = true, liveID
			line = []byte(strings.Replace(string(line), recID, liveID, 1))
		}
		if _, err := inW.Write(append(line, '\n')); err != nil {
			t.Fatal(err)
		}
	}
	inW.Close()
	for m := range live {
		got = append(got, m)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}

	var wantSigs, gotSigs []string
	for _, r := range rec {
		if m := decode(r.Line); r.Dir == "out" && counted(m) {
			wantSigs = append(wantSigs, signature(m, answered))
		}
	}
	for _, m := range got {
		if counted(m) {
			gotSigs = append(gotSigs, signature(m, answered))
		}
	}
	slices.Sort(wantSigs)
	slices.Sort(gotSigs)
	if !slices.Equal(wantSigs, gotSigs) {
		t.Errorf("the replay's lines differ from the recording's:\nrecorded: %q\nreplayed: %q\nreplay:\n%s", wantSigs, gotSigs, dump(got))
	}
	// Order where it is causal: the results come in the recorded order.
	if w, g := results(rec), resultsOf(got); !slices.Equal(w, g) {
		t.Errorf("results %q, recorded %q", g, w)
	}
}

func results(rec []recLine) []string {
	var out []obj
	for _, r := range rec {
		if r.Dir == "out" {
			out = append(out, decode(r.Line))
		}
	}
	return resultsOf(out)
}

func resultsOf(lines []obj) []string {
	var out []string
	for _, m := range lines {
		if m["type"] == "result" {
			out = append(out, fmt.Sprint(m["result"]))
		}
	}
	return out
}

func dump(lines []obj) string {
	var b strings.Builder
	for _, m := range lines {
		data, _ := json.Marshal(m)
		s := string(data)
		if len(s) > 300 {
			s = s[:300] + "…"
		}
		b.WriteString(s + "\n")
	}
	return b.String()
}
