package mailbox

// ring is a bounded set of ids that forgets the oldest first.
type ring struct {
	buf  []string
	head int // index of the oldest id
	n    int
	set  map[string]struct{}
}

func newRing(size int, initial []string) *ring {
	r := &ring{buf: make([]string, size), set: make(map[string]struct{}, size)}
	for _, id := range initial {
		r.add(id)
	}
	return r
}

func (r *ring) has(id string) bool {
	_, ok := r.set[id]
	return ok
}

func (r *ring) add(id string) {
	if r.has(id) {
		return
	}
	if r.n == len(r.buf) {
		delete(r.set, r.buf[r.head])
		r.buf[r.head] = id
		r.head = (r.head + 1) % len(r.buf)
	} else {
		r.buf[(r.head+r.n)%len(r.buf)] = id
		r.n++
	}
	r.set[id] = struct{}{}
}

// list returns the ids oldest first.
func (r *ring) list() []string {
	out := make([]string, r.n)
	for i := range out {
		out[i] = r.buf[(r.head+i)%len(r.buf)]
	}
	return out
}
