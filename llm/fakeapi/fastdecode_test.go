package fakeapi

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var fastSeeds = []string{
	`{"role":"user","content":"hi"}`,
	`{"role":"assistant","content":[{"type":"text","text":"a"},{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls -l"}}]}`,
	`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"out"}],"is_error":true,"cache_control":{"type":"ephemeral"}}]}`,
	`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t","content":"plain","is_error":false}]}`,
	`{"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"sig"},{"type":"redacted_thinking","data":"xx"}]}`,
	`{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AA=="}}]}`,
	` { "role" : "user" , "content" : [ ] } `,
	`{"role":"user","content":[{"type":"text","text":"a\"b\\c\u00e9"}]}`,
	`{"Role":"user","content":"x"}`,
	`{"role":"user","role":"assistant","content":"x"}`,
	`{"role":"user","content":null}`,
	`{"role":"user","content":{"type":"text"}}`,
	`{"role":"user","content":[{"type":"text","text":"a","text":"b"}]}`,
	`{"role":"user","content":[{"type":"tool_use","input":{"a":tru}}]}`,
	`{"role":"user","content":[{"type":"tool_result","is_error":1}]}`,
	`{"role":"user","content":[{"type":"text","citations":null}]}`,
	`{"role":"user","content":[{"type":"text","text":"` + "\xff" + `"}]}`,
	`{"role":"user","content":[{"type":"text"},]}`,
	`{"role":"user","content":"x"} x`,
	`{"role":5}`, `[]`, `null`, `{}`, `{"content":[]}`,
}

// checkFastAgrees holds fastMessage to json.Unmarshal: whenever it accepts
// bytes, json.Unmarshal accepts them too and reads the same message.
func checkFastAgrees(t *testing.T, data []byte) {
	t.Helper()
	got, ok := fastMessage(data)
	if !ok {
		return
	}
	var want Message
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatalf("%q: fastMessage accepted what json.Unmarshal refuses: %v", data, err)
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(Block{})); diff != "" {
		t.Fatalf("%q: messages differ (-json.Unmarshal +fastMessage):\n%s", data, diff)
	}
}

func TestFastMessageAgreesWithEncodingJSON(t *testing.T) {
	accepted := 0
	for _, s := range fastSeeds {
		checkFastAgrees(t, []byte(s))
		if _, ok := fastMessage([]byte(s)); ok {
			accepted++
		}
	}
	// The fast path must actually take the shapes clients send.
	if accepted < 8 {
		t.Fatalf("fastMessage accepted %d of the seeds, want the 8 well-formed ones at least", accepted)
	}
}

func FuzzFastMessage(f *testing.F) {
	for _, s := range fastSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkFastAgrees)
}

// The system field goes through the same fast path; a string and blocks
// read as decodeContent reads them.
func TestDecodeSystemAgreesWithDecodeContent(t *testing.T) {
	for _, s := range []string{`"be brief"`, `[{"type":"text","text":"a","cache_control":{"type":"ephemeral"}}]`, `[]`, `null`, `{"x":1}`, `"\u00e9"`} {
		got, gotErr := decodeSystem(json.RawMessage(s))
		want, wantErr := decodeContent(json.RawMessage(s))
		if (gotErr == nil) != (wantErr == nil) {
			t.Fatalf("%s: errors %v and %v", s, gotErr, wantErr)
		}
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(Block{})); diff != "" {
			t.Fatalf("%s: (-decodeContent +decodeSystem):\n%s", s, diff)
		}
	}
}

func FuzzFastString(f *testing.F) {
	for _, s := range []string{`"a"`, `"a\nb\"c\\d\/e\b\f\r\t"`, `"\u00e9\ud83d\ude00"`, `"\ud83d"`, `"\ud83dx"`, `"\ude00\ud83d"`, `"\ud83d\u0041"`, "\"\xff\xfe\"", "\"\xed\xa0\x80\"", `"\u004A"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, v []byte) {
		s := scan{b: v}
		if s.str() != nil || s.i != len(v) {
			return // fastString is only given strings scan.str accepted
		}
		got, ok := fastString(v)
		var want string
		err := json.Unmarshal(v, &want)
		if !ok || err != nil {
			t.Fatalf("%q: fastString ok=%v, json.Unmarshal err=%v", v, ok, err)
		}
		if got != want {
			t.Fatalf("%q: fastString %q, json.Unmarshal %q", v, got, want)
		}
	})
}
