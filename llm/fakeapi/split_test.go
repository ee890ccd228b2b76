package fakeapi

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// jsonSplit is the reference splitBody must agree with.
func jsonSplit(body []byte, w *wireRequest) error { return json.Unmarshal(body, w) }

// checkSplitAgrees decodes body through splitBody and through
// json.Unmarshal: both accept it and read the same request, or both refuse
// it, agreeing on whether it is valid JSON at all.
func checkSplitAgrees(t *testing.T, body []byte) {
	t.Helper()
	got, gotErr := decodeWith(body, false, nil, splitBody)
	want, wantErr := decodeWith(body, false, nil, jsonSplit)
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("body %q: splitBody error %v, json.Unmarshal error %v", body, gotErr, wantErr)
	}
	if gotErr != nil {
		if notJSONErr := notJSON().message; (gotErr.message == notJSONErr) != (wantErr.message == notJSONErr) {
			t.Fatalf("body %q: splitBody says %q, json.Unmarshal says %q", body, gotErr.message, wantErr.message)
		}
		return
	}
	opts := cmp.Options{cmpopts.IgnoreUnexported(Request{}), cmp.AllowUnexported(Block{}, Tool{})}
	if diff := cmp.Diff(want, got, opts); diff != "" {
		t.Fatalf("body %q: requests differ (-json.Unmarshal +splitBody):\n%s", body, diff)
	}
}

var splitSeeds = []string{
	`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`,
	` { "MODEL" : "m" , "max_tokens" : 5 , "Messages" : [ {"role":"user","content":[{"type":"text","text":"a\"b\\c\u00e9"}]} ] , "tools" : [ {"name":"t","input_schema":{"type":"object"}} ] } `,
	`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"a"}],"messages":null}`,
	`{"model":"m","max_tokens":5,"messages":[],"tools":null,"stream":true,"system":"s","thinking":{"type":"adaptive"}}`,
	`{"mess\u0061ges":[{"role":"user","content":"x"}],"model":"m","max_tokens":1}`,
	`{"model":"m","max_tokens":5,"messages":[tru]}`,
	`{"model":5,"max_tokens":5,"messages":[{"role":"user","content":"x"}],"x":[}`,
	`{"model":"m","max_tokens":5,"messages":"no"}`,
	`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}],}`,
	`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}]} x`,
	`[1,2]`, `null`, ``, `"s"`, `{"a":"\x01"}`, `{"a":"\uZZZZ"}`, `{"model":"m","messages":[{]}`,
	`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"x"}]}` + strings.Repeat(" ", 3),
}

func TestSplitBodyAgreesWithEncodingJSON(t *testing.T) {
	for _, s := range splitSeeds {
		checkSplitAgrees(t, []byte(s))
	}
}

func FuzzSplitBody(f *testing.F) {
	for _, s := range splitSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkSplitAgrees(t, body) })
}

// BenchmarkSplitBody splits a lead-sized body: 2,000 messages of text and
// tool results, about 1 MB.
func BenchmarkSplitBody(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"model":"m","max_tokens":5,"messages":[`)
	for i := range 2000 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%06d","content":"line one of the output\nline two, \"quoted\" %s"}]}`, i, strings.Repeat("x", 400))
	}
	sb.WriteString(`]}`)
	body := []byte(sb.String())
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		var w wireRequest
		if err := splitBody(body, &w); err != nil {
			b.Fatal(err)
		}
	}
}
