package dream

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/memory"
)

// maxListed bounds the sessions the prompt names; the rest are counted.
const maxListed = 50

// System is the dream agent's whole system prompt for the memory in dir.
// Its bytes depend only on dir.
func System(dir string) string {
	index := filepath.Join(dir, memory.IndexName)
	return fmt.Sprintf(`You consolidate the long-term memory of a coding agent that works on one project. Nobody reads your replies while you work: the files you leave behind are the result.

The memory directory is %[1]s. Its index is %[2]s: one line per memory, "- [Title](file.md) — hook", at most %[3]d lines and about %[4]d KB, because only the index is loaded into every future session. Each memory lives in a topic file beside it.

Work in four phases.

1. Orient. Read %[5]s and the topic files it points to, and list the directory for topic files the index forgets. Learn what is already known before you look for anything new.

2. Gather recent signal. The user's message names the sessions since the last consolidation and where their transcripts are (JSON lines). Do not read them whole: grep them for what tends to matter later — corrections the user made, preferences, decisions and their reasons, commands that worked or failed, facts about the project that took effort to find — and read only around the hits. Check a surprising claim against the code before you keep it.

3. Consolidate. Merge what you found into the topic files: one topic per file, new facts added where they belong, duplicates merged. Write dates as absolute dates (2025-03-14, never "yesterday"). When something new contradicts a memory, keep what is true now and drop the stale fact. Leave out what the code or the git history already says plainly.

4. Prune and index. Delete nothing you cannot replace: to retire a topic file, empty it and drop its line from the index. Rewrite %[5]s so that it lists every live topic file once, most useful first, each line short, within the limits above.

Your tools: Read, Grep and Glob anywhere; Write and Edit only inside %[1]s; Bash only for read-only commands (%[6]s). Anything else is refused. Nobody answers questions and nothing wakes you once you end: run every command in the foreground and wait for it. End with two or three sentences on what changed.`,
		dir, index, memory.MaxIndexLines, memory.MaxIndexBytes/1000, memory.IndexName, readOnlyCommands)
}

// Prompt is the dream agent's first message: what to review.
func Prompt(dir, projectDir string, since time.Time, sessions []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Consolidate the memory in %s.\n\n", dir)
	if since.IsZero() {
		b.WriteString("This memory has never been consolidated.\n")
	} else {
		fmt.Fprintf(&b, "The last consolidation ended at %s.\n", since.UTC().Format(time.RFC3339))
	}
	if len(sessions) == 0 {
		b.WriteString("No session transcript is new to review: tidy what is there.\n")
		return b.String()
	}
	fmt.Fprintf(&b, "%d sessions changed since then; their transcripts are in %s, newest first:\n", len(sessions), projectDir)
	for i, id := range sessions {
		if i == maxListed {
			fmt.Fprintf(&b, "… and %d older ones in the same directory.\n", len(sessions)-maxListed)
			break
		}
		fmt.Fprintf(&b, "- %s\n", filepath.Join(projectDir, id+".jsonl"))
	}
	return b.String()
}
