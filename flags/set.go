package flags

import (
	"fmt"
)

// Value is a flag's resolved value and the source that set it.
type Value struct {
	Def
	// Value is 0 or 1 for a bool flag, the number for an int flag.
	Value int
	// Source is "default", a settings file path, "env COHORT_FLAG_<NAME>"
	// or "--flag".
	Source string
}

// String renders the value the way a user would write it ("on", "off", "120").
func (v Value) String() string { return format(v.Kind, v.Value) }

// Set holds every flag's resolved value. It is immutable once built, so it is
// safe for concurrent use. A nil *Set reads as all defaults, which lets code
// that was handed no flags behave as a fresh installation.
type Set struct {
	vals []Value // registry order
}

func defaults() []Value {
	vals := make([]Value, len(registry))
	for i, d := range registry {
		vals[i] = Value{Def: d, Value: d.Default, Source: SourceDefault}
	}
	return vals
}

// Default returns a Set with every flag at its default.
func Default() *Set { return &Set{vals: defaults()} }

func (s *Set) value(name string, want Kind) Value {
	i, ok := index[name]
	if !ok {
		panic(fmt.Sprintf("flags: %q is not a registered flag", name))
	}
	if registry[i].Kind != want {
		panic(fmt.Sprintf("flags: %q is a %s flag, read as %s", name, registry[i].Kind, want))
	}
	if s == nil {
		return Value{Def: registry[i], Value: registry[i].Default, Source: SourceDefault}
	}
	return s.vals[i]
}

// Bool reports whether the bool flag name is on. It panics if name is not a
// registered bool flag: that is a programming error, caught by any test that
// reaches the call (use the name constants).
func (s *Set) Bool(name string) bool { return s.value(name, KindBool).Value != 0 }

// Int returns the int flag name. It panics if name is not a registered int
// flag, like Bool.
func (s *Set) Int(name string) int { return s.value(name, KindInt).Value }

// Get returns the value of the flag called name, and false if there is none.
func (s *Set) Get(name string) (Value, bool) {
	i, ok := index[name]
	if !ok {
		return Value{}, false
	}
	if s == nil {
		return defaults()[i], true
	}
	return s.vals[i], true
}

// List returns every flag with its value and source, in display order. The
// slice is a copy.
func (s *Set) List() []Value {
	if s == nil {
		return defaults()
	}
	return append([]Value(nil), s.vals...)
}
