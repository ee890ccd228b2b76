package teammate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/crew"
	"github.com/cohort-dev/cohort/internal/atomicfile"
	"github.com/cohort-dev/cohort/internal/lazyre"
	"github.com/cohort-dev/cohort/team"
)

// Siblings across processes. Teammates one message spawns in tmux panes are
// processes of their own, so the runtime's in-memory gate (crew.Batch)
// cannot hold them behind the first: each would miss the prompt cache and
// write the tool array the others could read. The lead passes the batch's
// name to each pane (`cohort teammate --siblings B`); in the team directory
// the first teammate of the batch with a given prefix claims
// siblings/B-P.first (O_EXCL, its name inside) and creates siblings/B-P.open
// at its first streamed event; the others wait for that file. They stop
// waiting when the first's status says it stopped or died (or its heartbeat
// is older than deadAfter), when the first has not opened within
// siblingWait, or with their context.

const (
	// siblingWait bounds a wait for the first sibling (the in-process
	// gate's bound too).
	siblingWait = 30 * time.Second
	// siblingPoll is how often a waiting sibling looks for the open file.
	siblingPoll = 25 * time.Millisecond
)

// batchName is what a batch name may look like (crew.BatchName).
var batchName = lazyre.New(`^[0-9a-f]{8,64}$`)

// FileGate is the crew.SiblingGate of teammate name in the team whose
// directory is teamDir, spawned in batch (`--siblings`).
type FileGate struct {
	dir, batch, name string
	deadAfter        time.Duration
	now              func() time.Time
	onPoll           func() // tests: called each time a wait finds the gate shut
}

// NewFileGate checks batch and returns the gate; deadAfter is how old a
// heartbeat of the first sibling must be for it to count as dead (default
// 10 s).
func NewFileGate(teamDir, batch, name string, deadAfter time.Duration) (*FileGate, error) {
	if !batchName.MatchString(batch) {
		return nil, fmt.Errorf("sibling batch %q is not a batch name (hex, as the lead passes it)", batch)
	}
	if deadAfter <= 0 {
		deadAfter = 10 * time.Second
	}
	return &FileGate{dir: filepath.Join(teamDir, "siblings"), batch: batch, name: name,
		deadAfter: deadAfter, now: time.Now}, nil
}

var _ crew.SiblingGate = (*FileGate)(nil)

// Enter claims the first place of the group with prefix, or waits for the
// one that has it.
func (g *FileGate) Enter(ctx context.Context, prefix string) (bool, func(), error) {
	if err := os.MkdirAll(g.dir, 0o700); err != nil {
		return false, nil, fmt.Errorf("sibling gate: %w", err)
	}
	base := filepath.Join(g.dir, g.batch+"-"+strings.Map(fileSafe, prefix))
	f, err := os.OpenFile(base+".first", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		_, werr := f.WriteString(g.name)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return false, nil, fmt.Errorf("sibling gate: %w", werr)
		}
		var once sync.Once
		return true, func() {
			once.Do(func() { _ = atomicfile.Write(base+".open", []byte(g.name), 0o600) })
		}, nil
	}
	if !errors.Is(err, fs.ErrExist) {
		return false, nil, fmt.Errorf("sibling gate: %w", err)
	}
	return false, nil, g.wait(ctx, base)
}

// wait returns once base.open exists or the first sibling cannot open it;
// after siblingWait it gives up waiting (and pays a cache write).
func (g *FileGate) wait(ctx context.Context, base string) error {
	limit := time.NewTimer(siblingWait)
	defer limit.Stop()
	tick := time.NewTicker(siblingPoll)
	defer tick.Stop()
	for {
		if _, err := os.Stat(base + ".open"); err == nil || g.firstGone(base) {
			return nil
		}
		if g.onPoll != nil {
			g.onPoll()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-limit.C:
			return nil
		case <-tick.C:
		}
	}
}

// firstGone reports whether the teammate that claimed base.first has
// stopped, died or stopped beating.
func (g *FileGate) firstGone(base string) bool {
	who, err := os.ReadFile(base + ".first")
	if err != nil || len(who) == 0 {
		return false // being written
	}
	st, ok, err := readStatus(team.FileStatuses(filepath.Dir(g.dir)), string(who))
	if err != nil || !ok {
		return false
	}
	switch st.State {
	case StateStopped, StateDead:
		return true
	}
	return g.now().Sub(st.Heartbeat) > g.deadAfter
}

// fileSafe keeps a prefix key a file name.
func fileSafe(r rune) rune {
	if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r >= 'A' && r <= 'Z' || r == '-' {
		return r
	}
	return '_'
}
