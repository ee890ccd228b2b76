package workflow

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dop251/goja"
)

// Defaults for Config's limits.
const (
	DefaultMaxAgents = 1000
	DefaultMaxItems  = 1000
	DefaultTimeout   = time.Hour
	DefaultCPUSlice  = 10 * time.Second
)

// DefaultConcurrency is Claude Code's cap: min(16, CPUs−2), at least 1.
func DefaultConcurrency() int {
	return max(1, min(16, runtime.NumCPU()-2))
}

// Config is one run's settings. Spawner is required; zero values elsewhere
// take the defaults above.
type Config struct {
	Spawner     Spawner
	Args        json.RawMessage // the script's args, verbatim
	Dir         string          // the run's directory; the journal lives here (none when empty)
	Resume      bool            // replay finished steps from Dir's journal
	Concurrency int             // agents running at once
	MaxAgents   int             // agent() calls per run
	MaxItems    int             // items per parallel/pipeline call
	Budget      float64         // USD ceiling; 0 means none
	Timeout     time.Duration   // wall-clock bound on the whole run
	CPUSlice    time.Duration   // longest the script may run without awaiting
	// Resolve finds a saved workflow for workflow(name, args).
	Resolve func(name string) (*Script, error)
	// OnEvent, when set, is called on the script's goroutine for phases,
	// logs and each step's start and end. It must not block for long.
	OnEvent func(Event)
}

// errRunaway is the interrupt value for a script that held the VM too long.
type errRunaway struct{ slice time.Duration }

// run is the state of one execution. Everything but the channel and the
// wait group is touched only by the script's goroutine.
type run struct {
	cfg        Config
	capped     atomic.Pointer[string] // why a spend cap stopped an agent (AgentResult.Capped)
	vm         *goja.Runtime
	script     *Script
	cached     map[string]done
	started    map[string]bool
	journalErr atomic.Pointer[error]
	jr         *journal
	seen       map[string]int
	edited     bool // an edited script made a call the journal lacks: later calls run live
	same       bool // resuming the very script the journal recorded
	phase      string
	res        Result
	pending    int
	doneCh     chan func()
	sem        chan struct{}
	wg         sync.WaitGroup
	spawnCtx   context.Context
}

// Run executes script to completion on the calling goroutine's behalf: the
// VM runs on this goroutine only, agents run on their own goroutines and
// hand their answers back through a channel. All agent goroutines have
// returned when Run does.
func Run(ctx context.Context, script *Script, cfg Config) (Result, error) {
	if cfg.Spawner == nil {
		return Result{}, errors.New("workflow: Config.Spawner is required")
	}
	cfg = withDefaults(cfg)
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	r := &run{
		cfg: cfg, vm: goja.New(), script: script, cached: map[string]done{},
		seen: map[string]int{}, doneCh: make(chan func()), sem: make(chan struct{}, cfg.Concurrency),
		spawnCtx: ctx,
	}
	// On the way out: stop every agent, wait for their goroutines, and only
	// then close the journal they write to.
	defer func() {
		cancel()
		r.wg.Wait()
		if r.jr != nil {
			_ = r.jr.close()
		}
	}()
	if cfg.Dir != "" {
		path := filepath.Join(cfg.Dir, JournalName)
		if cfg.Resume {
			c, st, err := readJournal(path)
			if err != nil {
				return Result{}, err
			}
			r.cached, r.started = c, st
			r.same = st["script:"+scriptHash(script)]
		}
		jr, err := openJournal(path)
		if err != nil {
			return Result{}, err
		}
		r.jr = jr
		if err := jr.append(entry{Type: "run", Key: scriptHash(script), Prompt: script.Name}); err != nil {
			return Result{}, err
		}
	}
	if err := r.install(); err != nil {
		return Result{}, err
	}
	return r.main(ctx)
}

func withDefaults(c Config) Config {
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultConcurrency()
	}
	if c.MaxAgents <= 0 {
		c.MaxAgents = DefaultMaxAgents
	}
	if c.MaxItems <= 0 {
		c.MaxItems = DefaultMaxItems
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.CPUSlice <= 0 {
		c.CPUSlice = DefaultCPUSlice
	}
	if len(c.Args) == 0 {
		c.Args = json.RawMessage("null")
	}
	return c
}

// main starts the script and turns the event loop until its promise settles.
func (r *run) main(ctx context.Context) (Result, error) {
	fn, err := r.compile(r.script)
	if err != nil {
		return Result{}, err
	}
	args, err := r.fromJSON(r.cfg.Args)
	if err != nil {
		return Result{}, fmt.Errorf("%s: args: %v", r.script.Name, err)
	}
	var promise *goja.Promise
	if err := r.slice(func() error {
		v, err := fn(goja.Undefined(), args, r.vm.Get("workflow"))
		if err != nil {
			return err
		}
		p, ok := v.Export().(*goja.Promise)
		if !ok {
			return errors.New("the script body did not return a promise")
		}
		promise = p
		return nil
	}); err != nil {
		return r.res, r.scriptErr(err)
	}
	for promise.State() == goja.PromiseStatePending {
		if r.pending == 0 {
			return r.res, fmt.Errorf("%s: the script never settles: it awaits a promise that nothing will resolve", r.script.Name)
		}
		select {
		case f := <-r.doneCh:
			r.pending--
			if err := r.slice(func() error { f(); return nil }); err != nil {
				return r.res, r.scriptErr(err)
			}
		case <-ctx.Done():
			return r.res, fmt.Errorf("%s: the run stopped before the script finished: %w", r.script.Name, context.Cause(ctx))
		}
	}
	if promise.State() == goja.PromiseStateRejected {
		return r.res, fmt.Errorf("%s: the script threw: %s", r.script.Name, r.describe(promise.Result()))
	}
	out, err := r.toJSON(promise.Result())
	if err != nil {
		return r.res, fmt.Errorf("%s: the return value is not JSON: %v", r.script.Name, err)
	}
	r.res.Value = out
	if err := r.journalErr.Load(); err != nil {
		return r.res, fmt.Errorf("%s: finished, but the journal could not be written, so the run cannot be resumed: %w", r.script.Name, *err)
	}
	return r.res, nil
}

// slice runs f on the VM with the CPU bound armed: a script that computes
// for longer than CPUSlice without awaiting an agent is interrupted.
func (r *run) slice(f func() error) (err error) {
	t := time.AfterFunc(r.cfg.CPUSlice, func() { r.vm.Interrupt(errRunaway{r.cfg.CPUSlice}) })
	defer func() {
		if !t.Stop() {
			r.vm.ClearInterrupt()
		}
	}()
	defer func() {
		if p := recover(); p != nil {
			if ex, ok := p.(*goja.InterruptedError); ok {
				err = ex
				return
			}
			panic(p)
		}
	}()
	return f()
}

func (r *run) scriptErr(err error) error {
	var ie *goja.InterruptedError
	if errors.As(err, &ie) {
		if ra, ok := ie.Value().(errRunaway); ok {
			return fmt.Errorf("%s: the script ran for %v without awaiting an agent (an endless loop?), stopped %s", r.script.Name, ra.slice, firstFrame(ie.String()))
		}
	}
	var ex *goja.Exception
	if errors.As(err, &ex) {
		return fmt.Errorf("%s: the script threw: %s", r.script.Name, r.describe(ex.Value()))
	}
	return fmt.Errorf("%s: %v", r.script.Name, err)
}

// describe renders a thrown value with the stack that names its line.
func (r *run) describe(v goja.Value) string {
	if o, ok := v.(*goja.Object); ok {
		if st := o.Get("stack"); st != nil && !goja.IsUndefined(st) && st.String() != "" {
			return st.String()
		}
	}
	if v == nil {
		return "undefined"
	}
	return v.String()
}

func firstFrame(s string) string {
	for i := 0; i+3 < len(s); i++ {
		if s[i:i+3] == "at " {
			end := i
			for end < len(s) && s[end] != '\n' {
				end++
			}
			return s[i:end]
		}
	}
	return s
}

func (r *run) compile(s *Script) (goja.Callable, error) {
	prog, err := goja.Compile(s.Name, s.body, false)
	if err != nil {
		return nil, fmt.Errorf("%s: the script does not compile: %v", s.Name, err)
	}
	v, err := r.vm.RunProgram(prog)
	if err != nil {
		return nil, r.scriptErr(err)
	}
	fn, ok := goja.AssertFunction(v)
	if !ok {
		return nil, fmt.Errorf("%s: the script body is not a function", s.Name)
	}
	return fn, nil
}

func (r *run) fromJSON(raw json.RawMessage) (goja.Value, error) {
	parse, _ := goja.AssertFunction(r.vm.Get("JSON").ToObject(r.vm).Get("parse"))
	return parse(goja.Undefined(), r.vm.ToValue(string(raw)))
}

func (r *run) toJSON(v goja.Value) (json.RawMessage, error) {
	if v == nil || goja.IsUndefined(v) {
		return json.RawMessage("null"), nil
	}
	str, _ := goja.AssertFunction(r.vm.Get("JSON").ToObject(r.vm).Get("stringify"))
	out, err := str(goja.Undefined(), v)
	if err != nil {
		return nil, err
	}
	if goja.IsUndefined(out) {
		return json.RawMessage("null"), nil
	}
	return json.RawMessage(out.String()), nil
}

func (r *run) emit(e Event) {
	if r.cfg.OnEvent != nil {
		r.cfg.OnEvent(e)
	}
}

func scriptHash(s *Script) string {
	h := sha256.Sum256([]byte(s.Source))
	return hex.EncodeToString(h[:12])
}

// callKey names an agent() call by its inputs and how many identical calls
// came before it, so a resumed run finds the same step whatever order
// concurrent calls were made in.
func callKey(req AgentRequest, n int) string {
	b, _ := json.Marshal(req)
	h := sha256.Sum256(b)
	return fmt.Sprintf("%s#%d", hex.EncodeToString(h[:12]), n)
}
