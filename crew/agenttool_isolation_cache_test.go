package crew

import (
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestChildGetsAClonedReadCache: a subagent starts knowing what its parent
// read (the read-file cache is cloned), and what the subagent reads does
// not change the parent's cache — the parent may not edit a file only the
// child has read.
func TestChildGetsAClonedReadCache(t *testing.T) {
	var mu sync.Mutex
	results := map[string]string{}
	var r *rig
	var a, b string
	s := &script{}
	s.on(firstUserAt("child-job", 0), func(*fakeapi.Request) fakeapi.Reply {
		return fakeapi.Reply{Content: []fakeapi.Block{call("Read", map[string]any{"file_path": b})}}
	})
	s.on(firstUserAt("child-job", 1), func(*fakeapi.Request) fakeapi.Reply {
		return fakeapi.Reply{Content: []fakeapi.Block{call("Edit", map[string]any{"file_path": a, "old_string": "alpha", "new_string": "ALPHA"})}}
	})
	s.on(firstUserAt("child-job", 2), func(req *fakeapi.Request) fakeapi.Reply {
		mu.Lock()
		results["child edit of a"] = req.LastToolResultText()
		mu.Unlock()
		return fakeapi.TextReply("child done")
	})
	s.on(firstUserAt("parent-job", 0), func(*fakeapi.Request) fakeapi.Reply {
		return fakeapi.Reply{Content: []fakeapi.Block{call("Read", map[string]any{"file_path": a})}}
	})
	s.on(firstUserAt("parent-job", 1), func(*fakeapi.Request) fakeapi.Reply {
		return fakeapi.Reply{Content: []fakeapi.Block{call("Agent", map[string]any{"description": "child", "prompt": "child-job: read b"})}}
	})
	s.on(firstUserAt("parent-job", 2), func(*fakeapi.Request) fakeapi.Reply {
		return fakeapi.Reply{Content: []fakeapi.Block{call("Edit", map[string]any{"file_path": b, "old_string": "beta", "new_string": "BETA"})}}
	})
	s.on(firstUserAt("parent-job", 3), func(req *fakeapi.Request) fakeapi.Reply {
		mu.Lock()
		results["parent edit of b"] = req.LastToolResultText()
		mu.Unlock()
		return fakeapi.TextReply("parent done")
	})
	r = newRig(t, rigConfig{policy: s.policy})
	a, b = r.write("a.txt", "alpha\n"), r.write("b.txt", "beta\n")
	r.send("parent-job: read a, delegate, then edit b")
	mu.Lock()
	defer mu.Unlock()
	if strings.Contains(results["child edit of a"], "not been read") {
		t.Fatalf("the child should inherit the parent's read of a.txt: %q", results["child edit of a"])
	}
	if !strings.Contains(results["parent edit of b"], "not been read") {
		t.Fatalf("the parent must not learn the child's read of b.txt: %q", results["parent edit of b"])
	}
}
