package trace

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	names = `{"name":"process_name","ph":"M","ts":0,"pid":1,"tid":0,"args":{"name":"p"}},
{"name":"thread_name","ph":"M","ts":0,"pid":1,"tid":1,"args":{"name":"main"}},
{"name":"thread_sort_index","ph":"M","ts":0,"pid":1,"tid":1,"args":{"sort_index":5}}`
	parent = `{"name":"parent","cat":"a","ph":"X","ts":0,"dur":10,"pid":1,"tid":1}`
	child  = `{"name":"child","cat":"b","ph":"X","ts":2,"dur":3,"pid":1,"tid":1,"args":{"unfinished":true}}`
)

func TestValidate(t *testing.T) {
	t.Parallel()
	main := func(spans, instants map[string]int) []Track {
		return []Track{{PID: 1, TID: 1, Name: "main", SortIndex: 5, Spans: spans, Instants: instants}}
	}
	tests := []struct {
		name    string
		in      string
		want    Summary
		wantErr string
	}{{
		name: "array",
		in:   "[" + names + "," + child + "," + parent + `,{"name":"mark","ph":"i","ts":4,"pid":1,"tid":1,"s":"t"}]`,
		want: Summary{Process: "p", Events: 6, Spans: spans("a", 1, "b", 1), Unfinished: 1,
			Tracks: main(spans("a", 1, "b", 1), spans("mark", 1))},
	}, {
		name: "truncated array",
		in:   "[\n" + names + ",\n" + parent,
		want: Summary{Process: "p", Events: 4, Truncated: true, Spans: spans("a", 1), Tracks: main(spans("a", 1), nil)},
	}, {
		name: "object",
		in:   `{"displayTimeUnit":"ms","traceEvents":[` + names + "," + parent + `],"otherData":{"v":1}}`,
		want: Summary{Process: "p", Events: 4, Spans: spans("a", 1), Tracks: main(spans("a", 1), nil)},
	}, {
		name: "spans that touch nest",
		in:   "[" + names + "," + parent + `,{"name":"next","ph":"X","ts":10,"dur":5,"pid":1,"tid":1},{"name":"in","ph":"X","ts":10,"dur":5,"pid":1,"tid":1}]`,
		want: Summary{Process: "p", Events: 6, Spans: spans("a", 1, "", 2), Tracks: main(spans("a", 1, "", 2), nil)},
	}, {
		name: "truncated after a comma",
		in:   "[\n" + names + ",\n" + parent + ",\n",
		want: Summary{Process: "p", Events: 4, Truncated: true, Spans: spans("a", 1), Tracks: main(spans("a", 1), nil)},
	}, {
		name: "empty array",
		in:   "[]",
		want: Summary{},
	}, {
		name:    "overlapping spans",
		in:      "[" + names + "," + parent + `,{"name":"late","ph":"X","ts":5,"dur":10,"pid":1,"tid":1}]`,
		wantErr: `"late" (event 5, 5–15 µs) overlaps "parent" (event 4, 0–10 µs)`,
	}, {
		name:    "child written first with the parent's start",
		in:      "[" + names + `,{"name":"c","ph":"X","ts":0,"dur":3,"pid":1,"tid":1},` + parent + "]",
		wantErr: `"parent" (event 5, 0–10 µs) overlaps "c"`,
	}, {
		name:    "thread without a name",
		in:      `[{"name":"x","ph":"X","ts":0,"dur":1,"pid":1,"tid":7}]`,
		wantErr: "tid 7 has events but no thread_name",
	}, {
		name:    "missing ts",
		in:      `[{"name":"x","ph":"i","pid":1,"tid":1}]`,
		wantErr: `event 1 (byte 1): no "ts"`,
	}, {
		name:    "missing tid",
		in:      `[{"name":"x","ph":"i","ts":1,"pid":1}]`,
		wantErr: `no "tid"`,
	}, {
		name:    "missing ph",
		in:      `[{"name":"x","ts":1,"pid":1,"tid":1}]`,
		wantErr: `no "ph"`,
	}, {
		name:    "unknown ph",
		in:      `[{"name":"x","ph":"Q","ts":1,"pid":1,"tid":1}]`,
		wantErr: `unknown ph "Q"`,
	}, {
		name:    "ts as a string",
		in:      `[{"name":"x","ph":"i","ts":"1","pid":1,"tid":1}]`,
		wantErr: `"ts" is "1", not a number`,
	}, {
		name:    "fractional tid",
		in:      `[{"name":"x","ph":"i","ts":1,"pid":1,"tid":1.5}]`,
		wantErr: `"tid" is 1.5, not an integer`,
	}, {
		name:    "complete event without dur",
		in:      `[{"name":"x","ph":"X","ts":1,"pid":1,"tid":1}]`,
		wantErr: `no "dur"`,
	}, {
		name:    "negative dur",
		in:      `[{"name":"x","ph":"X","ts":1,"dur":-2,"pid":1,"tid":1}]`,
		wantErr: "negative dur",
	}, {
		name:    "bad instant scope",
		in:      `[{"name":"x","ph":"i","ts":1,"pid":1,"tid":1,"s":"q"}]`,
		wantErr: `scope "q"`,
	}, {
		name:    "thread_name without a name",
		in:      `[{"name":"thread_name","ph":"M","ts":0,"pid":1,"tid":1,"args":{}}]`,
		wantErr: "thread_name of tid 1 without args.name",
	}, {
		name:    "event cut off",
		in:      "[\n" + names + ",\n" + `{"name":"x","ph":`,
		wantErr: "is cut off",
	}, {
		name:    "event that is not an object",
		in:      `[1]`,
		wantErr: "event 1 (byte 1) is a JSON number, not an object",
	}, {
		name:    "name of the wrong type",
		in:      `[{"name":5,"ph":"i","ts":1,"pid":1,"tid":1}]`,
		wantErr: `"name" is a JSON number, not a string`,
	}, {
		name:    "data after the array",
		in:      `[] []`,
		wantErr: "unexpected data after the trace",
	}, {
		name:    "truncated object",
		in:      `{"traceEvents":[` + names,
		wantErr: "the event array is not closed",
	}, {
		name:    "object without events",
		in:      `{"x":1}`,
		wantErr: "no traceEvents array",
	}, {
		name:    "empty input",
		in:      "  ",
		wantErr: "the input is empty",
	}, {
		name:    "not a trace",
		in:      `"hello"`,
		wantErr: "it starts with hello",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Validate(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmpEmpty); diff != "" {
				t.Errorf("summary (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzValidate feeds arbitrary bytes to Validate: it must return, never
// panic, and a summary it accepts must add up.
func FuzzValidate(f *testing.F) {
	golden, err := os.ReadFile(filepath.Join("testdata", "small.golden"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(golden)
	f.Add(golden[:len(golden)/2])
	f.Add(bytes.TrimSuffix(golden, []byte("]\n")))
	f.Add([]byte("[" + names + "," + child + "," + parent + "]"))
	f.Add([]byte(`{"traceEvents":[{"ph":"X","ts":1e300,"dur":1e300,"pid":1,"tid":1}]}`))
	f.Add([]byte(`[{"ph":"X","ts":-9e18,"dur":0,"pid":-1,"tid":9007199254740993}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sum, err := Validate(bytes.NewReader(data))
		if err != nil {
			return
		}
		total := 0
		for _, tr := range sum.Tracks {
			if tr.Name == "" {
				t.Fatalf("accepted track %d without a name", tr.TID)
			}
			for _, n := range tr.Spans {
				total += n
			}
		}
		all := 0
		for _, n := range sum.Spans {
			all += n
		}
		if total != all || sum.Unfinished > all || all > sum.Events {
			t.Fatalf("summary does not add up: %+v", sum)
		}
	})
}
