package crew

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

var update = flag.Bool("update", false, "rewrite golden files")

// forkRig starts a lead that fans out to n forks in one message; extra
// blocks go into that message after the Agent calls.
func forkRig(t testing.TB, n int, cache fakeapi.CacheConfig, extra ...fakeapi.Block) (*rig, *script) {
	s := &script{}
	s.on(lastUserHas("Your directive: directive-"), func(r *fakeapi.Request) fakeapi.Reply {
		d := r.LastUserText()
		d = d[strings.Index(d, "Your directive: ")+len("Your directive: "):]
		return fakeapi.TextReply("Scope: " + d + " done")
	})
	var blocks []fakeapi.Block
	for i := range n {
		blocks = append(blocks, call("Agent", map[string]any{
			"description": fmt.Sprintf("part %d", i), "prompt": fmt.Sprintf("directive-%c", 'A'+i)}))
	}
	blocks = append(blocks, extra...)
	s.on(firstUserAt("fan out", 0), reply(blocks...))
	s.on(firstUserAt("fan out", 1), say("launched"))
	s.on(func(r *fakeapi.Request) bool { return strings.Contains(r.FirstUserText(), "fan out") && r.Turn() >= 2 },
		say("noted"))
	r := newRig(t, rigConfig{policy: s.policy, flags: []string{"fork_subagent=on"}, cache: cache})
	return r, s
}

// forkRequests returns the first request of each fork, keyed by directive.
func forkRequests(srv *fakeapi.Server) map[string]fakeapi.Recorded {
	out := map[string]fakeapi.Recorded{}
	for _, rec := range srv.Requests() {
		if rec.Request == nil {
			continue
		}
		last := rec.Request.LastUserText()
		if i := strings.Index(last, "Your directive: directive-"); i >= 0 {
			d := last[i+len("Your directive: "):]
			if _, seen := out[d]; !seen {
				out[d] = rec
			}
		}
	}
	return out
}

func TestSiblingForksShareEverythingButTheDirective(t *testing.T) {
	r, _ := forkRig(t, 3, fakeapi.CacheConfig{})
	r.send("fan out into three forks")
	if n := r.notified("fan out"); n != 3 {
		t.Fatalf("lead got %d notifications, want 3", n)
	}
	forks := forkRequests(r.srv)
	if len(forks) != 3 {
		t.Fatalf("saw %d fork requests, want 3", len(forks))
	}
	var norm [][]byte
	for d, rec := range forks {
		norm = append(norm, bytes.ReplaceAll(rec.Body, []byte("Your directive: "+d), []byte("Your directive: directive-X")))
	}
	for i := 1; i < len(norm); i++ {
		if !bytes.Equal(norm[0], norm[i]) {
			t.Fatalf("fork request bodies differ beyond the directive (first difference at byte %d)", firstDiff(norm[0], norm[i]))
		}
	}
	checkGolden(t, "fork_request.golden", prettyJSON(t, norm[0]), "the fork request")

	// The parent's next request shares the fork prefix up to and including
	// its last assistant message.
	var parentNext fakeapi.Recorded
	for _, rec := range r.srv.Requests() {
		if rec.Request != nil && strings.Contains(rec.Request.FirstUserText(), "fan out") && rec.Request.Turn() == 1 &&
			!strings.Contains(rec.Request.LastUserText(), "Your directive") {
			parentNext = rec
		}
	}
	if parentNext.Request == nil {
		t.Fatal("no parent request after the fan-out")
	}
	fork := forks["directive-A"].Request
	pm, fm := parentNext.Request.Messages, fork.Messages
	if len(pm) != len(fm) {
		t.Fatalf("parent has %d messages, fork %d", len(pm), len(fm))
	}
	for i := 0; i < len(pm)-1; i++ {
		if !bytes.Equal(stripCache(t, pm[i]), stripCache(t, fm[i])) {
			t.Fatalf("message %d differs between the parent and the fork", i)
		}
	}
	if !bytes.Equal(mustMarshal(t, parentNext.Request.System), mustMarshal(t, fork.System)) ||
		!bytes.Equal(stripCache(t, parentNext.Request.Tools), stripCache(t, fork.Tools)) {
		t.Fatal("system or tools differ between the parent and the fork")
	}
}

func TestForksReadTheSharedPrefixFromCache(t *testing.T) {
	r, _ := forkRig(t, 3, fakeapi.CacheConfig{MinTokens: 1024})
	r.send("fan out into three forks")
	r.notified("fan out")
	forks := forkRequests(r.srv)
	first := forks["directive-A"]
	for _, rec := range forks {
		if rec.Index < first.Index {
			first = rec
		}
	}
	if got := first.Usage.CacheCreationInputTokens; got >= 1000 {
		t.Fatalf("the first fork wrote %d new cache tokens; want < 1,000 beyond the parent's", got)
	}
	for d, rec := range forks {
		if rec.Index == first.Index {
			continue
		}
		u := rec.Usage
		// Everything but the last block (boilerplate and directive) is shared.
		shared := sharedPrefixTokens(t, r.srv, rec.Request)
		if float64(u.CacheReadInputTokens) < 0.99*float64(shared) {
			t.Fatalf("fork %s read %d of its %d shared prefix tokens from cache (usage %+v)", d, u.CacheReadInputTokens, shared, u)
		}
		if rec.Index < first.Index {
			t.Fatalf("fork %s was sent before the first fork", d)
		}
	}
}

func TestForksNeverRunTheParentsPendingCalls(t *testing.T) {
	log := filepath.Join(t.TempDir(), "ran.txt")
	r, _ := forkRig(t, 2, fakeapi.CacheConfig{},
		call("Bash", map[string]any{"command": "echo ran >> " + log}))
	r.send("fan out and run one command")
	if got := r.notified("fan out"); got != 2 {
		t.Fatalf("%d notifications, want 2", got)
	}
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != "ran\n" {
		t.Fatalf("the parent's Bash call ran %d times, want once", strings.Count(string(data), "ran"))
	}
}

func TestForkRefusals(t *testing.T) {
	s := &script{}
	var results []string
	s.on(lastUserHas("Your directive: try to fork"), func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() == 1 {
			return fakeapi.Reply{Content: []fakeapi.Block{call("Agent", map[string]any{
				"description": "nested", "prompt": "again", "subagent_type": "fork"})}}
		}
		return fakeapi.TextReply("Scope: could not fork")
	})
	s.on(lastUserHas("Your directive: try to fork"), say("unused"))
	s.on(func(r *fakeapi.Request) bool { return strings.Contains(r.FirstUserText(), "go") && r.Turn() == 0 },
		reply(call("Agent", map[string]any{"description": "f", "prompt": "try to fork"})))
	s.on(func(r *fakeapi.Request) bool { return strings.Contains(r.FirstUserText(), "go") && r.Turn() >= 1 },
		func(r *fakeapi.Request) fakeapi.Reply { return fakeapi.TextReply("ok") })
	r := newRig(t, rigConfig{policy: func(req *fakeapi.Request) fakeapi.Reply {
		if strings.Contains(req.LastToolResultText(), "Agent is not available to you") {
			results = append(results, req.LastToolResultText())
			return fakeapi.TextReply("Scope: refused as expected")
		}
		return s.policy(req)
	}, flags: []string{"fork_subagent=on"}})
	r.send("go")
	r.notified("go")
	// A fork keeps Agent in its tool array (its parent's, byte for byte)
	// but may not call it.
	if len(results) != 1 || !strings.Contains(results[0], "a forked worker starts no agents") || !strings.Contains(results[0], "Your tools: Bash") {
		t.Fatalf("a fork's fork should be refused, got %q", results)
	}

	// With the flag off, an explicit "fork" names the flag.
	s2 := &script{}
	var got string
	s2.on(func(r *fakeapi.Request) bool { return r.Turn() == 0 },
		reply(call("Agent", map[string]any{"description": "f", "prompt": "p", "subagent_type": "fork"})))
	s2.on(func(r *fakeapi.Request) bool { return r.Turn() == 1 }, func(r *fakeapi.Request) fakeapi.Reply {
		got = r.LastToolResultText()
		return fakeapi.TextReply("ok")
	})
	r2 := newRig(t, rigConfig{policy: s2.policy})
	r2.send("try")
	if !strings.Contains(got, "fork_subagent") {
		t.Fatalf("result should name the fork_subagent flag: %q", got)
	}
}

func prettyJSON(t *testing.T, data []byte) []byte {
	var buf bytes.Buffer
	if err := json.Indent(&buf, data, "", "  "); err != nil {
		t.Fatal(err)
	}
	return append(buf.Bytes(), '\n')
}

// checkGolden compares a request, pretty-printed, with testdata/name
// (-update rewrites it), what naming it in the failure.
func checkGolden(t *testing.T, name string, pretty []byte, what string) {
	t.Helper()
	golden := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(golden, pretty, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(scrub(want), scrub(pretty)) {
		t.Fatalf("%s differs from %s (run with -update after checking the change)", what, golden)
	}
}

// scrub removes what differs between runs: tool_use ids and temp paths.
func scrub(b []byte) []byte {
	b = scrubIDs.ReplaceAll(b, []byte("toolu_<id>"))
	return scrubTmp.ReplaceAll(b, []byte("<tmp>"))
}

var (
	scrubIDs = regexp.MustCompile(`toolu_[A-Za-z0-9]+`)
	scrubTmp = regexp.MustCompile(`/tmp/[^"\\ ]*`)
)

func mustMarshal(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// stripCache marshals v without cache_control fields.
func stripCache(t *testing.T, v any) []byte {
	t.Helper()
	var x any
	if err := json.Unmarshal(mustMarshal(t, v), &x); err != nil {
		t.Fatal(err)
	}
	var walk func(any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			delete(v, "cache_control")
			for k := range v {
				v[k] = walk(v[k])
			}
		case []any:
			for i := range v {
				v[i] = walk(v[i])
			}
		}
		return v
	}
	return mustMarshal(t, walk(x))
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
