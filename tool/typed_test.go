package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

type echoInput struct {
	Text  string `json:"text"`
	Loud  bool   `json:"loud"`
	Count int    `json:"count"`
}

func echoTool() Tool {
	return New(Spec[echoInput]{
		Name: "Echo", Description: "Repeats its text.",
		Input: Object(Required("text", String("What to say.")), Optional("loud", Boolean("Shout.")),
			Optional("count", Integer("How often."))),
		TraitsFor: func(in echoInput) Traits { return Traits{ReadOnly: !in.Loud, ConcurrencySafe: true} },
		Run: func(_ context.Context, env *Env, in echoInput) (Result, error) {
			text := strings.Repeat(in.Text, max(in.Count, 1))
			if in.Loud {
				text = strings.ToUpper(text)
			}
			return Text(env.Caller.ID + ": " + text), nil
		},
	})
}

func TestTypedToolDecodesItsInput(t *testing.T) {
	tl := echoTool()
	res, err := tl.Run(t.Context(), &Env{Caller: Caller{ID: "a1"}}, json.RawMessage(`{"text":"hi","loud":true,"count":2}`))
	if err != nil || res.IsError || res.TextOf() != "a1: HIHI" {
		t.Fatalf("Run: %+v, %v", res, err)
	}
	if got := tl.Traits(json.RawMessage(`{"text":"x"}`)); !got.ReadOnly || !got.ConcurrencySafe {
		t.Errorf("a quiet call: %+v, want read-only and concurrency-safe", got)
	}
	if got := tl.Traits(json.RawMessage(`{"text":"x","loud":true}`)); got.ReadOnly {
		t.Errorf("a loud call counts as read-only: %+v", got)
	}
	if got := tl.Traits(json.RawMessage(`{"text":7}`)); got != (Traits{}) {
		t.Errorf("an undecodable call: %+v, want no traits (unsafe)", got)
	}
}

func TestTypedToolRefusesInputItCannotDecode(t *testing.T) {
	res, err := echoTool().Run(t.Context(), &Env{}, json.RawMessage(`{"text":["not","a","string"]}`))
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.HasPrefix(res.TextOf(), "Echo input is not valid: ") {
		t.Fatalf("got %+v, want an is_error result naming the tool", res)
	}
}

func TestTypedToolDefinitionIsStable(t *testing.T) {
	tl := echoTool()
	a, b := tl.Def(), tl.Def()
	if a.Name != "Echo" || a.Description != "Repeats its text." || !bytes.Equal(a.InputSchema, b.InputSchema) {
		t.Fatalf("definitions differ or are wrong: %+v vs %+v", a, b)
	}
	if err := ValidateInput(a.InputSchema, json.RawMessage(`{"text":"ok"}`)); err != nil {
		t.Fatalf("the schema refuses a valid input: %v", err)
	}
}

func TestTypedToolTurnsFailuresIntoResults(t *testing.T) {
	infra := errors.New("disk on fire")
	tl := New(Spec[echoInput]{
		Name: "Echo", Input: Object(Required("text", String("What to say."))),
		Run: func(_ context.Context, _ *Env, in echoInput) (Result, error) {
			switch in.Text {
			case "fail":
				return Text("ignored"), Failf("cannot say %q", in.Text)
			case "wrapped":
				return Result{}, fmt.Errorf("echo: %w", Failure("said too much"))
			}
			return Result{}, infra
		},
	})
	for _, tt := range []struct{ text, want string }{{"fail", `cannot say "fail"`}, {"wrapped", "said too much"}} {
		res, err := tl.Run(t.Context(), &Env{}, json.RawMessage(`{"text":"`+tt.text+`"}`))
		if err != nil || !res.IsError || res.TextOf() != tt.want {
			t.Errorf("%s: got %+v, %v; want an is_error result %q", tt.text, res, err, tt.want)
		}
	}
	if _, err := tl.Run(t.Context(), &Env{}, json.RawMessage(`{"text":"other"}`)); !errors.Is(err, infra) {
		t.Errorf("an infrastructure error became %v", err)
	}
}

func TestTypedToolInvalidRendersDecodeErrors(t *testing.T) {
	tl := New(Spec[echoInput]{
		Name: "Echo", Input: Object(Required("text", String("What to say."))),
		Invalid: func(err error) Result { return Errorf("Bad Echo input: %v. Expected {\"text\": string}.", err) },
		Run:     func(context.Context, *Env, echoInput) (Result, error) { t.Error("Run called"); return Result{}, nil },
	})
	res, err := tl.Run(t.Context(), &Env{}, json.RawMessage(`[]`))
	if err != nil || !res.IsError || !strings.HasPrefix(res.TextOf(), "Bad Echo input: json: cannot unmarshal array") ||
		!strings.HasSuffix(res.TextOf(), `Expected {"text": string}.`) {
		t.Fatalf("got %+v, %v", res, err)
	}
}

func TestTypedToolTakesEmptyInputAsEmptyObject(t *testing.T) {
	for _, raw := range []string{"", "  \n"} {
		res, err := echoTool().Run(t.Context(), &Env{Caller: Caller{ID: "a1"}}, json.RawMessage(raw))
		if err != nil || res.IsError || res.TextOf() != "a1: " {
			t.Errorf("input %q: %+v, %v", raw, res, err)
		}
		if got := echoTool().Traits(json.RawMessage(raw)); !got.ReadOnly {
			t.Errorf("input %q classified as %+v, want the traits of a quiet call", raw, got)
		}
	}
}
