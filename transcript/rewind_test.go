package transcript

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/llm"
)

// TestRewindFindsAPlaceBeforeARewrite: a place before a compaction is
// still in the file; Rewind appends it, and the next Load returns exactly
// its messages with their origins. A place the file does not hold is
// refused and nothing is written.
func TestRewindFindsAPlaceBeforeARewrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s1.jsonl")
	user := func(s string) Entry { return Entry{Type: TypeUser, Message: msg(llm.RoleUser, llm.Text(s))} }
	said := func(s string) Entry { return Entry{Type: TypeAssistant, Message: msg(llm.RoleAssistant, llm.Text(s))} }
	write(t, path,
		Entry{Type: TypeSystem, Subtype: SubtypeInit, System: []llm.Block{llm.Text("sys")}},
		user("one"), said("1"), user("two"), said("2"),
		Entry{Type: TypeSystem, Subtype: SubtypeCompactBoundary, Content: "compacted"},
		Entry{Type: TypeUser, Message: msg(llm.RoleUser, llm.Text("summary")), Origin: OriginCompactSummary}, said("ok"), user("three"), said("3"),
	)
	before, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := At(path, 0, 5); !errors.Is(err, ErrRewritten) {
		t.Fatalf("At(0, 5) of a segment of 4 messages: %v, want ErrRewritten", err)
	}
	if err := Rewind(path, 2, 0); !errors.Is(err, ErrRewritten) {
		t.Fatalf("Rewind past the last boundary: %v, want ErrRewritten", err)
	}
	if again, _ := Load(path); !cmp.Equal(again.Messages, before.Messages) {
		t.Fatal("a refused rewind changed the transcript")
	}

	if err := Rewind(path, 0, 2); err != nil {
		t.Fatal(err)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []llm.Message{*msg(llm.RoleUser, llm.Text("one")), *msg(llm.RoleAssistant, llm.Text("1"))}
	if d := cmp.Diff(want, got.Messages); d != "" || got.Compactions != 2 || got.Init == nil {
		t.Fatalf("after the rewind (-want +got):\n%s\ncompactions %d, init %v", d, got.Compactions, got.Init != nil)
	}

	// The compacted history is a place too: back to after the summary.
	if err := Rewind(path, 1, 2); err != nil {
		t.Fatal(err)
	}
	got, _ = Load(path)
	if got.Messages[0].Content[0].Text != "summary" || got.Origins[0] != OriginCompactSummary || len(got.Messages) != 2 {
		t.Fatalf("after the second rewind: %+v, origins %v", got.Messages, got.Origins)
	}
}
