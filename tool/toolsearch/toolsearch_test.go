package toolsearch

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/llm"
	"github.com/cohort-dev/cohort/tool"
)

func fakeTool(name, desc string) tool.Tool {
	return tool.New(tool.Spec[struct{}]{Name: name, Description: desc, Input: tool.Object(),
		Run: func(context.Context, *tool.Env, struct{}) (tool.Result, error) { return tool.Text(name), nil }})
}

func pool() []tool.Tool {
	return []tool.Tool{
		fakeTool("Bash", "Runs a shell command."),
		fakeTool("NotebookEdit", "Changes one cell of a Jupyter notebook (.ipynb): replaces its source. More."),
		fakeTool("Read", "Reads a file."),
		fakeTool("EnterWorktree", "Moves you into a git worktree: a separate checkout."),
		fakeTool("ExitWorktree", "Leaves the worktree you entered with EnterWorktree."),
	}
}

func later(name string) bool { return name == "NotebookEdit" || strings.HasSuffix(name, "Worktree") }

func names(ts []tool.Tool) string {
	var out []string
	for _, t := range ts {
		d := t.Def()
		if d.Defer {
			out = append(out, d.Name+"(deferred)")
			continue
		}
		out = append(out, d.Name)
	}
	return strings.Join(out, ",")
}

func TestOfferArrangesThePool(t *testing.T) {
	got := Offer(pool(), later)
	if want := "Bash,Read,ToolSearch,NotebookEdit(deferred),EnterWorktree(deferred),ExitWorktree(deferred)"; names(got) != want {
		t.Errorf("array %s, want %s", names(got), want)
	}
	desc := got[2].Def().Description
	for _, line := range []string{
		"- NotebookEdit: Changes one cell of a Jupyter notebook\n",
		"- EnterWorktree: Moves you into a git worktree\n",
		"- ExitWorktree: Leaves the worktree you entered with EnterWorktree",
	} {
		if !strings.Contains(desc, line) {
			t.Errorf("the listing lacks %q:\n%s", line, desc)
		}
	}
	if again := Offer(pool(), later); again[2].Def().Description != desc || string(again[2].Def().InputSchema) != string(got[2].Def().InputSchema) {
		t.Error("the same pool gives another ToolSearch definition")
	}
	if got := Offer(pool(), func(string) bool { return false }); names(got) != "Bash,NotebookEdit,Read,EnterWorktree,ExitWorktree" {
		t.Errorf("nothing on demand: %s", names(got))
	}
	if got := Offer(pool(), func(string) bool { return true }); names(got) != "Bash,NotebookEdit,Read,EnterWorktree,ExitWorktree" {
		t.Errorf("everything on demand leaves nothing to search with; want the pool as it is, got %s", names(got))
	}
}

func TestSearchLoads(t *testing.T) {
	search := Offer(pool(), later)[2]
	tests := []struct {
		query string
		want  string // the names loaded, or the error's start
	}{
		{"select:NotebookEdit", "NotebookEdit"},
		{"select: notebookedit , ExitWorktree,NotebookEdit", "NotebookEdit,ExitWorktree"},
		{"jupyter notebook", "NotebookEdit"},
		{"worktree", "EnterWorktree,ExitWorktree"},
		{"exitworktree", "ExitWorktree"},
		{"select:Read", "error: No tool on demand is named Read (a tool already in your tools needs no loading"},
		{"select:Nope,NotebookEdit", "error: No tool on demand is named Nope"},
		{"spreadsheet", `error: No tool on demand matches "spreadsheet". Tools you can load: NotebookEdit, EnterWorktree, ExitWorktree`},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			in, _ := json.Marshal(map[string]string{"query": tt.query})
			res, err := search.Run(context.Background(), &tool.Env{}, in)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, b := range res.Content {
				if b.Type == llm.BlockToolReference {
					got = append(got, b.Name)
				}
			}
			if res.IsError {
				if !strings.HasPrefix("error: "+res.TextOf(), tt.want) {
					t.Errorf("error %q, want %q", res.TextOf(), tt.want)
				}
				return
			}
			if strings.Join(got, ",") != tt.want || len(res.Content) != len(got) {
				t.Errorf("loads %v (content %+v), want %s and only references", got, res.Content, tt.want)
			}
		})
	}
}
