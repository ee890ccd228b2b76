package hook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestJudge runs the invariant on the forms an outsider found the script
// finder missed (attack12's o12-script-forms, attack11's user hook
// import): each program either has what it loads protected or is refused
// (runs confined), never neither.
func TestJudge(t *testing.T) {
	p := t.TempDir()
	files := map[string]string{
		"t1/srv.py":               "import os, sys\nsys.path.insert(0, os.path.join(os.path.dirname(__file__), '..'))\nimport l1.h\n",
		"l1/h.py":                 "",
		"t2/srv.js":               "require('../l2/h.js');\n",
		"l2/h.js":                 "",
		"t3/srv.py":               "print(1)\n",
		"t7/__init__.py":          "",
		"t7/srv.py":               "",
		"t8/Makefile":             "srv:\n\t@true\n",
		"t9/srv.py":               "",
		"t10/__main__.py":         "",
		"t11/pre.js":              "",
		"t12/srv.py":              "from pathlib import Path\nimport sys\nsys.path.append(str(Path(__file__).parent.parent))\n",
		"node_modules/x/index.js": "",
		"t13/srv.js":              "require('x');\n",
		"top.py":                  "",
	}
	for f, c := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(p, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, f), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := t.TempDir() // a folder outside every writable root
	roots := []string{p}
	tree := func(d string) string { return filepath.Join(p, d, treeMark) }
	for _, c := range []struct {
		name, cmd string
		env       []string
		protect   []string // want among Protect; nil: want a refusal
	}{
		{"import outside its folder", CommandLine("python3", p+"/t1/srv.py"), nil, nil},
		{"require ../", CommandLine("node", p+"/t2/srv.js"), nil, nil},
		{"sh -c cd then a script", CommandLine("sh", "-c", "cd "+p+"/t3 && python3 srv.py"), nil, []string{p + "/t3/srv.py"}},
		{"env A=1", CommandLine("env", "A=1", "python3", p+"/t3/srv.py"), nil, []string{p + "/t3/srv.py"}},
		{"python -m with PYTHONPATH, cwd the project", CommandLine("python3", "-m", "srv"), []string{"PYTHONPATH=" + p + "/t9"}, nil},
		{"python -P -m with PYTHONPATH", CommandLine("python3", "-P", "-m", "srv"), []string{"PYTHONPATH=" + p + "/t9"}, []string{tree("t9")}},
		{"python -c naming the project", CommandLine("python3", "-P", "-c", "import sys; sys.path.insert(0, '"+p+"'); import t7.srv"), nil, nil},
		{"python -c naming a folder", CommandLine("python3", "-P", "-c", "import sys; sys.path.insert(0, '"+p+"/t7'); import srv"), nil, []string{tree("t7")}},
		{"make -C", CommandLine("make", "-s", "-C", p+"/t8", "srv"), nil, []string{tree("t8")}},
		{"make in the project", "make srv", nil, nil},
		{"python -X opt", CommandLine("python3", "-X", "utf8", p+"/t9/srv.py"), nil, []string{p + "/t9/srv.py"}},
		{"python dir", CommandLine("python3", p+"/t10"), nil, []string{tree("t10")}},
		{"node -r", CommandLine("node", "-r", p+"/t11/pre.js", "-e", "1"), nil, []string{p + "/t11/pre.js"}},
		{"node -r a package", CommandLine("node", "-r", "ts-node/register", out+"/x.js"), nil, nil},
		{"parent.parent", CommandLine("python3", p+"/t12/srv.py"), nil, nil},
		{"node_modules above", CommandLine("node", p+"/t13/srv.js"), nil, []string{p + "/t13/srv.js", tree("node_modules")}},
		{"a script at the top", CommandLine("python3", p+"/top.py"), nil, nil},
		{"user hook python -c in the project", "python3 -c 'import json, sys; json.load(sys.stdin)'", nil, nil},
		{"user hook python -P -c", "python3 -P -c 'import json, sys; json.load(sys.stdin)'", nil, []string{}},
		{"user hook python -c, PYTHONSAFEPATH", "python3 -c 'import json'", []string{"PYTHONSAFEPATH=1"}, []string{}},
		{"npx in the project", "npx prettier --check .", nil, nil},
		{"a cd Cohort cannot tell", `cd "$X" && python3 srv.py`, nil, nil},
		{"outside every root", CommandLine("python3", out+"/srv.py"), nil, []string{}},
	} {
		v := Judge(c.cmd, c.env, p, p, roots)
		t.Logf("%s: %v %q", c.name, v.Protect, v.Refusal)
		switch {
		case c.protect == nil && v.Refusal == "":
			t.Errorf("%s: %s: not refused; protects %v", c.name, c.cmd, v.Protect)
		case c.protect != nil && v.Refusal != "":
			t.Errorf("%s: %s: refused: %s", c.name, c.cmd, v.Refusal)
		}
		for _, w := range c.protect {
			if !strings.Contains(strings.Join(v.Protect, "\n"), w) {
				t.Errorf("%s: %s: Protect = %v, lacks %s", c.name, c.cmd, v.Protect, w)
			}
		}
	}
}
