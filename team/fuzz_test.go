package team

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzParseTask feeds arbitrary bytes to the task file parser: it must
// never panic, must report failures as *FileError, and what it accepts must
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
			var fe *FileError
			if !errors.As(err, &fe) || fe.Path != "fuzz.json" {
				t.Fatalf("error %v is not a *FileError naming the file", err)
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

// FuzzParseConfig does the same for team files.
func FuzzParseConfig(f *testing.F) {
	for _, seed := range []string{
		`{"name":"alpha","description":"d","createdAt":1750000000000,"leadAgentId":"team-lead@alpha","leadSessionId":"s","hiddenPaneIds":["%1"],"teamAllowedPaths":[{"path":"/p","toolName":"Edit","addedBy":"x","addedAt":1,"z":2}],"members":[{"agentId":"team-lead@alpha","name":"team-lead","isActive":false,"extra":[1]}],"future":true}`,
		`{"name":"alpha","members":{}}`,
		`{"name":"alpha","createdAt":"soon"}`,
		`null`, `{}`, `{"members":[null]}`, `[`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseConfig("config.json", data)
		if err != nil {
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v is not a *FileError", err)
			}
			return
		}
		out, err := MarshalConfig(cfg)
		if err != nil {
			t.Fatalf("MarshalConfig of a parsed file: %v", err)
		}
		again, err := ParseConfig("config.json", out)
		if err != nil {
			t.Fatalf("re-parse of %s: %v", out, err)
		}
		out2, err := MarshalConfig(again)
		if err != nil || string(out) != string(out2) {
			t.Fatalf("second write differs:\n%s\n%s", out, out2)
		}
	})
}
