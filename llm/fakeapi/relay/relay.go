package relay

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/cohort-dev/cohort/internal/lazyre"

	"github.com/fsnotify/fsnotify"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// Config configures a Relay.
type Config struct {
	// Dir holds the requests and answers. It is created if missing and
	// must not hold another relay's files.
	Dir string
	// Timeout bounds the wait for one answer; 0 waits as long as the
	// client does. A request whose answer does not come in time fails
	// with overloaded_error, which a client retries (the retry is a new
	// request with the same messages).
	Timeout time.Duration
	// Poll is how often a waiting request also reads its answer file, in
	// case a file-system notification is missed (default 500 ms).
	Poll time.Duration
	// Logf, when set, gets a line when a request starts waiting and when
	// it is answered, rejected or abandoned.
	Logf func(format string, args ...any)
}

// Relay is a fakeapi.Policy that hands each request to a player through
// files in Config.Dir and streams the player's answer. It is safe for
// concurrent use.
type Relay struct {
	cfg Config

	mu      sync.Mutex
	entries []*entry
	convs   []*conv
	spawns  []*spawn
	agents  int
	book    toolbook

	watcher *fsnotify.Watcher
	closed  chan struct{}
	once    sync.Once
	wg      sync.WaitGroup
}

// entry is one request handed to the player.
type entry struct {
	n    int
	conv *conv
	// req is the request until it is answered or abandoned; then only its
	// turn is kept (a lead's requests run to megabytes).
	req   *fakeapi.Request
	turn  int
	state State
	news  string        // what the view shows as new, for the index
	kick  chan struct{} // the answer file changed
	// checked is the hash of the answer content last read.
	checked    [32]byte
	hasChecked bool
}

// State is where a request stands; it is the first line of its status
// file.
type State string

// The states of a request.
const (
	Waiting   State = "waiting"   // no answer yet
	Invalid   State = "invalid"   // the answer file is malformed; still waiting for a fixed one
	Answered  State = "answered"  // the answer was streamed
	Cancelled State = "cancelled" // the client gave up on the request
	TimedOut  State = "timeout"   // Config.Timeout passed without an answer
)

// final reports a state that no answer changes.
func (s State) final() bool { return s == Answered || s == Cancelled || s == TimedOut }

// New makes the directory, checks that no other relay's files are in it,
// writes an empty index and starts watching for answers. The caller must
// Close it after the server that uses it.
func New(cfg Config) (*Relay, error) {
	if cfg.Dir == "" {
		return nil, errors.New("relay: Config.Dir is empty; give the directory for requests and answers")
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("relay: the timeout %s is negative; use 0 to wait as long as the client does", cfg.Timeout)
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 500 * time.Millisecond
	}
	if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("relay: %w", err)
	}
	names, err := os.ReadDir(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("relay: %w", err)
	}
	for _, n := range names {
		if n.Name() == indexFile || n.Name() == pendingFile || requestFile.MatchString(n.Name()) {
			return nil, fmt.Errorf("relay: %s already holds a relay's files (%s); give an empty or new directory, or remove them", cfg.Dir, n.Name())
		}
	}
	r := &Relay{cfg: cfg, closed: make(chan struct{})}
	if err := r.writeIndex(); err != nil {
		return nil, err
	}
	if w, err := fsnotify.NewWatcher(); err != nil {
		r.logf("relay: no file-system notifications (%v); reading answer files every %s", err, cfg.Poll)
	} else if err := w.Add(cfg.Dir); err != nil {
		w.Close()
		r.logf("relay: cannot watch %s (%v); reading answer files every %s", cfg.Dir, err, cfg.Poll)
	} else {
		r.watcher = w
		r.wg.Add(1)
		go r.watch()
	}
	return r, nil
}

// Close stops watching and fails the requests still waiting. It is safe
// to call more than once.
func (r *Relay) Close() error {
	r.once.Do(func() {
		close(r.closed)
		if r.watcher != nil {
			r.watcher.Close()
		}
	})
	r.wg.Wait()
	return nil
}

// requestFile matches the files of one request.
var requestFile = lazyre.New(`^(\d{4,})\.(request\.md|request\.json|answer\.md|status)$`)

// watch kicks the request whose answer file changed, until Close.
func (r *Relay) watch() {
	defer r.wg.Done()
	for {
		select {
		case ev, ok := <-r.watcher.Events:
			if !ok {
				return
			}
			m := requestFile.FindStringSubmatch(filepath.Base(ev.Name))
			if m == nil || m[2] != "answer.md" {
				continue
			}
			n, _ := strconv.Atoi(m[1])
			r.mu.Lock()
			if n >= 1 && n <= len(r.entries) {
				select {
				case r.entries[n-1].kick <- struct{}{}:
				default:
				}
			}
			r.mu.Unlock()
		case err, ok := <-r.watcher.Errors:
			if !ok {
				return
			}
			r.logf("relay: watching %s: %v (answer files are still read every %s)", r.cfg.Dir, err, r.cfg.Poll)
		}
	}
}

// Policy hands req to the player: it writes the request's files and
// returns a reply that waits for the answer. Use it as Config.Policy of a
// fakeapi server.
func (r *Relay) Policy(req *fakeapi.Request) fakeapi.Reply {
	e, err := r.register(req)
	if err != nil {
		return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.ServerError, Message: "relay: " + err.Error()}}
	}
	return fakeapi.Reply{Label: fmt.Sprintf("relay %d (%s)", e.n, e.conv.label),
		Await: func(ctx context.Context) fakeapi.Reply { return r.await(ctx, e) }}
}

// register numbers req, places it in its conversation and writes its view,
// body and status, and the index.
func (r *Relay) register(req *fakeapi.Request) (*entry, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := &entry{n: len(r.entries) + 1, req: req, turn: req.Turn(), state: Waiting, kick: make(chan struct{}, 1)}
	r.learnAgentIDs(req.Messages)
	pl := r.place(req, e.n)
	e.conv = pl.conv
	e.news = newsOf(req.Messages, pl.from)
	view := r.view(e, pl)
	err := errors.Join(
		writeAtomic(r.path(e.n, "request.json"), req.Raw),
		writeAtomic(r.path(e.n, "request.md"), []byte(view)),
		r.writeStatus(e, nil, ""))
	if err != nil {
		return nil, err
	}
	e.conv.waiting = e
	r.entries = append(r.entries, e)
	if err := r.writeIndex(); err != nil {
		return nil, err
	}
	r.logf("relay: request %d waits (%s, turn %d; %s): %s", e.n, e.conv.name(), e.turn, e.news, r.path(e.n, "request.md"))
	return e, nil
}

// await waits for request e's answer file, the deadline, the client or
// Close, whichever comes first.
func (r *Relay) await(ctx context.Context, e *entry) fakeapi.Reply {
	var deadline <-chan time.Time
	if r.cfg.Timeout > 0 {
		t := time.NewTimer(r.cfg.Timeout)
		defer t.Stop()
		deadline = t.C
	}
	tick := time.NewTicker(r.cfg.Poll)
	defer tick.Stop()
	for {
		if reply, ok := r.check(e); ok {
			return reply
		}
		select {
		case <-e.kick:
		case <-tick.C:
		case <-ctx.Done():
			r.abandon(e, Cancelled, "the client cancelled the request (it went away, or stopped the agent); do not answer it")
			return fakeapi.Reply{}
		case <-deadline:
			msg := fmt.Sprintf("relay: no answer to request %d (%s) within %s", e.n, e.conv.label, r.cfg.Timeout)
			r.abandon(e, TimedOut, msg+"; the client may retry it as a new request")
			return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.Overloaded, Message: msg}}
		case <-r.closed:
			r.abandon(e, Cancelled, "the relay was closed")
			return fakeapi.Reply{Fault: &fakeapi.Fault{Kind: fakeapi.Overloaded, Message: "relay: closed"}}
		}
	}
}

// check reads e's answer file if it changed since last read, and either
// accepts it (the reply to stream) or records why it is malformed.
func (r *Relay) check(e *entry) (fakeapi.Reply, bool) {
	name := answerName(e.n)
	data, err := os.ReadFile(filepath.Join(r.cfg.Dir, name))
	if err != nil {
		return fakeapi.Reply{}, false // not written yet
	}
	sum := sha256.Sum256(data)
	r.mu.Lock()
	defer r.mu.Unlock()
	if e.state.final() || e.hasChecked && e.checked == sum {
		return fakeapi.Reply{}, false
	}
	e.checked, e.hasChecked = sum, true
	tools := e.req.Tools
	if tools == nil {
		tools = []fakeapi.Tool{} // none offered: every call is checked
	}
	blocks, err := ParseAnswer(name, data, tools)
	if err != nil {
		e.state = Invalid
		r.report(r.writeStatus(e, &sum, err.Error()+"\nFix the file and save it again: the request is still waiting."))
		r.report(r.writeIndex())
		r.logf("relay: request %d: %v", e.n, err)
		return fakeapi.Reply{}, false
	}
	r.answered(e, blocks)
	e.state, e.req = Answered, nil
	e.conv.waiting = nil
	r.report(r.writeStatus(e, &sum, ""))
	r.report(r.writeIndex())
	r.logf("relay: request %d (%s) answered with %s", e.n, e.conv.label, blockSummary(blocks))
	return fakeapi.Reply{Content: blocks, Label: fmt.Sprintf("relay %d (%s)", e.n, e.conv.label)}, true
}

// abandon ends e without an answer.
func (r *Relay) abandon(e *entry, s State, why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e.state.final() {
		return
	}
	e.state, e.req = s, nil
	if e.conv.waiting == e {
		e.conv.waiting = nil
	}
	r.report(appendFile(r.path(e.n, "request.md"), fmt.Sprintf("\n**%s**: %s\n", s, why)))
	r.report(r.writeStatus(e, nil, why))
	r.report(r.writeIndex())
	r.logf("relay: request %d (%s) %s: %s", e.n, e.conv.label, s, why)
}

func (r *Relay) report(err error) {
	if err != nil {
		r.logf("relay: %v", err)
	}
}

func (r *Relay) logf(format string, args ...any) {
	if r.cfg.Logf != nil {
		r.cfg.Logf(format, args...)
	}
}
