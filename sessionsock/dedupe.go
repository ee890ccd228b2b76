package sessionsock

import "sync"

// recent remembers the ids being delivered and the last delivered ones, so
// that a message re-sent after a lost acknowledgement is not delivered
// twice. Safe for concurrent use.
type recent struct {
	mu    sync.Mutex
	byID  map[string]*delivery
	ring  []string // delivered ids, oldest overwritten first
	next  int
	count int
}

// delivery is one handler call; done closes when it returns, and err is
// set before that.
type delivery struct {
	done chan struct{}
	err  error
}

func newRecent(window int) *recent {
	return &recent{byID: make(map[string]*delivery), ring: make([]string, window)}
}

// begin returns the delivery of id. first is true when the caller must
// make it (and then call finish); otherwise the caller waits on done.
func (r *recent) begin(id string) (d *delivery, first bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if d, ok := r.byID[id]; ok {
		return d, false
	}
	d = &delivery{done: make(chan struct{})}
	r.byID[id] = d
	return d, true
}

// finish records the outcome of d. A failed delivery is forgotten at once;
// a successful one is remembered until window newer ones have succeeded.
func (r *recent) finish(id string, d *delivery, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d.err = err
	close(d.done)
	if err != nil {
		delete(r.byID, id)
		return
	}
	if r.count == len(r.ring) {
		delete(r.byID, r.ring[r.next])
	} else {
		r.count++
	}
	r.ring[r.next] = id
	r.next = (r.next + 1) % len(r.ring)
}
