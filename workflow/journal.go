package workflow

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
)

// JournalName is the journal's file name inside a run's directory.
const JournalName = "journal.jsonl"

// ErrCorruptJournal reports a journal that cannot be trusted. Resume refuses
// it rather than replay a value it cannot vouch for; start a fresh run.
var ErrCorruptJournal = errors.New("corrupt workflow journal")

// entry is one journal line. A "start" line is written before a step's
// agent is spawned and an "end" or "fail" line after it returns, so a crash
// at any point leaves either no record (the step re-runs), a start without
// an end (it re-runs) or a finished step whose value is replayed.
type entry struct {
	Type   string          `json:"type"` // "run", "start", "end", "fail"
	Key    string          `json:"key,omitempty"`
	Seq    int             `json:"seq,omitempty"`
	Prompt string          `json:"prompt,omitempty"`
	Value  json.RawMessage `json:"value,omitempty"`
	Cost   float64         `json:"cost,omitempty"`
	Error  string          `json:"error,omitempty"`
	Sum    string          `json:"sum,omitempty"` // sha256 of key and value on "end" lines
}

func entrySum(key string, value []byte) string {
	h := sha256.New()
	h.Write([]byte(key))
	h.Write([]byte{0})
	h.Write(value)
	return hex.EncodeToString(h.Sum(nil))
}

// done is a finished step read back from a journal.
type done struct {
	Value json.RawMessage
	Cost  float64
}

// readJournal returns the finished steps of a journal by key, and the
// keys of every step it saw start. A missing
// file is an empty journal. A torn last line (a crash mid-write: no
// trailing newline) is ignored, which only makes that step run again; any
// other line that does not parse or whose checksum does not match is
// ErrCorruptJournal naming the line.
func readJournal(path string) (map[string]done, map[string]bool, error) {
	// started also holds "script:"+hash for each script a run recorded.
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]done{}, map[string]bool{}, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("read workflow journal: %w", err)
	}
	out := map[string]done{}
	started := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 64<<20)
	line := 0
	consumed := 0
	for sc.Scan() {
		line++
		raw := sc.Bytes()
		consumed += len(raw) + 1
		if consumed > len(data) { // last line without "\n": torn by a crash
			break
		}
		if len(bytes.TrimSpace(raw)) == 0 {
			continue
		}
		var e entry
		if err := json.Unmarshal(raw, &e); err != nil {
			return nil, nil, fmt.Errorf("%w: %s line %d: %v; start a fresh run (without resumeFromRunId)", ErrCorruptJournal, path, line, err)
		}
		switch e.Type {
		case "run":
			started["script:"+e.Key] = true
		case "start":
			started[e.Key] = true
		case "fail":
			delete(out, e.Key)
		case "end":
			if e.Key == "" || e.Sum != entrySum(e.Key, e.Value) {
				return nil, nil, fmt.Errorf("%w: %s line %d: the checksum does not match the recorded value; start a fresh run (without resumeFromRunId)", ErrCorruptJournal, path, line)
			}
			out[e.Key] = done{Value: e.Value, Cost: e.Cost}
		default:
			return nil, nil, fmt.Errorf("%w: %s line %d: unknown entry type %q; start a fresh run (without resumeFromRunId)", ErrCorruptJournal, path, line, e.Type)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %v", ErrCorruptJournal, path, err)
	}
	return out, started, nil
}

// journal appends entries, one write per line, so a SIGKILL never leaves a
// half-written line in the middle of the file. Safe for concurrent use.
type journal struct {
	mu sync.Mutex
	f  *os.File
}

func openJournal(path string) (*journal, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open workflow journal: %w", err)
	}
	return &journal{f: f}, nil
}

func (j *journal) append(e entry) error {
	if e.Type == "end" {
		e.Sum = entrySum(e.Key, e.Value)
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, err := j.f.Write(b); err != nil {
		return fmt.Errorf("write workflow journal: %w", err)
	}
	return nil
}

func (j *journal) close() error { return j.f.Close() }
