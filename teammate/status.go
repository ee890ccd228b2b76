package teammate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/cohort-dev/cohort/internal/atomicfile"
	"github.com/cohort-dev/cohort/llm"
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

// statusPath is where a teammate publishes its status.
func statusPath(teamDir, name string) string {
	return filepath.Join(teamDir, "status", name+".json")
}

// readStatus reads a status file; a missing one is (zero, false, nil).
func readStatus(teamDir, name string) (Status, bool, error) {
	data, err := os.ReadFile(statusPath(teamDir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return Status{}, false, nil
	}
	if err != nil {
		return Status{}, false, err
	}
	var s Status
	if err := json.Unmarshal(data, &s); err != nil {
		return Status{}, false, fmt.Errorf("%s: %w", statusPath(teamDir, name), err)
	}
	return s, true, nil
}

// publisher writes one teammate's status file. Safe for concurrent use.
type publisher struct {
	mu   sync.Mutex
	path string
	st   Status
	now  func() time.Time
}

func newPublisher(teamDir, name string, now func() time.Time) (*publisher, error) {
	p := &publisher{path: statusPath(teamDir, name), now: now}
	host, _ := os.Hostname()
	p.st = Status{Name: name, State: StateStarting, PID: os.Getpid(), Host: host}
	if err := os.MkdirAll(filepath.Dir(p.path), 0o700); err != nil {
		return nil, err
	}
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
	return atomicfile.Write(p.path, data, 0o600)
}

// processAlive reports whether pid runs on this host.
func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
