package workflow

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/cohort-dev/cohort/tool"
	"github.com/dop251/goja"
)

// install defines the script API on the VM's global object.
func (r *run) install() error {
	vm := r.vm
	g := vm.GlobalObject()
	set := func(name string, v any) {
		if err := g.Set(name, v); err != nil {
			panic(err)
		}
	}
	set("__checkItems", func(n int, what string) {
		if n > r.cfg.MaxItems {
			panic(vm.NewGoError(fmt.Errorf("%s() got %d items, more than the limit of %d per call; split the work into batches", what, n, r.cfg.MaxItems)))
		}
	})
	set("__dropped", func(what string, i int, e goja.Value) {
		r.emit(Event{Kind: "log", Text: fmt.Sprintf("%s item %d dropped to null: %s", what, i, r.describe(e))})
	})
	set("agent", r.agent)
	set("phase", func(title string) {
		r.phase = title
		r.emit(Event{Kind: "phase", Text: title})
	})
	set("log", func(call goja.FunctionCall) goja.Value {
		parts := make([]string, len(call.Arguments))
		for i, a := range call.Arguments {
			parts[i] = a.String()
		}
		r.emit(Event{Kind: "log", Text: strings.Join(parts, " ")})
		return goja.Undefined()
	})
	args, err := r.fromJSON(r.cfg.Args)
	if err != nil {
		return fmt.Errorf("workflow args are not JSON: %v", err)
	}
	set("args", args)
	budget := vm.NewObject()
	total := math.Inf(1)
	if r.cfg.Budget > 0 {
		total = r.cfg.Budget
	}
	_ = budget.Set("total", total)
	_ = budget.Set("spent", func() float64 { return r.res.Cost })
	_ = budget.Set("remaining", func() float64 { return math.Max(0, total-r.res.Cost) })
	set("budget", budget)
	set("workflow", r.workflow)
	if _, err := vm.RunString(prelude); err != nil {
		return fmt.Errorf("workflow prelude: %v", err)
	}
	return nil
}

// agent is agent(prompt, opts): it returns a promise for the subagent's
// answer, served from the journal when the step already finished.
func (r *run) agent(call goja.FunctionCall) goja.Value {
	vm := r.vm
	prompt, ok := call.Argument(0).Export().(string)
	if !ok || strings.TrimSpace(prompt) == "" {
		panic(vm.NewTypeError("agent(prompt, opts) needs a non-empty prompt string"))
	}
	req := AgentRequest{Prompt: prompt, Phase: r.phase}
	if o := call.Argument(1); !goja.IsUndefined(o) && !goja.IsNull(o) {
		obj := o.ToObject(vm)
		str := func(k string) string {
			v := obj.Get(k)
			if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
				return ""
			}
			return v.String()
		}
		req.Label, req.Model, req.Effort, req.Isolation, req.AgentType = str("label"), str("model"), str("effort"), str("isolation"), str("agentType")
		if p := str("phase"); p != "" {
			req.Phase = p
		}
		if s := obj.Get("schema"); s != nil && !goja.IsUndefined(s) && !goja.IsNull(s) {
			raw, err := r.toJSON(s)
			if err != nil {
				panic(vm.NewTypeError("agent(): schema is not JSON: %v", err))
			}
			if err := tool.CheckSchema(raw); err != nil {
				panic(vm.NewTypeError("agent(): schema is not a usable JSON Schema: %v", err))
			}
			req.Schema = raw
		}
		if req.Isolation != "" && req.Isolation != "worktree" && req.Isolation != "remote" {
			panic(vm.NewTypeError("agent(): isolation %q is not supported; use 'worktree', 'remote' or leave it out", req.Isolation))
		}
	}
	if req.Model == "" {
		req.Model = r.phaseModel(req.Phase)
	}
	if r.res.Agents >= r.cfg.MaxAgents {
		panic(vm.NewGoError(fmt.Errorf("agent(): this run already made %d agent calls, the limit per run", r.cfg.MaxAgents)))
	}
	if r.cfg.Budget > 0 && r.res.Cost >= r.cfg.Budget {
		panic(vm.NewGoError(fmt.Errorf("agent(): the budget of $%.4f is spent ($%.4f); no more agents can start", r.cfg.Budget, r.res.Cost)))
	}
	if why := r.capped.Load(); why != nil {
		panic(vm.NewGoError(fmt.Errorf("agent(): %s; no more agents can start", *why)))
	}
	r.res.Agents++
	seq := r.res.Agents
	r.phaseCost(req.Phase)
	key := callKey(req, r.seen[callKey(req, 0)])
	r.seen[callKey(req, 0)]++

	promise, resolve, _ := vm.NewPromise()
	r.emit(Event{Kind: "agent_start", Text: req.Label, Phase: req.Phase, Seq: seq})
	if d, ok := r.cached[key]; ok && !r.edited {
		r.res.Replayed++
		r.pending++
		r.wg.Go(func() {
			r.deliver(func() { r.settle(resolve, d.Value, d.Cost, seq, req, true) })
		})
		return vm.ToValue(promise)
	}
	if r.cfg.Resume && !r.same && !r.hasStart(key) {
		// The script was edited and this call is new to the journal: from
		// here on nothing is replayed, since its answer may change what
		// later calls mean. (With the script unchanged, a call the journal
		// lacks is one the crashed run had not reached yet.)
		r.edited = true
	}
	r.res.Live++
	r.pending++
	r.wg.Go(func() {
		value, cost := r.spawn(key, seq, req)
		r.deliver(func() { r.settle(resolve, value, cost, seq, req, false) })
	})
	return vm.ToValue(promise)
}

// hasStart reports whether the journal knows the call at all (finished or
// not); unknown keys mean the script changed.
func (r *run) hasStart(key string) bool {
	_, ok := r.cached[key]
	return ok || r.started[key]
}

// deliver hands f to the script's goroutine, or drops it once the run is over.
func (r *run) deliver(f func()) {
	select {
	case r.doneCh <- f:
	case <-r.spawnCtx.Done():
	}
}

// settle resolves an agent() promise on the script's goroutine.
func (r *run) settle(resolve func(any) error, value json.RawMessage, cost float64, seq int, req AgentRequest, replayed bool) {
	r.res.Cost += cost
	pc := r.phaseCost(req.Phase)
	pc.Agents++
	pc.Cost += cost
	r.emit(Event{Kind: "agent_end", Text: req.Label, Phase: req.Phase, Seq: seq, Replayed: replayed})
	v, err := r.fromJSON(value)
	if err != nil {
		v = goja.Null()
	}
	if err := resolve(v); err != nil {
		panic(err)
	}
}

// spawn runs one step live, journaling it before and after. Its answer is
// the agent's text, or with a schema the validated object (asked again
// once, then null); a failed agent is null.
func (r *run) spawn(key string, seq int, req AgentRequest) (json.RawMessage, float64) {
	ctx := r.spawnCtx
	select {
	case r.sem <- struct{}{}:
	case <-ctx.Done():
		return json.RawMessage("null"), 0
	}
	defer func() { <-r.sem }()
	r.journal(entry{Type: "start", Key: key, Seq: seq, Prompt: req.Prompt})
	var cost float64
	value, err := func() (json.RawMessage, error) {
		first := req
		if len(req.Schema) > 0 {
			first.Prompt = req.Prompt + "\n\n" + schemaInstruction(req.Schema)
		}
		res, err := r.cfg.Spawner.Spawn(ctx, first)
		cost += res.Cost
		if err != nil {
			return nil, err
		}
		if res.Capped != "" {
			r.capped.Store(&res.Capped)
			return json.RawMessage("null"), nil
		}
		if len(req.Schema) == 0 {
			return json.Marshal(res.Text)
		}
		obj, verr := structured(req.Schema, res.Text)
		if verr == nil {
			return obj, nil
		}
		again := req
		again.Prompt = req.Prompt + "\n\n" + correction(req.Schema, verr)
		res, err = r.cfg.Spawner.Spawn(ctx, again)
		cost += res.Cost
		if err != nil {
			return nil, err
		}
		if obj, verr = structured(req.Schema, res.Text); verr != nil {
			return json.RawMessage("null"), nil
		}
		return obj, nil
	}()
	if err != nil {
		r.journal(entry{Type: "fail", Key: key, Seq: seq, Cost: cost, Error: err.Error()})
		return json.RawMessage("null"), cost
	}
	r.journal(entry{Type: "end", Key: key, Seq: seq, Value: value, Cost: cost})
	return value, cost
}

func (r *run) journal(e entry) {
	if r.jr == nil {
		return
	}
	if err := r.jr.append(e); err != nil {
		r.journalErr.Store(&err)
	}
}

// phaseCost returns the phase's entry in the result, adding it when the
// phase's first agent() is called: the script's goroutine makes calls in a
// deterministic order, so the list's order does not depend on which agent
// finished first.
func (r *run) phaseCost(phase string) *PhaseCost {
	for i := range r.res.Phases {
		if r.res.Phases[i].Title == phase {
			return &r.res.Phases[i]
		}
	}
	r.res.Phases = append(r.res.Phases, PhaseCost{Title: phase})
	return &r.res.Phases[len(r.res.Phases)-1]
}

// phaseModel is the model meta.phases gives the phase, if any: an agent()
// without a model of its own runs on it.
func (r *run) phaseModel(phase string) string {
	for _, p := range r.script.Meta.Phases {
		if p.Title == phase {
			return p.Model
		}
	}
	return ""
}
