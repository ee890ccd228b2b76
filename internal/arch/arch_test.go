package arch

import (
	"encoding/json"
	"io"
	"os/exec"
	"path/filepath"
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
// The layers, lowest first: llm; tool (and its families); engine; task,
// team, mailbox, permission, hook, worktree, agent; runtime (builds and runs
// every agent); agenttool (the Agent tool) and teammate (the team layer);
// package cohort (the Session) above them, and internal/cli, its client, on
// top.
var forbidden = map[string][]string{
	"llm":           {"engine", "crew", "agenttool", "teammate", "internal/cli", "task", "tool"},
	"llm/claude":    {"engine", "crew", "agenttool", "teammate", "internal/cli", "task"},
	"llm/fakeapi":   {"engine", "crew", "agenttool", "teammate", "internal/cli", "task"},
	"llm/openai":    {"engine", "crew", "agenttool", "teammate", "internal/cli", "task"},
	"llm/internal":  {"engine", "crew", "agenttool", "teammate", "internal/cli", "task", "tool"},
	"tool":          {"engine", "crew", "agenttool", "teammate", "internal/cli"},
	"engine":        {"crew", "agenttool", "teammate", "internal/cli", "task", "team", "mailbox", "permission", "hook", "llm/claude", "llm/openai", "llm/fakeapi"},
	"mailbox":       {"engine", "crew", "agenttool", "teammate", "internal/cli", "team"},
	"task":          {"engine", "crew", "agenttool", "teammate", "internal/cli"},
	"team":          {"engine", "crew", "agenttool", "teammate", "internal/cli"},
	"permission":    {"engine", "crew", "agenttool", "teammate", "internal/cli", "tool"},
	"worktree":      {"engine", "crew", "agenttool", "teammate", "internal/cli"},
	"agentdef":      {"engine", "crew", "agenttool", "teammate", "internal/cli"},
	"hook":          {"crew", "agenttool", "teammate", "internal/cli"},
	"internal/fork": {"crew", "agenttool", "teammate", "internal/cli"},
	"crew":          {"agenttool", "teammate", "internal/cli"},
	"agenttool":     {"teammate", "internal/cli"},
	"teammate":      {"internal/cli"},
	// The remote job protocol sits beside worktree: the runtime submits
	// jobs through it, and workers run them through package cohort.
	"remote":     {"engine", "crew", "agenttool", "teammate", "internal/cli", "task"},
	"transcript": {"engine", "crew", "agenttool", "teammate", "internal/cli"},
	"sandbox":    {"engine", "crew", "agenttool", "teammate", "internal/cli", "tool", "permission", "llm"},
	// Cohort's own git: the repository read from the file system, and the
	// one runner of git; they know the sandbox only as a Launch func.
	"internal/gitrepo": {"engine", "crew", "agenttool", "teammate", "internal/cli", "tool", "permission", "llm", "sandbox", "internal/safegit"},
	"internal/safegit": {"engine", "crew", "agenttool", "teammate", "internal/cli", "tool", "permission", "llm", "sandbox"},
	// The script engine knows agents only through its Spawner interface.
	"workflow": {"engine", "crew", "agenttool", "teammate", "internal/cli", "task", "llm"},
	// Cohort's end of the workflow host links into cmd/cohort, so it must
	// not reach the engine (goja); TestCohortDoesNotLinkGoja checks the
	// whole graph.
	"workflow/host": {"workflow"},
	// The Workflow tool sits beside the Agent tool, on the runtime.
	"workflowtool": {"agenttool", "teammate", "internal/cli"},
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

// clients are the front ends of package cohort: they build nothing of a
// session themselves, so they import the Session API and little else
// (module packages outside the list are forbidden). internal/tui and the
// Agent SDK protocol server (internal/sdkproto) are held to it before they
// exist.
var clients = map[string][]string{
	"internal/cli":      {"", "llm", "llm/fakeapi", "team", "remote", "internal/clip", "internal/tui", "internal/sdkproto"},
	"internal/tui":      {"", "llm", "internal/clip"},
	"internal/sdkproto": {"", "llm", "internal/clip"},
	"examples":          {"", "llm", "llm/fakeapi"},
}

// TestClientsUseTheSession checks that the front ends reach the runtime
// only through package cohort.
func TestClientsUseTheSession(t *testing.T) {
	for _, p := range listPackages(t) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		for prefix, allowed := range clients {
			if rel != prefix && !strings.HasPrefix(rel, prefix+"/") {
				continue
			}
			for _, imp := range p.Imports {
				if imp != module && !strings.HasPrefix(imp, module+"/") {
					continue
				}
				dep := strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
				ok := false
				for _, a := range allowed {
					if dep == a || (a != "" && strings.HasPrefix(dep, a+"/")) {
						ok = true
					}
				}
				if !ok {
					t.Errorf("%s imports %s: a client of package cohort must not assemble a session itself", rel, dep)
				}
			}
		}
	}
}

// TestCohortDoesNotLinkGoja: workflows run in cmd/cohort-workflow, so
// nothing cmd/cohort imports, however indirectly, may import goja (its
// reflection is what TestBinaryKeepsMethodDeadCodeElimination guards
// against, and this check names the importer without building).
func TestCohortDoesNotLinkGoja(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, module+"/cmd/cohort").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		for _, imp := range f[1:] {
			if strings.HasPrefix(imp, "github.com/dop251/goja") || imp == module+"/workflow" {
				t.Errorf("cmd/cohort links %s through %s; workflow scripts run in cmd/cohort-workflow (package workflow/host is Cohort's end)", imp, f[0])
			}
		}
	}
}

// TestBinaryKeepsMethodDeadCodeElimination: cmd/cohort links no
// reflect.Value.Method or MethodByName. A reachable call to either (through
// text/template: cobra's SetVersionTemplate, SetUsageTemplate,
// SetHelpTemplate) makes the linker keep every exported method of every
// reachable type, which doubled the binary (56 to 108 MB) and added 10 MB
// of mapped pages to the fan-out's peak RSS (BENCHMARKS.md §6, "Stop 30").
func TestBinaryKeepsMethodDeadCodeElimination(t *testing.T) {
	if testing.Short() {
		t.Skip("builds cmd/cohort")
	}
	bin := filepath.Join(t.TempDir(), "cohort")
	if out, err := exec.Command("go", "build", "-o", bin, module+"/cmd/cohort").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command("go", "tool", "nm", bin).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if name := f[len(f)-1]; name == "reflect.Value.Method" || name == "reflect.Value.MethodByName" {
			t.Errorf("cmd/cohort links %s: something reachable calls it (text/template? a cobra Set*Template?), so the linker keeps every exported method; find it with go build -ldflags=-dumpdep ./cmd/cohort", name)
		}
	}
}
