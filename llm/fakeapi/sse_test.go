package fakeapi

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// trickyInput exercises every kind of escape and multi-byte character.
const trickyInput = `{"path":"/tmp/caf\u00e9 \"q\" \\ tab\t","emoji":"\ud83d\ude00 😀","jp":"日本語","n":[1,2.5e3,-0],"nested":{"x":null,"y":true}}`

func TestStreamGrammar(t *testing.T) {
	reply := Reply{Content: []Block{
		ThinkingBlock("Let me think about ü.", "c2lnbmF0dXJl"),
		TextBlock("I'll list the files — ok? <b>&</b>"),
		ToolUseBlock("", "Bash", json.RawMessage(trickyInput)),
	}}
	srv := start(t, Config{Policy: func(*Request) Reply { return reply }, Seed: 7})
	res := call(t, httpClient(t), srv.URL, "/v1/messages", body(user("list files")))
	if res.Status != 200 || res.ReadErr != nil {
		t.Fatalf("status %d, read error %v: %s", res.Status, res.ReadErr, res.Body)
	}
	if got := res.Header.Get("content-type"); !strings.HasPrefix(got, "text/event-stream") {
		t.Errorf("content-type %q", got)
	}
	if res.Header.Get("request-id") == "" {
		t.Error("no request-id header")
	}
	evs, err := readSSE(bytes.NewReader(res.Body))
	if err != nil {
		t.Fatal(err)
	}
	d := decode(t, evs)

	// The order, pings aside, is fixed by the protocol.
	var want []string
	want = append(want, "message_start")
	for range 3 {
		want = append(want, "content_block_start")
		want = append(want, "content_block_delta") // at least one; collapsed below
		want = append(want, "content_block_stop")
	}
	want = append(want, "message_delta", "message_stop")
	if diff := cmp.Diff(want, collapse(d.Names)); diff != "" {
		t.Errorf("event order (-want +got):\n%s", diff)
	}
	if evs[2].Name != "ping" || evs[1].Name != "content_block_start" {
		t.Errorf("want a ping right after the first content_block_start, got %s, %s", evs[1].Name, evs[2].Name)
	}
	if evs[len(evs)-1].Name != "message_stop" {
		t.Errorf("last event %s", evs[len(evs)-1].Name)
	}

	if got := d.Text[0]; got != "Let me think about ü." {
		t.Errorf("thinking %q", got)
	}
	if got := d.Blocks[0]["signature"]; got != "c2lnbmF0dXJl" {
		t.Errorf("signature %q", got)
	}
	if got := d.Text[1]; got != "I'll list the files — ok? <b>&</b>" {
		t.Errorf("text %q", got)
	}
	if got := d.Text[2]; got != trickyInput {
		t.Errorf("tool input reassembled to\n%s\nwant\n%s", got, trickyInput)
	}
	if id, _ := d.Blocks[2]["id"].(string); !regexp.MustCompile(`^toolu_[0-9A-Za-z]{24}$`).MatchString(id) {
		t.Errorf("tool id %q", id)
	}
	if d.StopReason != "tool_use" {
		t.Errorf("stop_reason %q", d.StopReason)
	}
	if !regexp.MustCompile(`^msg_`).MatchString(d.Start["id"].(string)) || d.Start["role"] != "assistant" || d.Start["model"] != "claude-test" {
		t.Errorf("message_start %v", d.Start)
	}
	usage := d.Start["usage"].(map[string]any)
	for _, k := range []string{"input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens", "output_tokens"} {
		if _, ok := usage[k]; !ok {
			t.Errorf("message_start usage lacks %s: %v", k, usage)
		}
		if _, ok := d.EndUsage[k]; !ok {
			t.Errorf("message_delta usage lacks %s: %v", k, d.EndUsage)
		}
	}
	if d.EndUsage["output_tokens"].(float64) < 10 {
		t.Errorf("output_tokens %v, want the content's estimate", d.EndUsage["output_tokens"])
	}
	// Every event is "event: X\ndata: {...}\n\n".
	if !regexp.MustCompile(`^(event: [a-z_]+\ndata: \{[^\n]*\}\n\n)+$`).Match(res.Body) {
		t.Errorf("stream bytes do not follow the SSE grammar:\n%s", res.Body)
	}
}

// collapse merges runs of content_block_delta into one.
func collapse(names []string) []string {
	var out []string
	for _, n := range names {
		if n == "content_block_delta" && len(out) > 0 && out[len(out)-1] == n {
			continue
		}
		out = append(out, n)
	}
	return out
}

func TestStreamDeterministic(t *testing.T) {
	policy := func(*Request) Reply {
		return Reply{Content: []Block{TextBlock(strings.Repeat("words and more words ", 20)), ToolUseBlock("", "Read", json.RawMessage(trickyInput))}}
	}
	stream := func(seed int64) []byte {
		srv := start(t, Config{Policy: policy, Seed: seed})
		res := call(t, httpClient(t), srv.URL, "/v1/messages", body(user("hi")))
		return res.Body
	}
	a, b, c := stream(1), stream(1), stream(2)
	if !bytes.Equal(a, b) {
		t.Errorf("same request and seed gave different streams:\n%s\n---\n%s", a, b)
	}
	if bytes.Equal(a, c) {
		t.Error("different seeds gave the same fragmentation")
	}
}

func TestFragmentsCutInsideEscapes(t *testing.T) {
	insideU, betweenSurrogates, afterBackslash := false, false, false
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 0))
		parts := fragments(trickyInput, rng, 8)
		if strings.Join(parts, "") != trickyInput {
			t.Fatalf("seed %d: pieces do not rejoin", seed)
		}
		pos := 0
		for _, p := range parts[:len(parts)-1] {
			pos += len(p)
			if !utf8.RuneStart(trickyInput[pos]) {
				t.Fatalf("seed %d: cut inside a UTF-8 sequence at %d", seed, pos)
			}
			before := trickyInput[:pos]
			if i := strings.LastIndex(before, `\u`); i >= 0 && pos-i < 6 && pos-i > 1 {
				insideU = true
			}
			if strings.HasSuffix(before, `\ud83d`) {
				betweenSurrogates = true
			}
			if strings.HasSuffix(before, `\`) {
				afterBackslash = true
			}
		}
	}
	if !insideU || !betweenSurrogates || !afterBackslash {
		t.Errorf("cuts never fell inside a \\u escape (%v), between surrogates (%v) or after a backslash (%v)", insideU, betweenSurrogates, afterBackslash)
	}
}

// FuzzFragment checks that any string survives fragmentation, SSE encoding
// and a client's decoding byte for byte.
func FuzzFragment(f *testing.F) {
	f.Add(trickyInput, uint64(1), uint8(8))
	f.Add("", uint64(0), uint8(1))
	f.Add("日本語😀é", uint64(3), uint8(1))
	f.Add(`{"a":"\ud83d\ude00\\\"\n"}`, uint64(9), uint8(3))
	f.Add("line\nbreak\r\n\u2028 and <&>", uint64(5), uint8(16))
	f.Fuzz(func(t *testing.T, s string, seed uint64, maxBytes uint8) {
		if !utf8.ValidString(s) {
			s = strings.ToValidUTF8(s, "?")
		}
		rng := rand.New(rand.NewPCG(seed, 42))
		parts := fragments(s, rng, 1+int(maxBytes%32))
		var rejoined strings.Builder
		var stream bytes.Buffer
		sw := &sseWriter{w: &stream}
		for _, p := range parts {
			if p == "" {
				t.Fatal("empty fragment")
			}
			if !utf8.ValidString(p) {
				t.Fatalf("fragment %q is not valid UTF-8", p)
			}
			if err := sw.write(event{"content_block_delta", evBlockDelta{"content_block_delta", 0, wireJSONDelta{"input_json_delta", p}}}); err != nil {
				t.Fatal(err)
			}
		}
		evs, err := readSSE(&stream)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != len(parts) {
			t.Fatalf("%d events for %d fragments", len(evs), len(parts))
		}
		for _, ev := range evs {
			var d evBlockDelta
			var delta wireJSONDelta
			d.Delta = &delta
			if err := json.Unmarshal([]byte(ev.Data), &d); err != nil {
				t.Fatalf("event data %q: %v", ev.Data, err)
			}
			rejoined.WriteString(delta.PartialJSON)
		}
		if rejoined.String() != s {
			t.Fatalf("rejoined %q, want %q", rejoined.String(), s)
		}
	})
}

// FuzzStreamEvents sends a text block and a tool_use block built from
// arbitrary text through the event builder, pings and the SSE encoder, and
// checks that a client's reading rebuilds both exactly, in protocol order.
func FuzzStreamEvents(f *testing.F) {
	f.Add("hello", uint64(1))
	f.Add(`quote " backslash \ newline
 emoji 😀 nul `+"\x00", uint64(2))
	f.Add("\u2028\u2029</script>&<>", uint64(3))
	f.Fuzz(func(t *testing.T, s string, seed uint64) {
		s = strings.ToValidUTF8(s, "?")
		input, _ := marshalNoEscape(map[string]string{"v": s})
		reply, err := normalize(Reply{Content: []Block{TextBlock(s), ToolUseBlock("", "Echo", json.RawMessage(input))}}, [32]byte{1})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(seed, 7))
		evs := []event{{"message_start", evMessageStart{"message_start", wireMessage{ID: "msg_1", Content: []any{}}}}}
		for i, b := range reply.Content {
			evs = append(evs, blockEvents(i, b, rng)...)
		}
		evs = append(evs, event{"message_stop", evType{"message_stop"}})
		var stream bytes.Buffer
		sw := &sseWriter{w: &stream}
		for _, ev := range withPings(evs, rng) {
			if err := sw.write(ev); err != nil {
				t.Fatal(err)
			}
		}
		got, err := readSSE(&stream)
		if err != nil {
			t.Fatal(err)
		}
		d := decode(t, got)
		if d.Names[0] != "message_start" || d.Names[len(d.Names)-1] != "message_stop" || got[0].Name != "message_start" {
			t.Fatalf("order %v", d.Names)
		}
		if d.Text[0] != s || d.Text[1] != string(reply.Content[1].Input) {
			t.Fatalf("rebuilt %q and %q, want %q and %s", d.Text[0], d.Text[1], s, reply.Content[1].Input)
		}
	})
}
