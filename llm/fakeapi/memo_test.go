package fakeapi

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// TestMemoMatchesFreshDecoding decodes a growing conversation through one
// memo, the way a client re-sends it each turn, and checks every request
// against a decoding without the memo: the same messages, tools and cache
// usage, whether a message was remembered or not.
func TestMemoMatchesFreshDecoding(t *testing.T) {
	mm := newMemo(memoMaxBytes)
	withMemo := newCache(CacheConfig{}, newClock().Now)
	fresh := newCache(CacheConfig{}, newClock().Now)
	fresh.memo = nil
	msgs := []map[string]any{user(longUser)}
	for turn := range 4 {
		marked := append(append([]map[string]any(nil), msgs[:len(msgs)-1]...), markedUser(longUser+string(rune('a'+turn))))
		raw, err := json.Marshal(cachedBody(longSystem, longTools, marked...))
		if err != nil {
			t.Fatal(err)
		}
		got, e := decodeRequest(raw, false, mm)
		if e != nil {
			t.Fatalf("turn %d: %s", turn, e.message)
		}
		want, e := decodeRequest(raw, false, nil)
		if e != nil {
			t.Fatalf("turn %d: %s", turn, e.message)
		}
		opts := cmp.Options{cmpopts.IgnoreUnexported(Request{}), cmp.AllowUnexported(Block{}, Tool{})}
		if diff := cmp.Diff(want, got, opts); diff != "" {
			t.Fatalf("turn %d: request decoded through the memo differs (-fresh +memo):\n%s", turn, diff)
		}
		gp, wp := withMemo.plan(got), fresh.plan(want)
		if diff := cmp.Diff(wp.usage, gp.usage); diff != "" {
			t.Fatalf("turn %d: usage differs (-fresh +memo):\n%s", turn, diff)
		}
		withMemo.commit(gp)
		fresh.commit(wp)
		if turn > 0 && gp.usage.CacheReadInputTokens == 0 {
			t.Fatalf("turn %d: nothing read from the cache: %+v", turn, gp.usage)
		}
		msgs = append(marked[:len(marked)-1], user(longUser+string(rune('a'+turn))), assistant("ok"), user("next"))
	}
	if len(mm.msgs) == 0 || len(mm.tools) != 1 {
		t.Fatalf("memo holds %d messages and %d tools; want some messages and the one tool", len(mm.msgs), len(mm.tools))
	}
}

// TestMemoStartsOverWhenFull checks the bound: a memo never holds more key
// bytes than its limit, and what it forgot decodes again correctly.
func TestMemoStartsOverWhenFull(t *testing.T) {
	mm := newMemo(100)
	a := json.RawMessage(`{"role":"user","content":"first message, long enough"}`)
	b := json.RawMessage(`{"role":"user","content":"second message, long enough to fill it up"}`)
	for _, raw := range []json.RawMessage{a, b, a} {
		m, err := mm.message(raw)
		if err != nil {
			t.Fatal(err)
		}
		if m.Role != "user" || len(m.Content) != 1 {
			t.Fatalf("decoded %+v from %s", m, raw)
		}
		if mm.bytes > mm.max {
			t.Fatalf("memo holds %d bytes, limit %d", mm.bytes, mm.max)
		}
	}
	if len(mm.msgs) != 1 {
		t.Fatalf("after overflowing, the memo holds %d messages; want only the last one", len(mm.msgs))
	}
	if _, err := mm.message(json.RawMessage(`{"role":`)); err == nil {
		t.Fatal("a truncated message decoded without error")
	}
}
