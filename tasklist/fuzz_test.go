package tasklist

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cohort-dev/cohort/internal/jsonfile"
)

// FuzzParseTask feeds arbitrary bytes to the task file parser: it must
// never panic, must report failures as *jsonfile.Error, and what it accepts must
// survive a write and a re-read unchanged.
func FuzzParseTask(f *testing.F) {
	for _, seed := range []string{
		`{"id":"1","subject":"s","description":"d","status":"pending","blocks":[],"blockedBy":[]}`,
		`{"id":"12","subject":"s","description":"","activeForm":"a","owner":"alice","status":"in_progress","blocks":["3"],"blockedBy":["1","2"],"metadata":{"k":[1,{"x":null}]},"createdAt":1750000000000,"updatedAt":1.75e12}`,
		`{"id":"3","status":"completed","future":{"a":1}}`,
		`{"id":"1","blocks":["1"]}`,
		`{"id":"01"}`,
		`{"id":"1","status":"deleted"}`,
		`{"id":"1","owner":"../x"}`,
		`{"id":"1","createdAt":1e400}`,
		`{"id":"1"} {}`,
		`null`, `[]`, `"x"`, ``, `{`, "{\"id\":\"1\",\"subject\":\"\xff\"}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		task, err := ParseTask("fuzz.json", data)
		if err != nil {
			var fe *jsonfile.Error
			if !errors.As(err, &fe) || fe.Path != "fuzz.json" {
				t.Fatalf("error %v is not a *jsonfile.Error naming the file", err)
			}
			return
		}
		if ValidateTaskID(task.ID) != nil || !task.Status.Valid() {
			t.Fatalf("accepted an invalid task: %+v", task)
		}
		out, err := MarshalTask(task)
		if err != nil {
			t.Fatalf("MarshalTask of a parsed task: %v", err)
		}
		again, err := ParseTask("again.json", out)
		if err != nil {
			t.Fatalf("re-parse of %s: %v", out, err)
		}
		if diff := cmp.Diff(canonical(task), canonical(again)); diff != "" {
			t.Fatalf("round trip changed the task (-first +second):\n%s", diff)
		}
	})
}

// canonical compacts raw JSON values so that formatting does not count.
func canonical(t Task) Task {
	t = t.Clone()
	for _, m := range []map[string]jsonRaw{t.Metadata, t.Extra} {
		for k, v := range m {
			m[k] = jsonRaw(compactJSON(v))
		}
	}
	if len(t.Metadata) == 0 {
		t.Metadata = nil
	}
	return t
}
