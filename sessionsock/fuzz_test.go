package sessionsock

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"testing"

	"github.com/cohort-dev/cohort/mailbox"
)

// FuzzHandle feeds arbitrary lines to the message decoder: every line gets
// a reply, and only valid messages reach the handler.
func FuzzHandle(f *testing.F) {
	for _, s := range []string{
		`{"id":"a1","from":"alice","to":"team-lead","text":"hi","timestamp":"2026-01-02T03:04:05.000Z"}`,
		`{"from":"ci","text":"build broke"}`,
		`{"from":"a","text":"x","type":"shutdown_request","summary":"s","color":"red"}`,
		`{"from":"","text":""}`, `null`, `[]`, `{"id":1}`, `{"timestamp":"x"}`, "\xff\xfe", `{"from":"a","text":"\ud800"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var got []mailbox.Message
		l := &Listener{cfg: withDefaults(Config{Handler: func(_ context.Context, m mailbox.Message) error {
			got = append(got, m)
			return nil
		}}), seen: newRecent(8)}
		l.log = l.cfg.Logger
		r := l.handle(context.Background(), line)
		if r.OK != (len(got) == 1) || len(got) > 1 {
			t.Fatalf("reply %+v after %d deliveries", r, len(got))
		}
		if !r.OK {
			if r.Error == "" {
				t.Fatal("a refusal without a reason")
			}
			return
		}
		if err := got[0].Validate(); err != nil || r.ID != got[0].ID {
			t.Fatalf("delivered %+v (%v) with reply %+v", got[0], err, r)
		}
	})
}

// FuzzReadLine checks that framing never returns more than the limit and
// that an oversized line costs only itself.
func FuzzReadLine(f *testing.F) {
	f.Add([]byte("a\nbb\n\nccc"), 2)
	f.Add([]byte("0123456789\nok\n"), 4)
	f.Fuzz(func(t *testing.T, data []byte, max int) {
		if max < 1 || max > 64 {
			return
		}
		br := bufio.NewReaderSize(bytes.NewReader(data), 16)
		want := bytes.Split(data, []byte("\n"))
		complete := want[:len(want)-1] // the last piece has no newline
		for i := 0; ; i++ {
			line, tooLong, err := readLine(br, max)
			if err != nil {
				if i != len(complete) {
					t.Fatalf("error %v after %d of %d lines", err, i, len(complete))
				}
				if last := want[len(want)-1]; len(last) > 0 != errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("error %v with a trailing %q", err, last)
				}
				return
			}
			exp := bytes.TrimSuffix(complete[i], []byte("\r"))
			switch {
			case len(complete[i]) > max:
				if !tooLong {
					t.Fatalf("line %d (%d bytes) not reported too long", i, len(complete[i]))
				}
			case tooLong || !bytes.Equal(line, exp):
				t.Fatalf("line %d = %q (too long %v), want %q", i, line, tooLong, exp)
			}
		}
	})
}
