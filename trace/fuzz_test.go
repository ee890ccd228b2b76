package trace

import (
	"fmt"
	"path/filepath"
	"testing"
)

// FuzzWriter drives a writer with arbitrary event sequences — ends before
// starts, repeated ids, tasks of unknown agents, agents that never finish —
// and checks that the file always validates: every thread named and every
// span nested.
func FuzzWriter(f *testing.F) {
	f.Add([]byte{0, 0, 2, 1, 3, 0, 3, 1, 4, 0, 4, 1, 0, 0, 2, 0})
	f.Add([]byte{8, 1, 0, 1, 2, 2, 3, 2, 4, 2, 10, 1, 0, 2, 0, 0})
	f.Add([]byte{4, 3, 3, 3, 2, 9, 0, 7, 9, 1, 8, 2, 10, 2, 1, 5, 6, 6})
	f.Add([]byte{9, 0, 3, 0, 0, 0, 11, 0, 4, 0, 12, 0, 13, 0})
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 4000 {
			ops = ops[:4000]
		}
		path := filepath.Join(t.TempDir(), "fuzz.json")
		w, err := Create(path, Config{Now: newClock(0).Now, BufferSize: 512})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i+1 < len(ops); i += 2 {
			feed(w, fuzzEvent(ops[i], ops[i+1]))
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		validateFile(t, path)
	})
}

// fuzzEvent makes one event from an op byte and an argument byte. The
// clock of the fuzz test never advances, so every stamp comes from the
// writer's tie-breaking.
func fuzzEvent(op, arg byte) any {
	agents := []struct{ id, call string }{{"lead", ""}, {"a1", "c1"}, {"a2", "c2"}, {"mate", ""}}
	a := agents[int(arg)%len(agents)]
	id := fmt.Sprintf("t%d", arg%5)
	task := fmt.Sprintf("task%d", arg%3)
	switch op % 14 {
	case 0:
		return req(a.id, a.call, int(arg%4))
	case 1:
		return token(a.id, a.call)
	case 2:
		return answer(a.id, a.call, int(arg%4), "t0", "t1")
	case 3:
		return toolStart(a.id, a.call, id, "Read", `{"x":1}`)
	case 4:
		return toolDone(a.id, a.call, id, "Read", arg%2 == 0)
	case 5:
		return retry(a.id, a.call)
	case 6:
		return compacted(a.id, a.call)
	case 7:
		return started(task, "local_agent", fmt.Sprintf("c%d", arg%3), "job", "Explore")
	case 8:
		return started(task, "local_bash", id, "shell", "")
	case 9:
		return progress(task, "")
	case 10:
		return notified(task, fmt.Sprintf("c%d", arg%3), "completed")
	case 11:
		return answer(a.id, a.call, 1)
	case 12:
		return started(task, "remote_agent", "", "", "")
	default:
		return toolStart(a.id, a.call, "c"+string('1'+arg%2), "Agent", `{}`)
	}
}
