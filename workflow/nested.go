package workflow

import (
	"fmt"

	"github.com/dop251/goja"
)

// workflow is workflow(nameOrRef, args): it runs a saved workflow inside
// this one, sharing its limits, budget and journal. A nested workflow
// cannot nest again: its own `workflow` is a function that throws.
func (r *run) workflow(call goja.FunctionCall) goja.Value {
	vm := r.vm
	name, ok := call.Argument(0).Export().(string)
	if !ok || name == "" {
		panic(vm.NewTypeError("workflow(name, args) needs the name of a saved workflow"))
	}
	if r.cfg.Resolve == nil {
		panic(vm.NewGoError(fmt.Errorf("workflow(%q): no saved workflows are available here", name)))
	}
	s, err := r.cfg.Resolve(name)
	if err != nil {
		panic(vm.NewGoError(fmt.Errorf("workflow(%q): %v", name, err)))
	}
	fn, err := r.compile(s)
	if err != nil {
		panic(vm.NewGoError(err))
	}
	deny := vm.ToValue(func(goja.FunctionCall) goja.Value {
		panic(vm.NewGoError(fmt.Errorf("workflow(): a nested workflow cannot start another (one level of nesting)")))
	})
	v, err := fn(goja.Undefined(), call.Argument(1), deny)
	if err != nil {
		panic(err)
	}
	return v
}
