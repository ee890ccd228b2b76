package argv

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// observed is what one command line did, in terms both executables share:
// how it stopped, or what reached the model (the prompt, the tools offered,
// the beta headers) and the permission layer (which probe calls it
// refused), plus the working directories and MCP servers the session
// started with. Tool names are those of probeTools only; the executables
// differ in the rest.
type observed struct {
	// Stop is why the run stopped before any model call: "unknown-option",
	// "missing-value", "no-prompt" or "bad-mcp-config"; "" when it ran.
	Stop string `json:"stop,omitempty"`
	// Flag is the option a stop names.
	Flag string `json:"flag,omitempty"`
	// Warning is a value of a variadic flag that looked like a prompt.
	Warning *warning `json:"warning,omitempty"`

	Prompt     string   `json:"prompt,omitempty"`
	Tools      []string `json:"tools,omitempty"`
	Denied     []string `json:"denied,omitempty"`
	AddDirs    []string `json:"add_dirs,omitempty"`
	MCPServers []string `json:"mcp_servers,omitempty"`
	// Betas are the beta headers that reached the API, or were refused by
	// name on stderr (Claude Code sends only those it knows), in a run
	// that reached the model.
	Betas []string `json:"betas,omitempty"`
}

type warning struct {
	Value string `json:"value"`
	Flag  string `json:"flag"`
}

// probeTools are the tools whose presence is observed.
var probeTools = []string{"Bash", "Edit", "NotebookEdit", "Read", "WebSearch", "Write"}

// Probe calls, made in the model's first turn: each asks the permission
// layer something the table's rules decide.
const (
	probeGoTest  = "go test ./probe-none"
	probeGoBuild = "go build ./probe-none"
)

// newProject fills the directory a line runs in, dir, and its parent:
// beside dir are the directories a, b and odd (a working directory inside
// the project would add nothing); in it are "my dir", -odd (a link to
// ../odd) and the MCP configurations one.json and two.json (servers one
// and two).
func newProject(t *testing.T, dir string) {
	t.Helper()
	root := filepath.Dir(dir)
	for _, d := range []string{"a", "b", "odd", filepath.Join(filepath.Base(dir), "my dir")} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "odd"), filepath.Join(dir, "-odd")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"one", "two"} {
		cfg := `{"mcpServers": {"` + name + `": {"command": "false"}}}` + "\n"
		if err := os.WriteFile(filepath.Join(dir, name+".json"), []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// policy is the scripted model: the conversation's first turn makes the
// probe calls the request offers tools for, the next one ends it.
func policy(dir string) fakeapi.Policy {
	return func(r *fakeapi.Request) fakeapi.Reply {
		if r.Turn() > 0 || !(r.HasTool("Bash") || r.HasTool("Write")) {
			return fakeapi.TextReply("done")
		}
		var calls []fakeapi.Block
		if r.HasTool("Bash") {
			for _, c := range []string{probeGoTest, probeGoBuild} {
				calls = append(calls, fakeapi.ToolUseBlock("", "Bash", map[string]any{"command": c, "description": "probe"}))
			}
		}
		if r.HasTool("Write") {
			calls = append(calls, fakeapi.ToolUseBlock("", "Write", map[string]any{
				"file_path": filepath.Join(dir, "probe.txt"), "content": "probe\n"}))
		}
		return fakeapi.Reply{Content: calls}
	}
}

// ran fills in what a run that reached the model shows: stdout is its
// stream-json output, requests what the fake received, args the line.
func (o *observed) ran(t *testing.T, dir, stdout string, requests []fakeapi.Recorded, args []string) {
	t.Helper()
	for l := range strings.Lines(stdout) {
		var m struct {
			Type, Subtype string
			Tools         []string `json:"tools"`
			MCPServers    []struct {
				Name string `json:"name"`
			} `json:"mcp_servers"`
			AddDirs []string `json:"additional_directories"`
			Denials []struct {
				ToolName  string         `json:"tool_name"`
				ToolInput map[string]any `json:"tool_input"`
			} `json:"permission_denials"`
		}
		if json.Unmarshal([]byte(l), &m) != nil {
			continue
		}
		switch {
		case m.Type == "system" && m.Subtype == "init":
			for _, name := range m.Tools {
				if slices.Contains(probeTools, name) {
					o.Tools = append(o.Tools, name)
				}
			}
			for _, s := range m.MCPServers {
				o.MCPServers = append(o.MCPServers, s.Name)
			}
			for _, d := range m.AddDirs {
				o.AddDirs = append(o.AddDirs, besideProject(dir, d))
			}
		case m.Type == "result":
			for _, d := range m.Denials {
				o.Denied = append(o.Denied, probeName(d.ToolName, d.ToolInput))
			}
		}
	}
	for _, rec := range requests {
		r := rec.Request
		if r == nil || r.Turn() != 0 || !(r.HasTool("Bash") || r.HasTool("Write")) {
			continue
		}
		if o.Prompt == "" {
			o.Prompt = promptOf(r)
		}
		for _, b := range strings.Split(r.Header.Get("anthropic-beta"), ",") {
			if b = strings.TrimSpace(b); b != "" && slices.Contains(args, b) && !slices.Contains(o.Betas, b) {
				o.Betas = append(o.Betas, b)
			}
		}
	}
	for _, s := range [][]string{o.Tools, o.Denied, o.AddDirs, o.MCPServers, o.Betas} {
		slices.Sort(s)
	}
	o.Betas = slices.Compact(o.Betas)
}

// besideProject names a working directory by its path from the project's
// parent, links resolved.
func besideProject(dir, d string) string {
	root, _ := filepath.EvalSymlinks(filepath.Dir(dir))
	if r, err := filepath.EvalSymlinks(d); err == nil {
		d = r
	}
	if rel, err := filepath.Rel(root, d); err == nil {
		return rel
	}
	return d
}

// probeName names a refused probe call.
func probeName(tool string, input map[string]any) string {
	if cmd, _ := input["command"].(string); tool == "Bash" {
		return "Bash(" + cmd + ")"
	}
	return tool
}

// promptOf is the user's text in a conversation's first request: the last
// text block of the first user message that is not a system reminder.
func promptOf(r *fakeapi.Request) string {
	for _, m := range r.Messages {
		if m.Role != "user" {
			continue
		}
		prompt := ""
		for _, b := range m.Content {
			if b.Type == "text" && !strings.HasPrefix(strings.TrimSpace(b.Text), "<system-reminder>") {
				prompt = b.Text
			}
		}
		return prompt
	}
	return ""
}

// stderrPatterns read one executable's stderr into an observation.
type stderrPatterns struct {
	warning, unknown, missing, noPrompt, badMCP, beta *regexp.Regexp
}

// read fills in the stop and the warning from stderr.
func (p stderrPatterns) read(o *observed, stderr string) {
	if m := p.warning.FindStringSubmatch(stderr); m != nil {
		o.Warning = &warning{Value: m[1], Flag: m[2]}
	}
	switch m := p.unknown.FindStringSubmatch(stderr); {
	case m != nil:
		o.Stop, o.Flag = "unknown-option", m[1]
	default:
		if m := p.missing.FindStringSubmatch(stderr); m != nil {
			o.Stop, o.Flag = "missing-value", m[1]
		} else if p.badMCP.MatchString(stderr) {
			o.Stop = "bad-mcp-config"
		} else if p.noPrompt.MatchString(stderr) {
			o.Stop = "no-prompt"
		}
	}
	if p.beta != nil && o.Stop == "" {
		for _, m := range p.beta.FindAllStringSubmatch(stderr, -1) {
			o.Betas = append(o.Betas, m[1])
		}
	}
}
