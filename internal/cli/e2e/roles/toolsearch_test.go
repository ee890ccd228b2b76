package roles

import (
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/internal/clitest"
	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// TestToolSearchLoadsNotebookEdit: NotebookEdit is offered on demand. A
// scripted model that sees only its name searches for it, gets its
// definition (the script asks the fake whether the model sees the tool
// before it calls it: a real model can only call what it was shown),
// reads the notebook and edits it. The session resumed with --continue still offers it: its
// next request has NotebookEdit loaded without a second search, and the
// model edits again. On every provider: the Anthropic API loads the
// deferred definition itself, the OpenAI protocols get it in the array.
func TestToolSearchLoadsNotebookEdit(t *testing.T) {
	t.Parallel()
	for _, provider := range clitest.ProviderNames {
		t.Run(provider, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			var seen []string // what the model saw of NotebookEdit at each step
			var path string
			policy := func(r *fakeapi.Request) fakeapi.Reply {
				mu.Lock()
				defer mu.Unlock()
				last, edits := lastCall(r)
				seen = append(seen, last+":"+map[bool]string{true: "loaded", false: "not loaded"}[r.Loaded("NotebookEdit")])
				switch last {
				case "":
					if strings.Contains(r.LastUserText(), "first") {
						return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("ToolSearch", map[string]any{"query": "jupyter notebook"})}}
					}
					return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Read", map[string]any{"file_path": path})}}
				case "ToolSearch":
					return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("Read", map[string]any{"file_path": path})}}
				case "Read":
					if !r.Loaded("NotebookEdit") {
						return fakeapi.TextReply("I cannot see NotebookEdit")
					}
					return fakeapi.Reply{Content: []fakeapi.Block{clitest.Use("NotebookEdit", map[string]any{
						"notebook_path": path, "cell_id": "cell-0", "new_source": "print(" + string(rune('1'+edits)) + ")"})}}
				}
				return fakeapi.TextReply("done: " + r.LastToolResultText())
			}
			h := clitest.New(t, policy)
			if os.Getenv(clitest.ProviderEnv) == "" {
				h.UseProvider(provider)
			}
			path = h.Write("analysis.ipynb", `{"cells":[{"cell_type":"code","execution_count":null,"id":"c0","metadata":{},"outputs":[],"source":["print(0)"]}],"metadata":{},"nbformat":4,"nbformat_minor":5}`)
			for _, prompt := range []string{"first: set the notebook's cell to print(1)", "second: now print(2)"} {
				args := []string{"-p", prompt, "--permission-mode", "acceptEdits"}
				if strings.HasPrefix(prompt, "second") {
					args = append(args, "--continue")
				}
				if out, errOut, code := h.Run(args...); code != 0 || !strings.Contains(out, "done") {
					t.Fatalf("%s: exit %d\n%s\n%s", prompt, code, out, errOut)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			want := "" + ":not loaded,ToolSearch:loaded,Read:loaded,NotebookEdit:loaded," + // the first run
				":loaded,Read:loaded,NotebookEdit:loaded" // resumed: still loaded, no search
			if got := strings.Join(seen, ","); got != want {
				t.Errorf("what the model saw of NotebookEdit:\n got %s\nwant %s", got, want)
			}
			if nb := h.Read("analysis.ipynb"); !strings.Contains(nb, "print(2)") {
				t.Errorf("the notebook was not edited twice:\n%s", nb)
			}
		})
	}
}

// lastCall is the name of the tool whose result ends r ("" when r ends
// with the user's prompt) and how many NotebookEdit calls r holds.
func lastCall(r *fakeapi.Request) (name string, edits int) {
	var byID = map[string]string{}
	for _, m := range r.Messages {
		for _, b := range m.Content {
			if b.Type == "tool_use" {
				byID[b.ID] = b.Name
				if b.Name == "NotebookEdit" {
					edits++
				}
			}
		}
	}
	if n := len(r.Messages); n > 0 {
		for _, b := range r.Messages[n-1].Content {
			if b.Type == "tool_result" {
				name = byID[b.ToolUseID]
			}
		}
	}
	return name, edits
}
