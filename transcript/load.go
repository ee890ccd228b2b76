package transcript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cohort-dev/cohort/llm"
)

// Transcript is a loaded conversation.
type Transcript struct {
	Path      string
	SessionID string
	// Init is the system/init entry, if the file has one.
	Init *Entry
	// Messages is the history after the last compaction boundary, repaired
	// so that it can be sent as is.
	Messages []llm.Message
	// Origins holds the origin of each message in Messages.
	Origins []string
	// Problems lists skipped lines and repairs, each naming file and line.
	Problems []string
	// Compactions counts the boundaries seen.
	Compactions int
	// Unrecorded is the message repair added after the last one (results
	// for tool calls the session never answered), which the file lacks: a
	// resumed session writes it first.
	Unrecorded *llm.Message

	stop int  // the count of boundaries to stop reading at; < 0 reads all
	done bool // the line read was the boundary to stop at
}

// Load reads the transcript at path. A missing file is an error; corrupt
// lines are skipped and listed in Problems.
func Load(path string) (*Transcript, error) { return load(path, -1) }

// load reads the transcript at path up to the boundary after the first
// stop ones (all of it when stop < 0).
func load(path string, stop int) (*Transcript, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("session: open %s: %w", path, err)
	}
	defer f.Close()
	t := &Transcript{Path: path, stop: stop}
	r := bufio.NewReader(f)
	for lineNo := 1; ; lineNo++ {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			t.add(lineNo, line, err == io.EOF)
		}
		if err == io.EOF || t.done {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("session: read %s: %w", path, err)
		}
	}
	t.repair()
	return t, nil
}

func (t *Transcript) add(lineNo int, line []byte, last bool) {
	var e Entry
	if err := json.Unmarshal(line, &e); err != nil {
		what := "corrupt line skipped"
		if last && !bytes.HasSuffix(line, []byte("\n")) {
			what = "torn last line skipped"
		}
		t.Problems = append(t.Problems, fmt.Sprintf("%s:%d: %s (%v)", t.Path, lineNo, what, err))
		return
	}
	if t.SessionID == "" {
		t.SessionID = e.SessionID
	}
	switch e.Type {
	case TypeSystem:
		switch e.Subtype {
		case SubtypeInit:
			if t.Init == nil {
				t.Init = &e
			}
		case SubtypeCompactBoundary:
			if t.Compactions == t.stop {
				t.done = true
				return
			}
			t.Messages, t.Origins = nil, nil
			t.Compactions++
		}
	case TypeUser, TypeAssistant:
		if e.Message == nil || string(e.Message.Role) != e.Type {
			t.Problems = append(t.Problems, fmt.Sprintf("%s:%d: %s entry without a matching message skipped", t.Path, lineNo, e.Type))
			return
		}
		if n := len(t.Messages); n > 0 && t.Messages[n-1].Role == e.Message.Role {
			// The engine merges content sent back to back into one message.
			t.Messages[n-1].Content = append(t.Messages[n-1].Content, e.Message.Content...)
			return
		}
		t.Messages = append(t.Messages, *e.Message)
		t.Origins = append(t.Origins, e.Origin)
	}
}

// repair makes the history sendable: it drops leading assistant messages
// and answers every tool call left unanswered, wherever it is: after the
// last turn (the session was killed while its tools ran) or inside the
// history (a result line lost to a torn write). A missing result gets an
// "interrupted" error result at the head of the user message that follows
// the call, or in a new user message after the last one; the tail's new
// message is also kept in Unrecorded, for the resumed session to write to
// the transcript, so that the next load has nothing left to repair there.
func (t *Transcript) repair() {
	for len(t.Messages) > 0 && t.Messages[0].Role != llm.RoleUser {
		t.Messages, t.Origins = t.Messages[1:], t.Origins[1:]
		t.Problems = append(t.Problems, fmt.Sprintf("%s: history began with an assistant message; dropped it", t.Path))
	}
	for i := 0; i < len(t.Messages); i++ {
		if t.Messages[i].Role != llm.RoleAssistant {
			continue
		}
		uses := t.Messages[i].ToolUses()
		if len(uses) == 0 {
			continue
		}
		answered := map[string]bool{}
		last := i+1 == len(t.Messages)
		if !last {
			for _, b := range t.Messages[i+1].Content {
				if b.Type == llm.BlockToolResult {
					answered[b.ToolUseID] = true
				}
			}
		}
		var missing []llm.Block
		for _, u := range uses {
			if !answered[u.ID] {
				missing = append(missing, llm.ToolResult(u.ID, interrupted, true))
			}
		}
		switch {
		case len(missing) == 0:
		case last:
			m := llm.Message{Role: llm.RoleUser, Content: missing}
			t.Messages = append(t.Messages, m)
			t.Origins = append(t.Origins, OriginToolResult)
			t.Unrecorded = &m
			t.Problems = append(t.Problems, fmt.Sprintf("%s: the last turn's %d tool call(s) were never answered; marked them interrupted", t.Path, len(missing)))
		default:
			next := &t.Messages[i+1]
			next.Content = append(missing, next.Content...)
			t.Problems = append(t.Problems, fmt.Sprintf("%s: %d tool call(s) inside the history had no result; marked them interrupted", t.Path, len(missing)))
		}
	}
}

// interrupted is the result repair gives a tool call that was never
// answered.
const interrupted = "Interrupted: the session ended before this tool call finished."

// lastUUID returns the uuid of the last parseable entry of path.
func lastUUID(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	for _, l := range slices.Backward(lines) {
		var e struct {
			UUID string `json:"uuid"`
		}
		if json.Unmarshal(l, &e) == nil && e.UUID != "" {
			return e.UUID, nil
		}
	}
	return "", errors.New("no entries")
}

// ProjectDir returns the directory holding a project's transcripts.
func ProjectDir(cohortHome, slug string) string {
	return filepath.Join(cohortHome, "projects", slug)
}

// Path returns the transcript path of a lead session.
func Path(projectDir, sessionID string) string {
	return filepath.Join(projectDir, sessionID+".jsonl")
}

// SidechainPath returns the transcript path of a subagent of a session.
func SidechainPath(projectDir, sessionID, agentID string) string {
	return filepath.Join(projectDir, sessionID, "subagents", "agent-"+agentID+".jsonl")
}

// RetiredIndexPath is where a session's finished agents' records go once
// they leave memory (the runtime's index, next to their transcripts).
func RetiredIndexPath(projectDir, sessionID string) string {
	return filepath.Join(projectDir, sessionID, "subagents", "retired.jsonl")
}

// Latest returns the id of the most recently modified lead transcript in
// projectDir, for --continue.
func Latest(projectDir string) (string, error) {
	entries, err := os.ReadDir(projectDir)
	if err != nil {
		return "", fmt.Errorf("session: no sessions in %s: %w", projectDir, err)
	}
	var best string
	var bestMod int64
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		if m := info.ModTime().UnixNano(); best == "" || m > bestMod {
			best, bestMod = strings.TrimSuffix(e.Name(), ".jsonl"), m
		}
	}
	if best == "" {
		return "", fmt.Errorf("session: no sessions in %s", projectDir)
	}
	return best, nil
}
