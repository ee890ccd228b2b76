package workflow

import (
	"strings"
	"testing"
)

// FuzzLoad: Load takes scripts a model writes; it must never panic, and a
// meta it accepts must have come from a literal with a name.
func FuzzLoad(f *testing.F) {
	for _, s := range []string{
		head + "return 1",
		"export const meta = {name: `a`, description: 'b', phases: [{title: 't'}]}\n",
		"export const meta = {name: n, description: 'b'}",
		"export const meta = {...x}",
		"export const meta = 5",
		"export const meta = {name: 'a', description: 'b'}\nconst = ",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		s, err := Load("fuzz.js", src)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.js") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if s.Meta.Name == "" && !strings.Contains(src, "name") {
			t.Fatalf("accepted a meta without a name: %q", src)
		}
	})
}
