package arch

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/cohort-dev/cohort"

type pkg struct {
	ImportPath string
	Doc        string
	Imports    []string
	Name       string
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", module+"/...")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(out)
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	return pkgs
}

// forbidden maps a package (prefix) to module packages it must not import.
var forbidden = map[string][]string{
	"llm":          {"engine", "agenttool", "swarm", "internal/cli", "task", "tool"},
	"llm/claude":   {"engine", "agenttool", "swarm", "internal/cli", "task"},
	"llm/fakeapi":  {"engine", "agenttool", "swarm", "internal/cli", "task"},
	"llm/openai":   {"engine", "agenttool", "swarm", "internal/cli", "task"},
	"llm/internal": {"engine", "agenttool", "swarm", "internal/cli", "task", "tool"},
	"tool":         {"engine", "agenttool", "swarm", "internal/cli"},
	"engine":       {"agenttool", "swarm", "internal/cli", "task", "team", "mailbox", "permission", "hook", "llm/claude", "llm/openai", "llm/fakeapi"},
	"mailbox":      {"engine", "agenttool", "swarm", "internal/cli", "team"},
	"task":         {"engine", "agenttool", "swarm", "internal/cli"},
	"team":         {"engine", "agenttool", "swarm", "internal/cli"},
	"permission":   {"engine", "agenttool", "swarm", "internal/cli"},
	"worktree":     {"engine", "agenttool", "swarm", "internal/cli"},
	"agent":        {"engine", "agenttool", "swarm", "internal/cli"},
	"agenttool":    {"swarm", "internal/cli"},
	"swarm":        {"internal/cli"},
	"session":      {"engine", "agenttool", "swarm", "internal/cli"},
}

// TestDependenciesPointOneWay checks the forbidden import edges.
func TestDependenciesPointOneWay(t *testing.T) {
	for _, p := range listPackages(t) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		for prefix, bad := range forbidden {
			if rel != prefix && !strings.HasPrefix(rel, prefix+"/") {
				continue
			}
			if prefix == "llm" && rel != "llm" {
				continue // the packages under llm have their own entries
			}
			for _, imp := range p.Imports {
				for _, b := range bad {
					if imp == module+"/"+b || strings.HasPrefix(imp, module+"/"+b+"/") {
						t.Errorf("%s imports %s, which the layering forbids", rel, strings.TrimPrefix(imp, module+"/"))
					}
				}
			}
		}
	}
}

// TestEveryPackageHasADocComment checks that each package says what it is.
func TestEveryPackageHasADocComment(t *testing.T) {
	for _, p := range listPackages(t) {
		if p.Name == "main" && strings.HasPrefix(p.ImportPath, module+"/bench/cmd/") {
			continue
		}
		if strings.TrimSpace(p.Doc) == "" {
			t.Errorf("%s has no package doc comment", p.ImportPath)
		}
	}
}
