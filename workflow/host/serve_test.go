package host_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/workflow/host"
)

// oneAgent is an Engine whose script makes one agent() call and returns
// its text.
type oneAgent struct{}

func (oneAgent) Run(ctx context.Context, req host.RunRequest, sp host.Spawner, onEvent func(host.Event)) (host.Result, error) {
	res, err := sp.Spawn(ctx, host.AgentRequest{Prompt: "p"})
	if err != nil {
		return host.Result{}, err
	}
	v, _ := json.Marshal(res.Text)
	return host.Result{Value: v, Agents: 1}, nil
}
func (oneAgent) Check(host.CheckRequest) (host.Checked, error) { return host.Checked{}, nil }
func (oneAgent) List(host.ListRequest) ([]host.Saved, error)   { return nil, nil }

// serve runs Serve on the lines Cohort sends and returns the host's
// messages and Serve's error.
func serve(t *testing.T, lines ...string) ([]host.Message, error) {
	in := strings.NewReader(strings.Join(lines, ""))
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		errc <- host.Serve(t.Context(), in, pw, oneAgent{})
		pw.Close()
	}()
	var out []host.Message
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		var m host.Message
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("the host wrote a bad line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out, <-errc
}

const runLine = `{"type":"run","run":{"name":"x.js","source":"x"}}` + "\n"

// Cohort's side of the line is checked too: a bad line ends the request
// with a "done" naming it, and Serve returns.
func TestServeRefusesBadLinesFromCohort(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines []string
		want  string
	}{
		{"not json", []string{"{oops\n"}, "line 1 from cohort: not a JSON message"},
		{"wrong first", []string{`{"type":"answer","id":1,"answer":{"text":"x"}}` + "\n"}, `line 1 from cohort: the first message must be run, check or list, not "answer"`},
		{"no run body", []string{`{"type":"run"}` + "\n"}, `line 1 from cohort: a "run" message without run`},
		{"unknown call", []string{runLine, `{"type":"answer","id":7,"answer":{"text":"x"}}` + "\n"}, "line 2 from cohort: an answer to agent call 7, which is not waiting for one"},
		{"garbage mid-run", []string{runLine, "\x00\x01\n"}, "line 2 from cohort: not a JSON message"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msgs, err := serve(t, tc.lines...)
			if !errors.Is(err, host.ErrProtocol) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Serve: %v\nwant %q", err, tc.want)
			}
			last := msgs[len(msgs)-1]
			if last.Type != host.TypeDone || !strings.Contains(last.Error, tc.want) {
				t.Fatalf("last message = %+v, want a done naming %q", last, tc.want)
			}
		})
	}
}

// When Cohort goes away mid-run (its end of stdin closes), the run stops.
func TestServeStopsWhenCohortGoes(t *testing.T) {
	msgs, err := serve(t, runLine)
	if err != nil {
		t.Fatal(err)
	}
	last := msgs[len(msgs)-1]
	if last.Type != host.TypeDone || !strings.Contains(last.Error, "cohort closed the workflow host's input") {
		t.Fatalf("last = %+v", last)
	}
}
