package jsonenc

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// awkward holds every character class the string escaping treats apart.
const awkward = "plain \"quoted\" back\\slash <b>&amp; \u2028\u2029 tab\t nl\n cr\r bs\b ff\f nul\x00 esc\x1b del\x7f é 世界 🙂 bad\xff\xfe utf8 \xe2\x80 cut"

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", awkward, "\u2028", "\xe2\x80\xa8", "\xe2\x80", "<", strings.Repeat("é", 3)} {
		f.Add(s)
	}
	// Every special byte at every position of an eight-byte word.
	for _, c := range []byte("\x00\x1f \"\\<>&\x7f\x80\xe2") {
		for i := range 9 {
			f.Add(strings.Repeat("a", i) + string([]byte{c}) + strings.Repeat("b", 16-i))
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Fatalf("AppendString(%q) = %s, encoding/json says %s", s, got[1:], want)
		}
	})
}

func TestSchemaCache(t *testing.T) {
	var c schemaCache
	schema := json.RawMessage(`{ "type": "object", "description": "<x>" }`)
	first, err := c.get(schema)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"type":"object","description":"\u003cx\u003e"}`; string(first) != want {
		t.Fatalf("get = %s, want %s", first, want)
	}
	again, _ := c.get(append(json.RawMessage(nil), schema...))
	if &again[0] != &first[0] {
		t.Error("the same schema was compacted twice")
	}
	// A schema edited in place is a different key.
	schema[strings.IndexByte(string(schema), 'x')] = 'y'
	edited, _ := c.get(schema)
	if !strings.Contains(string(edited), `\u003cy\u003e`) {
		t.Errorf("edited schema gave %s", edited)
	}
	if _, err := c.get(json.RawMessage(`{"type":`)); err == nil {
		t.Error("invalid schema accepted")
	}
	for i := range maxCachedSchemas + 10 {
		if _, err := c.get(json.RawMessage(fmt.Sprintf(`{"n":%d}`, i))); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(c.m); n != maxCachedSchemas {
		t.Errorf("cache holds %d schemas, want the bound %d", n, maxCachedSchemas)
	}
}

func TestTextCache(t *testing.T) {
	var c textCache
	long := strings.Repeat(awkward, 5)
	first := c.appendString([]byte("x"), long)
	if want := AppendString([]byte("x"), long); string(first) != string(want) {
		t.Fatalf("cached escaping differs:\n%s\n%s", first, want)
	}
	if again := c.appendString(nil, long); string(again) != string(first[1:]) {
		t.Fatalf("second lookup gave %s", again)
	}
	if got := c.appendString(nil, "short <"); string(got) != `"short \u003c"` {
		t.Errorf("short string gave %s", got)
	}
	if len(c.m) != 1 {
		t.Errorf("cache holds %d texts, want only the long one", len(c.m))
	}
	for i := range maxCachedTexts + 10 {
		c.appendString(nil, fmt.Sprintf("%04d%s", i, strings.Repeat("a", minCachedText)))
	}
	if len(c.m) != maxCachedTexts {
		t.Errorf("cache holds %d texts, want the bound %d", len(c.m), maxCachedTexts)
	}
}
