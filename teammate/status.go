package teammate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/team"
)

// State is a teammate's published state.
type State string

// Teammate states.
const (
	StateStarting State = "starting"
	StateBusy     State = "busy"
	StateIdle     State = "idle"
	StateStopped  State = "stopped" // exited after a shutdown
	StateDead     State = "dead"    // seen by the lead: gone without shutting down
)

// Status is the content of a teammate's status file.
type Status struct {
	Name      string    `json:"name"`
	State     State     `json:"state"`
	PID       int       `json:"pid"`
	Seq       uint64    `json:"seq"`
	Heartbeat time.Time `json:"heartbeat"`
	// Host tells a process on another machine apart (its pid means nothing
	// here).
	Host string `json:"host,omitempty"`
	// Reason says why a teammate stopped, when it was not asked to (its
	// lead was gone).
	Reason string `json:"reason,omitempty"`
	// Spend is what its model requests have cost so far, per model: a
	// teammate in a process of its own publishes it so that its lead
	// counts it in the session's totals.
	Spend Spend `json:"spend,omitempty"`
}

// Spend is usage and cost per model.
type Spend map[string]ModelSpend

// ModelSpend is one model's usage and cost.
type ModelSpend struct {
	llm.Usage
	CostUSD float64 `json:"cost_usd"`
}

// Total is the spend of all models together.
func (s Spend) Total() (llm.Usage, float64) {
	var u llm.Usage
	var cost float64
	for _, m := range s {
		u, cost = u.Add(m.Usage), cost+m.CostUSD
	}
	return u, cost
}

// readStatus reads a member's status from its team's board; a missing one
// is (zero, false, nil). On a board written from other machines the
// heartbeat is when this process first saw that version, less how long
// it was held before the server stored it (team.StatusBoard), so its age
// is measured on one clock and a heartbeat put back late is old.
func readStatus(b team.StatusBoard, name string) (Status, bool, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	data, seen, ok, err := b.Get(ctx, name)
	if !ok || err != nil {
		return Status{}, false, err
	}
	var s Status
	if err := json.Unmarshal(data, &s); err != nil {
		return Status{}, false, fmt.Errorf("status of %s: %w", name, err)
	}
	if !seen.IsZero() {
		s.Heartbeat = seen
	}
	return s, true, nil
}

// publisher writes one member's status to its team's board. Safe for
// concurrent use.
type publisher struct {
	mu    sync.Mutex
	board team.StatusBoard
	st    Status
	now   func() time.Time
}

func newPublisher(b team.StatusBoard, name string, now func() time.Time) (*publisher, error) {
	p := &publisher{board: b, now: now}
	host, _ := os.Hostname()
	p.st = Status{Name: name, State: StateStarting, PID: os.Getpid(), Host: host}
	return p, p.writeLocked()
}

// set publishes a new state.
func (p *publisher) set(s State) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.st.State == s {
		return nil
	}
	p.st.State = s
	p.st.Seq++
	return p.writeLocked()
}

// stop publishes stopped with a reason.
func (p *publisher) stop(reason string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.st.State, p.st.Reason = StateStopped, reason
	p.st.Seq++
	_ = p.writeLocked()
}

// setSpend records the spend to publish with the next write (a state
// change or a heartbeat; the turn's end is one): not a write of its own
// per model response.
func (p *publisher) setSpend(s Spend) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.st.Spend = s
}

func (p *publisher) state() State {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.st.State
}

// beat refreshes the heartbeat.
func (p *publisher) beat() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.writeLocked()
}

func (p *publisher) writeLocked() error {
	p.st.Heartbeat = p.now().UTC()
	data, err := json.Marshal(p.st)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return p.board.Put(ctx, p.st.Name, data)
}

// onThisHost reports whether a status was published on this machine (an
// empty host is an older Cohort's, which only ran here), where its pid
// means something.
func onThisHost(host string) bool {
	h, _ := os.Hostname()
	return host == "" || host == h
}

// processAlive reports whether pid runs on this host.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// statusIn reads member's status on teamName's board in store.
func statusIn(store *team.Store, teamName, member string) (Status, bool, error) {
	b, err := store.Statuses(teamName)
	if err != nil {
		return Status{}, false, err
	}
	return readStatus(b, member)
}

// markStatusDead publishes dead for a member that stopped beating without
// saying so (st is its last status), unless it said stopped.
func markStatusDead(store *team.Store, teamName, member string, now func() time.Time) {
	b, err := store.Statuses(teamName)
	if err != nil {
		return
	}
	if st, ok, _ := readStatus(b, member); ok && st.State != StateStopped {
		pub := &publisher{board: b, st: st, now: now}
		_ = pub.set(StateDead)
	}
}
