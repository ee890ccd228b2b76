package session

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
}

// Load reads the transcript at path. A missing file is an error; corrupt
// lines are skipped and listed in Problems.
func Load(path string) (*Transcript, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("session: open %s: %w", path, err)
	}
	defer f.Close()
	t := &Transcript{Path: path}
	r := bufio.NewReader(f)
	for lineNo := 1; ; lineNo++ {
		line, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			t.add(lineNo, line, err == io.EOF)
		}
		if err == io.EOF {
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
// and answers unanswered tool calls.
func (t *Transcript) repair() {
	for len(t.Messages) > 0 && t.Messages[0].Role != llm.RoleUser {
		t.Messages, t.Origins = t.Messages[1:], t.Origins[1:]
		t.Problems = append(t.Problems, fmt.Sprintf("%s: history began with an assistant message; dropped it", t.Path))
	}
	n := len(t.Messages)
	if n == 0 || t.Messages[n-1].Role != llm.RoleAssistant {
		return
	}
	uses := t.Messages[n-1].ToolUses()
	if len(uses) == 0 {
		return
	}
	var results []llm.Block
	for _, u := range uses {
		results = append(results, llm.ToolResult(u.ID, "Interrupted: the session ended before this tool call finished.", true))
	}
	t.Messages = append(t.Messages, llm.Message{Role: llm.RoleUser, Content: results})
	t.Origins = append(t.Origins, OriginToolResult)
	t.Problems = append(t.Problems, fmt.Sprintf("%s: the last turn's tool calls were never answered; marked them interrupted", t.Path))
}

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
