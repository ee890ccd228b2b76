package memory

import (
	"fmt"
	"strings"
)

// Context is what an agent is told about a memory directory in its first
// user message: where it is, how to save there, and the index as loaded
// (or that there is none yet). Its bytes depend only on its arguments, so
// the prompt prefix stays cacheable.
func Context(dir string, ix Index, loaded bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Memory\n\nYou have a memory directory that lasts across sessions: %s\n", dir)
	b.WriteString("Save what will help in later sessions — the user's preferences and corrections, decisions and their reasons, facts about the project that took effort to find — and not what the code or the git history already says. ")
	fmt.Fprintf(&b, "Put each memory in a topic file there (Write, Edit) and keep %s as its index, one line per entry: - [Title](file.md) — one-line hook. Use absolute dates. Update or remove a memory that turns out wrong.\n", IndexName)
	if !loaded {
		fmt.Fprintf(&b, "\nNo %s exists yet: nothing was loaded.\n", IndexName)
		return b.String()
	}
	state := "loaded in full"
	if ix.Truncated {
		state = fmt.Sprintf("truncated to the limits: %d lines and %d bytes in the file", ix.Lines, ix.Bytes)
	}
	fmt.Fprintf(&b, "\nLoaded memory files: %s (%s). Topic files are not loaded; Read them when an entry is relevant.\n\nContents of %s:\n\n%s\n", ix.Path, state, ix.Path, ix.Content)
	return b.String()
}
