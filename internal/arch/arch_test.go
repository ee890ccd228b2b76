package arch

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
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
// tasklist, team, mailbox, permission, hook, worktree, agentdef; crew (builds
// and runs every agent, and has the Agent tool); teammate (the team layer);
// package cohort (the Session) above them, and internal/cli, its client, on
// top.
var forbidden = map[string][]string{
	"llm":           {"engine", "crew", "teammate", "internal/cli", "task", "tool"},
	"llm/claude":    {"engine", "crew", "teammate", "internal/cli", "task"},
	"llm/fakeapi":   {"engine", "crew", "teammate", "internal/cli", "task"},
	"llm/openai":    {"engine", "crew", "teammate", "internal/cli", "task"},
	"llm/internal":  {"engine", "crew", "teammate", "internal/cli", "task", "tool"},
	"tool":          {"engine", "crew", "teammate", "internal/cli"},
	"engine":        {"crew", "teammate", "internal/cli", "task", "team", "mailbox", "permission", "hook", "llm/claude", "llm/openai", "llm/fakeapi"},
	"mailbox":       {"engine", "crew", "teammate", "internal/cli", "team"},
	"task":          {"engine", "crew", "teammate", "internal/cli"},
	"team":          {"engine", "crew", "teammate", "internal/cli"},
	"permission":    {"engine", "crew", "teammate", "internal/cli", "tool"},
	"worktree":      {"engine", "crew", "teammate", "internal/cli"},
	"agentdef":      {"engine", "crew", "teammate", "internal/cli"},
	"hook":          {"crew", "teammate", "internal/cli"},
	"internal/fork": {"crew", "teammate", "internal/cli"},
	"crew":          {"teammate", "internal/cli"},
	"tasklist":      {"engine", "crew", "teammate", "internal/cli", "team"},
	"teammate":      {"internal/cli"},
	// The remote job protocol sits beside worktree: the runtime submits
	// jobs through it, and workers run them through package cohort.
	"remote":     {"engine", "crew", "teammate", "internal/cli", "task"},
	"transcript": {"engine", "crew", "teammate", "internal/cli"},
	// Spend caps sit below the engine, which checks them before each
	// request; they know nothing of agents but their accounts.
	"budget":  {"engine", "crew", "teammate", "internal/cli", "task", "team", "tool", "llm", "agentdef"},
	"sandbox": {"engine", "crew", "teammate", "internal/cli", "tool", "permission", "llm"},
	// Cohort's own git: the repository read from the file system, and the
	// one runner of git; they know the sandbox only as a Launch func.
	"internal/gitrepo": {"engine", "crew", "teammate", "internal/cli", "tool", "permission", "llm", "sandbox", "internal/safegit"},
	"internal/safegit": {"engine", "crew", "teammate", "internal/cli", "tool", "permission", "llm", "sandbox"},
	// The script engine knows agents only through its Spawner interface.
	"workflow": {"engine", "crew", "teammate", "internal/cli", "task", "llm"},
	// Cohort's end of the workflow host links into cmd/cohort, so it must
	// not reach the engine (goja); TestCohortDoesNotLinkGoja checks the
	// whole graph.
	"workflow/host": {"workflow"},
	// The Workflow tool sits beside the Agent tool, on the runtime.
	"workflowrun": {"teammate", "internal/cli"},
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
// (module packages outside the list are forbidden; internal/assemble, the
// session's wiring, above all).
//
// The command line also reads the team's files (package team, tasklist:
// cohort demo checks its story's outcome on disk) and serves remote jobs
// with package remote's Worker (cohort worker), both public packages, and
// names the nearest known flags of a mistyped one with internal/spelling,
// which knows nothing of a session. It keeps the registry of background
// sessions with package bgsession (records, liveness, stop), which starts
// the cohort binary and never assembles a session, and attaches the
// terminal UI to a running one with bgsession/attach, a client of package
// cohort itself (the library's way to attach). The terminal UI lists the
// project's custom commands for its help and completion with package
// slashcmd, a leaf that reads Markdown files and knows nothing of a
// session (the session itself expands them). cohort config trust records
// a person's approval with internal/configtrust, a leaf that keeps two
// files under COHORT_HOME (sessions read them; the root package has no
// lines to spare for a wrapper), and reads the file it approves with
// internal/ownread, a leaf that opens a file without blocking and judges
// what was opened (a FIFO named as a settings file must not hang it).
var clients = map[string][]string{
	"internal/cli":      {"", "llm", "team", "tasklist", "remote", "bgsession", "internal/clip", "internal/spelling", "internal/tui", "internal/sdkproto", "internal/configtrust", "internal/ownread"},
	"internal/tui":      {"", "llm", "internal/clip", "internal/linediff", "slashcmd"},
	"internal/sdkproto": {"", "llm", "internal/clip"},
	"examples":          {"", "llm", "llm/fakeapi"},
	"bgsession/attach":  {"", "bgsession"},
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
	bin := cohortBinary(t)
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

// assemblers are the packages that open a session's parts, which package
// cohort leaves to internal/assemble: cohort holds the API and translates
// its Config once, into assemble's plan.
var assemblers = []string{"crew", "team", "tasklist", "mailbox", "sandbox", "worktree", "tmux", "sessionsock",
	"prompt", "trace", "skill", "memory", "workflowrun", "llm/claude", "llm/openai", "tool/builtin", "tool/web",
	"tool/plan", "internal/childenv", "internal/proc"}

// TestOneWayDown checks the edges of the API and its assembly: front ends
// → cohort → internal/assemble → crew, teammate and the rest. Only package
// cohort imports internal/assemble; cohort imports none of the parts it
// opens; only front ends, benchmarks, examples and commands import cohort.
func TestOneWayDown(t *testing.T) {
	for _, p := range listPackages(t) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		for _, imp := range p.Imports {
			dep, ok := strings.CutPrefix(imp, module)
			if !ok {
				continue
			}
			dep = strings.TrimPrefix(dep, "/")
			switch {
			case dep == "internal/assemble" && rel != "":
				t.Errorf("%s imports internal/assemble: only package cohort assembles a session; use its API", rel)
			case dep == "" && !isClient(rel):
				t.Errorf("%s imports package cohort: only front ends (internal/cli, internal/tui, internal/sdkproto, bgsession/attach), bench, examples and cmd may; the layers below must not reach the API", rel)
			case rel == "" && isAssembler(dep):
				t.Errorf("package cohort imports %s: the parts of a session are opened in internal/assemble, from the plan cohort translates its Config into", dep)
			}
		}
	}
}

func isClient(rel string) bool {
	for _, c := range []string{"internal/cli", "internal/tui", "internal/sdkproto", "bgsession/attach", "bench", "examples", "cmd"} {
		if rel == c || strings.HasPrefix(rel, c+"/") {
			return true
		}
	}
	return false
}

func isAssembler(dep string) bool {
	for _, a := range assemblers {
		if dep == strings.TrimSuffix(a, "/") || strings.HasPrefix(dep, a) && strings.HasSuffix(a, "/") {
			return true
		}
	}
	return false
}

// TestAssemblyKnowsNoFlag: internal/assemble works from the plan, never
// from the command line, so neither its code nor its comments name a flag
// of the command line (an error names the Config field, Config.Model, and
// the command line says it in its words). The flags are read from
// internal/cli's source: every name given to a flag definition.
func TestAssemblyKnowsNoFlag(t *testing.T) {
	flags := cliFlags(t)
	if len(flags) < 40 {
		t.Fatalf("found %d flags in internal/cli; the reader of its flag definitions is broken", len(flags))
	}
	files, _ := filepath.Glob(filepath.Join("..", "assemble", "*.go"))
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		var s scanner.Scanner
		s.Init(fset.AddFile(path, -1, len(src)), src, nil, scanner.ScanComments)
		for {
			pos, tok, lit := s.Scan()
			if tok == token.EOF {
				break
			}
			if tok != token.STRING && tok != token.COMMENT {
				continue
			}
			for _, m := range flagUse.FindAllStringSubmatch(lit, -1) {
				if flags[m[1]] && !gitsOwn[m[1]] {
					t.Errorf("%s: names the command line's flag --%s; say Config.Field (a ConfigError's message), or what it does", fset.Position(pos), m[1])
				}
			}
		}
	}
}

var (
	// gitsOwn are names of the command line's flags that are git's too
	// (cohort agents --all; git rev-list --all), which the assembly
	// passes to git.
	gitsOwn = map[string]bool{"all": true}
	flagUse = regexp.MustCompile(`(?:^|[^A-Za-z0-9-])--([a-z][a-zA-Z-]*)`)
	// flagDef matches the methods that define a flag (pflag's BoolVar,
	// StringArrayVar, Var, BoolP, …).
	flagDef = regexp.MustCompile(`^(?:[A-Z][A-Za-z0-9]*)?(?:Var|VarP|P)$|^(?:Bool|String|Int|Duration|Float64)$`)
)

// cliFlags are the names internal/cli gives its flags.
func cliFlags(t *testing.T) map[string]bool {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join("..", "cli", "*.go"))
	fset := token.NewFileSet()
	out := map[string]bool{}
	name := regexp.MustCompile(`^[a-z][a-zA-Z-]+$`)
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || !flagDef.MatchString(sel.Sel.Name) {
				return true
			}
			for _, a := range call.Args {
				if lit, ok := a.(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if s, err := strconv.Unquote(lit.Value); err == nil && name.MatchString(s) {
						out[s] = true
					}
					break
				}
			}
			return true
		})
	}
	return out
}
