package relay

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// The files of a relay directory.
const (
	indexFile   = "index.md" // every request: agent, turn, state, what is new
	pendingFile = "pending"  // the numbers waiting for an answer, one a line
)

// fileName is request n's file with the given suffix: 0007.request.md.
func fileName(n int, suffix string) string { return fmt.Sprintf("%04d.%s", n, suffix) }

func answerName(n int) string { return fileName(n, "answer.md") }

func (r *Relay) path(n int, suffix string) string {
	return filepath.Join(r.cfg.Dir, fileName(n, suffix))
}

// writeAtomic writes a file whole: a reader sees the old content or the
// new, never part of it.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// appendFile adds text to the end of a file.
func appendFile(path, text string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(text)
	return errors.Join(err, f.Close())
}

// writeStatus writes e's status file: its state, the hash of the answer
// content the state is about (when there is one), and the detail.
func (r *Relay) writeStatus(e *entry, sum *[32]byte, detail string) error {
	var b strings.Builder
	b.WriteString(string(e.state) + "\n")
	if sum != nil {
		b.WriteString(answerSumKey + hex.EncodeToString(sum[:]) + "\n")
	}
	if detail != "" {
		b.WriteString(strings.TrimRight(detail, "\n") + "\n")
	}
	return writeAtomic(r.path(e.n, "status"), []byte(b.String()))
}

const answerSumKey = "answer-sha256 "

// writeIndex rewrites the index and the pending list. The caller holds the
// lock.
func (r *Relay) writeIndex() error {
	var idx, pend strings.Builder
	idx.WriteString("# Relay\n\nEach request waits for NNNN.answer.md; NNNN.status says where it stands. `pending` lists the numbers waiting.\n\n")
	idx.WriteString("| request | agent | turn | state | new since its last answer |\n|---|---|---|---|---|\n")
	for _, e := range r.entries {
		fmt.Fprintf(&idx, "| [%s](%s) | %s | %d | %s | %s |\n", fileName(e.n, "")[:4], fileName(e.n, "request.md"),
			e.conv.name(), e.turn, e.state, e.news)
		if !e.state.final() {
			pend.WriteString(fileName(e.n, "")[:4] + "\n")
		}
	}
	return errors.Join(writeAtomic(filepath.Join(r.cfg.Dir, indexFile), []byte(idx.String())),
		writeAtomic(filepath.Join(r.cfg.Dir, pendingFile), []byte(pend.String())))
}

// newsOf says in a few words what msgs[from:] hold.
func newsOf(msgs []fakeapi.Message, from int) string {
	counts := map[string]int{}
	var order []string
	add := func(k string) {
		if counts[k] == 0 {
			order = append(order, k)
		}
		counts[k]++
	}
	for i := from; i < len(msgs); i++ {
		for _, b := range msgs[i].Content {
			switch b.Type {
			case "tool_result":
				add("tool result")
			case "text":
				add(textKind(b.Text, msgs[i].Role, i == 0))
			default:
				add(strings.ReplaceAll(b.Type, "_", " "))
			}
		}
	}
	if len(order) == 0 {
		return "nothing"
	}
	parts := make([]string, len(order))
	for i, k := range order {
		parts[i] = k
		if counts[k] > 1 {
			parts[i] = fmt.Sprintf("%d × %s", counts[k], k)
		}
	}
	return strings.Join(parts, ", ")
}

// blockSummary names an answer's blocks for the log.
func blockSummary(blocks []fakeapi.Block) string {
	parts := make([]string, len(blocks))
	for i, b := range blocks {
		parts[i] = b.Type
		if b.Type == "tool_use" {
			parts[i] = b.Name
		}
	}
	return strings.Join(parts, ", ")
}

// Status is a request's status file.
type Status struct {
	State State
	// AnswerSum is the hex SHA-256 of the answer content the state is
	// about ("" when none was read).
	AnswerSum string
	// Detail says why: the malformed answer's error, or why the request
	// was abandoned.
	Detail string
}

// ReadStatus reads request n's status file in dir.
func ReadStatus(dir string, n int) (Status, error) {
	data, err := os.ReadFile(filepath.Join(dir, fileName(n, "status")))
	if errors.Is(err, os.ErrNotExist) {
		return Status{}, fmt.Errorf("relay: %s has no request %d (no %s)", dir, n, fileName(n, "status"))
	}
	if err != nil {
		return Status{}, fmt.Errorf("relay: %w", err)
	}
	first, rest, _ := strings.Cut(string(data), "\n")
	st := Status{State: State(first)}
	if sum, more, ok := strings.Cut(rest, "\n"); ok && strings.HasPrefix(sum, answerSumKey) {
		st.AnswerSum, rest = strings.TrimPrefix(sum, answerSumKey), more
	}
	st.Detail = strings.TrimSpace(rest)
	return st, nil
}

// Submit writes answer as request n's answer file in dir (whole, so the
// relay never reads half of it) and waits until the relay has read it: it
// returns the status the relay wrote, Answered or Invalid with the error
// to fix. A request no longer waiting is an error.
func Submit(ctx context.Context, dir string, n int, answer []byte) (Status, error) {
	st, err := ReadStatus(dir, n)
	if err != nil {
		return st, err
	}
	if st.State.final() {
		return st, fmt.Errorf("relay: request %d is %s already; answer one that `pending` lists", n, st.State)
	}
	sum := sha256.Sum256(answer)
	want := hex.EncodeToString(sum[:])
	if err := writeAtomic(filepath.Join(dir, answerName(n)), answer); err != nil {
		return st, fmt.Errorf("relay: %w", err)
	}
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		st, err := ReadStatus(dir, n)
		if err != nil {
			return st, err
		}
		if st.AnswerSum == want || st.State == Cancelled || st.State == TimedOut {
			return st, nil
		}
		select {
		case <-ctx.Done():
			return st, fmt.Errorf("relay: the relay has not read %s yet (%w); is fakeserve running on %s?", answerName(n), ctx.Err(), dir)
		case <-t.C:
		}
	}
}
