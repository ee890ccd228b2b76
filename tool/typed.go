package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"

	"github.com/cohort-dev/cohort/llm"
)

// Spec describes a tool whose input decodes into In, a struct with the
// input's JSON field names: what New needs to make it a Tool, so that a
// tool's code is its schema, its traits and its Run, not the plumbing.
type Spec[In any] struct {
	Name        string
	Description string
	// Input is the input schema the model sees (Object(...)).
	Input Schema
	// Traits classify every call; TraitsFor, when set, classifies each
	// call by its decoded input instead.
	Traits    Traits
	TraitsFor func(in In) Traits
	// Run executes one call with its decoded input. As for Tool.Run, a
	// failure the model should read is an is_error Result, or a Failure
	// error (wrapped or not), which New turns into one; any other Go
	// error is an infrastructure failure.
	Run func(ctx context.Context, env *Env, in In) (Result, error)
	// Invalid, when set, renders an input that does not decode into In, for
	// a tool whose message says more than New's default (for instance the
	// input's expected shape).
	Invalid func(err error) Result
	// NullAsAbsent are optional fields whose null reads as absent
	// (DropNulls, before the input is checked against the schema).
	NullAsAbsent []string
}

// New returns the Tool s describes. Its definition is rendered once, so
// Def returns the same bytes every time (they are part of the cached
// prompt prefix). Each call's input is decoded into In before Run (an empty
// input decodes as {}); an input that does not decode is an is_error result
// naming the tool and what was wrong, or Spec.Invalid's (the engine has
// already checked it against the schema, so this means a type the schema
// cannot express).
func New[In any](s Spec[In]) Tool {
	return &typed[In]{spec: s, def: llm.ToolDef{Name: s.Name, Description: s.Description, InputSchema: s.Input.JSON(),
		NullAsAbsent: s.NullAsAbsent}}
}

type typed[In any] struct {
	spec Spec[In]
	def  llm.ToolDef
}

func (t *typed[In]) Def() llm.ToolDef { return t.def }

func (t *typed[In]) Traits(raw json.RawMessage) Traits {
	if t.spec.TraitsFor == nil {
		return t.spec.Traits
	}
	in, err := decode[In](raw)
	if err != nil {
		return Traits{} // the call fails in Run; classify it as unsafe
	}
	return t.spec.TraitsFor(in)
}

func (t *typed[In]) Run(ctx context.Context, env *Env, raw json.RawMessage) (Result, error) {
	in, err := decode[In](raw)
	if err != nil {
		if t.spec.Invalid != nil {
			return t.spec.Invalid(err), nil
		}
		return Errorf("%s input is not valid: %v", t.spec.Name, err), nil
	}
	res, err := t.spec.Run(ctx, env, in)
	var f Failure
	if errors.As(err, &f) {
		return Errorf("%s", string(f)), nil
	}
	return res, err
}

// decode reads a call's input into a fresh In; an empty input is {}.
func decode[In any](raw json.RawMessage) (In, error) {
	var in In
	if len(bytes.TrimSpace(raw)) == 0 {
		return in, nil
	}
	err := json.Unmarshal(raw, &in)
	return in, err
}
