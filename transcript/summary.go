package transcript

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/llm"
)

// Summary is what a listing of sessions shows about one: its id, when it
// started and last changed, the user's first prompt, and what every agent
// of it (the subagents' sidechains included) cost.
type Summary struct {
	ID          string    `json:"session_id"`
	Started     time.Time `json:"started"`
	Updated     time.Time `json:"updated"`
	FirstPrompt string    `json:"first_prompt"`
	CostUSD     float64   `json:"total_cost_usd"`
	Responses   int       `json:"num_responses"`
}

// List summarises every lead session in projectDir, the most recently
// updated first; prices turn the recorded usage into cost. A project with
// no sessions yet is an empty list.
func List(projectDir string, prices llm.PriceTable) ([]Summary, error) {
	entries, err := os.ReadDir(projectDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("session: list %s: %w", projectDir, err)
	}
	var out []Summary
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".jsonl")
		if e.IsDir() || !ok {
			continue
		}
		s, err := summarize(projectDir, id, prices)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	slices.SortStableFunc(out, func(a, b Summary) int { return b.Updated.Compare(a.Updated) })
	return out, nil
}

func summarize(projectDir, id string, prices llm.PriceTable) (Summary, error) {
	s := Summary{ID: id}
	if err := scan(Path(projectDir, id), &s, prices, true); err != nil {
		return s, err
	}
	sides, _ := filepath.Glob(filepath.Join(projectDir, id, "subagents", "*.jsonl"))
	for _, p := range sides {
		if err := scan(p, &s, prices, false); err != nil {
			return s, err
		}
	}
	return s, nil
}

// scan adds one transcript file to s; lead says it is the session's own
// (its times and first prompt count). Lines that do not parse are skipped,
// as Load skips them.
func scan(path string, s *Summary, prices llm.PriceTable, lead bool) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("session: open %s: %w", path, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	for sc.Scan() {
		var e Entry
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		if lead && !e.Timestamp.IsZero() {
			if s.Started.IsZero() {
				s.Started = e.Timestamp
			}
			s.Updated = e.Timestamp
		}
		switch {
		case e.Type == TypeAssistant && e.Usage != nil:
			s.CostUSD += prices.Cost(e.Model, *e.Usage)
			s.Responses++
		case lead && e.Type == TypeUser && e.Origin == "" && s.FirstPrompt == "" && e.Message != nil:
			for _, b := range e.Message.Content {
				// The prompt, not the reminders before it (memory files,
				// the project's memory).
				if t := strings.TrimSpace(b.Text); b.Type == llm.BlockText && t != "" && !strings.HasPrefix(t, "<system-reminder>") {
					s.FirstPrompt = strings.TrimSpace(b.Text)
					break
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("session: read %s: %w", path, err)
	}
	return nil
}
