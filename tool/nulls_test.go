package tool

import (
	"encoding/json"
	"strings"
	"testing"
)

// A field a tool reads as absent when null passes the schema check as if
// it were left out; a null in any other field is still refused, naming it;
// an input with no such null is passed on byte for byte.
func TestDropNulls(t *testing.T) {
	tl := New(Spec[echoInput]{Name: "Echo", NullAsAbsent: []string{"loud"},
		Input: Object(Required("text", String("t")), Optional("loud", Boolean("l")), Optional("count", Integer("c")))})
	for _, c := range []struct{ in, refused string }{
		{`{"text":"hi","loud":null}`, ""},
		{`{"text":"hi","loud":null,"count":null}`, `"count"`},
		{`{"text":"hi","count":null}`, `"count"`},
		{`{"text":"null","loud":true}`, ""},
	} {
		in := DropNulls(tl, json.RawMessage(c.in))
		err := ValidateInput(tl.Def().InputSchema, in)
		switch {
		case c.refused == "" && err != nil:
			t.Errorf("%s: refused: %v", c.in, err)
		case c.refused != "" && (err == nil || !strings.Contains(err.Error(), c.refused)):
			t.Errorf("%s: %v; want %s refused", c.in, err, c.refused)
		case strings.Contains(string(in), `"loud":null`):
			t.Errorf("%s: the null stayed: %s", c.in, in)
		}
		if !strings.Contains(c.in, "null,") && !strings.Contains(c.in, "null}") && string(in) != c.in {
			t.Errorf("an input with no null field was rewritten: %s → %s", c.in, in)
		}
	}
}
