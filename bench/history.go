package bench

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cohort-dev/cohort/llm"
)

// History returns a conversation whose messages serialize (as JSON) to at
// least size bytes: a user prompt, then rounds of an assistant message with
// a sentence of reasoning and a Read call answered by a user message with
// the file's contents (about 3 KB of Go source), and a closing assistant
// text, so the next user message starts a new turn. The same size always
// gives the same messages.
func History(size int) []llm.Message {
	msgs := []llm.Message{{Role: llm.RoleUser, Content: []llm.Block{
		llm.Text("The cache tests in internal/store fail intermittently. Find out why and fix it; keep the public API as it is."),
	}}}
	closing := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
		llm.Text("I have read the relevant files. The eviction loop reads the map without holding the lock; I will fix that next."),
	}}
	for i := 0; Size(append(msgs, closing)) < size; i++ {
		id := fmt.Sprintf("toolu_hist%014d", i)
		path := fmt.Sprintf("/work/project/internal/store/part%d.go", i)
		input, _ := json.Marshal(map[string]string{"file_path": path})
		msgs = append(msgs,
			llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{
				llm.Text(fmt.Sprintf("Next I will read %s to see how part %d handles concurrent access.", path, i)),
				llm.ToolUse(id, "Read", input),
			}},
			llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResult(id, sourceFile(i), false)}},
		)
	}
	return append(msgs, closing)
}

// Size returns the JSON size of msgs.
func Size(msgs []llm.Message) int {
	data, err := json.Marshal(msgs)
	if err != nil {
		panic(fmt.Sprintf("bench: messages do not marshal: %v", err)) // llm types always do
	}
	return len(data)
}

// sourceFile returns about 3 KB of numbered Go source, as Read shows it.
func sourceFile(n int) string {
	var b strings.Builder
	line := 1
	add := func(format string, args ...any) {
		fmt.Fprintf(&b, "%6d\t", line)
		fmt.Fprintf(&b, format, args...)
		b.WriteByte('\n')
		line++
	}
	add("package store")
	add("")
	add(`import "sync"`)
	add("")
	for f := 0; f < 6; f++ {
		add("// Get%d returns the value stored under key in shard %d, and whether it was there.", f, n)
		add("func (s *Shard%d) Get%d(key string) (Value, bool) {", n, f)
		add("\ts.mu.RLock()")
		add("\tdefer s.mu.RUnlock()")
		add("\tv, ok := s.items[key]")
		add("\tif !ok || v.expired(s.now()) {")
		add("\t\treturn Value{}, false")
		add("\t}")
		add("\treturn v, true")
		add("}")
		add("")
	}
	return b.String()
}
