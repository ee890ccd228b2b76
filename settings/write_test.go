package settings

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEditKeepsOrderAndValues(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".cohort", "settings.local.json")
	write(t, path, `{"zeta": 1, "permissions": {"deny": ["Read(./x)"], "allow": ["Bash(ls:*)"]}, "alpha": {"k": [1,2]}}`)
	err := Edit(t.Context(), path, func(d *Document) error {
		perm, err := d.Object("permissions")
		if err != nil {
			return err
		}
		allow, err := perm.Strings("allow")
		if err != nil {
			return err
		}
		if err := perm.Set("allow", append(allow, "Bash(git diff:*)")); err != nil {
			return err
		}
		return d.Set("permissions", perm)
	})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	d, err := ParseDocument(data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"zeta", "permissions", "alpha"}, d.Keys()); diff != "" {
		t.Fatalf("key order (-want +got):\n%s", diff)
	}
	var v struct {
		Zeta        int
		Permissions struct{ Allow, Deny []string }
		Alpha       map[string][]int
	}
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"Bash(ls:*)", "Bash(git diff:*)"}, v.Permissions.Allow); diff != "" {
		t.Fatalf("allow (-want +got):\n%s", diff)
	}
	if v.Zeta != 1 || len(v.Alpha["k"]) != 2 || v.Permissions.Deny[0] != "Read(./x)" {
		t.Fatalf("untouched values changed: %s", data)
	}
	if !strings.HasSuffix(string(data), "}\n") || !strings.Contains(string(data), "\n  \"zeta\": 1") {
		t.Fatalf("not indented: %s", data)
	}
}

func TestEditCreatesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new", "settings.json")
	if err := Edit(t.Context(), path, func(d *Document) error { return d.Set("model", "x") }); err != nil {
		t.Fatal(err)
	}
	s := &Settings{}
	data, _ := os.ReadFile(path)
	s.Add(ScopeUser, path, "/", data)
	if m, ok, _ := Winner[string](s, "model"); !ok || m.Value != "x" {
		t.Fatalf("model = %+v (%s)", m, data)
	}
}

func TestEditRefusesBrokenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	const broken = "{\n  \"permissions\": {\"deny\": [\"Bash\"\n}"
	write(t, path, broken)
	err := Edit(t.Context(), path, func(d *Document) error { return d.Set("model", "x") })
	if err == nil || !strings.Contains(err.Error(), path+":") || !strings.Contains(err.Error(), "will not overwrite") {
		t.Fatalf("err = %v", err)
	}
	data, _ := os.ReadFile(path)
	if string(data) != broken {
		t.Fatalf("broken file was changed: %q", data)
	}
}

func TestEditCallbackErrorLeavesFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	write(t, path, `{"a":1}`)
	err := Edit(t.Context(), path, func(d *Document) error { return fmt.Errorf("nope") })
	if err == nil || !strings.Contains(err.Error(), "nope") {
		t.Fatalf("err = %v", err)
	}
	if data, _ := os.ReadFile(path); string(data) != `{"a":1}` {
		t.Fatalf("file changed: %s", data)
	}
}

func TestEditConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "settings.json")
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			errs[i] = Edit(t.Context(), path, func(d *Document) error {
				return d.Set(fmt.Sprintf("k%d", i), i)
			})
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	data, _ := os.ReadFile(path)
	var m map[string]int
	if err := json.Unmarshal(data, &m); err != nil || len(m) != n {
		t.Fatalf("lost updates: %s (%v)", data, err)
	}
}

func TestDocumentDelete(t *testing.T) {
	d, err := ParseDocument([]byte(`{"a":1,"b":2,"c":3}`))
	if err != nil {
		t.Fatal(err)
	}
	d.Delete("b")
	d.Delete("missing")
	raw, _ := d.MarshalJSON()
	if string(raw) != `{"a":1,"c":3}` {
		t.Fatalf("got %s", raw)
	}
	if _, err := d.Object("a"); err == nil {
		t.Fatal("Object on a number should fail")
	}
	if _, err := d.Strings("c"); err == nil {
		t.Fatal("Strings on a number should fail")
	}
}

func FuzzParseTree(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,{"b":"c"}],"d":null}`, `{"a":1,"a":2}`, `[`, `{"x":"\u00e9"}`, "{\"a\":\n1,}", `{"a":1} x`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		data := []byte(s)
		tree, _, err := parseTree(data)
		valid := json.Valid(data)
		if valid != (err == nil) {
			t.Fatalf("parseTree err=%v but json.Valid=%v for %q", err, valid, s)
		}
		if err != nil {
			var line, col = lineCol(data, err.(*posError).off)
			if line < 1 || col < 1 {
				t.Fatalf("bad position %d:%d", line, col)
			}
			return
		}
		if !json.Valid(tree.raw(data)) {
			t.Fatalf("raw of top node invalid: %q", tree.raw(data))
		}
		for _, k := range tree.keys {
			if !json.Valid(tree.fields[k].raw(data)) {
				t.Fatalf("raw of %q invalid", k)
			}
		}
		s2 := &Settings{}
		s2.Add(ScopeCLI, "f", "/", data)
		_ = s2.Permissions()
	})
}
