package arch

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestOnlySafegitRunsGit: Cohort runs git on state a model may have
// written (a working tree, a worktree, a bundle, a patch) only through
// internal/safegit, which names the repository, turns off the programs
// its config names and confines the call. No other file of the programs
// starts "git" itself (test files, and the test-support files that import
// package testing, which git the test's own fixtures, are not Cohort's): neither os/exec's Command, CommandContext or LookPath nor
// an internal/proc Command names it.
func TestOnlySafegitRunsGit(t *testing.T) {
	root := moduleRoot(t)
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel == filepath.Join("internal", "safegit") || strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		if importsTesting(f) {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && isIdent(sel.X, "exec") &&
					(sel.Sel.Name == "Command" || sel.Sel.Name == "CommandContext" || sel.Sel.Name == "LookPath") {
					for _, a := range n.Args {
						if isGit(a) {
							t.Errorf("%s: exec.%s runs git; go through internal/safegit", fset.Position(n.Pos()), sel.Sel.Name)
						}
					}
				}
			case *ast.CompositeLit:
				if sel, ok := n.Type.(*ast.SelectorExpr); ok && isIdent(sel.X, "proc") && sel.Sel.Name == "Command" {
					for _, e := range n.Elts {
						if kv, ok := e.(*ast.KeyValueExpr); ok && isIdent(kv.Key, "Path") && isGit(kv.Value) {
							t.Errorf("%s: proc.Command runs git; go through internal/safegit", fset.Position(n.Pos()))
						}
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// isGit reports a string literal naming git ("git", "/usr/bin/git").
func isGit(e ast.Expr) bool {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return false
	}
	s, err := strconv.Unquote(lit.Value)
	return err == nil && filepath.Base(s) == "git"
}

// moduleRoot is the directory holding go.mod, two levels above this
// package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// importsTesting reports whether f imports package testing: a test-support
// file, which no program of the module links.
func importsTesting(f *ast.File) bool {
	for _, im := range f.Imports {
		if p, _ := strconv.Unquote(im.Path.Value); p == "testing" {
			return true
		}
	}
	return false
}
