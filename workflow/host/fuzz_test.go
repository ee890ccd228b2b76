package host

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzReader: whatever the other side writes, reading it ends in a clean
// EOF or an ErrProtocol naming a line, never a panic or a message that
// lacks the fields its type needs.
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		`{"type":"run","run":{"name":"x.js","source":"x"}}` + "\n",
		`{"type":"answer","id":1,"answer":{"text":"x"}}` + "\n" + `{"type":"done"}` + "\n",
		`{"type":"agent","id":2,"agent":{"prompt":"p"}}` + "\n",
		`{"type":"agent","id":-1,"agent":{}}` + "\n",
		"not json\n", `{"type":"done"`, "\n\n", `{"type":7}` + "\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rd := newReader(bytes.NewReader(data), "the fuzzer")
		for range 1000 {
			m, err := rd.next()
			if errors.Is(err, io.EOF) && !errors.Is(err, ErrProtocol) {
				return
			}
			if err != nil {
				if !errors.Is(err, ErrProtocol) {
					t.Fatalf("error %v is not ErrProtocol", err)
				}
				return
			}
			if err := m.check(); err != nil {
				t.Fatalf("a message that fails its own check was returned: %v", err)
			}
		}
	})
}
