package hook

import (
	"os"
	"path/filepath"
	"testing"
)

// judgeWorld is a project p (the writable root) and an outside folder
// out with the user's own scripts and, in out/bin, the programs the
// judgement resolves (empty executables: only their place counts).
func judgeWorld(t *testing.T) (p, out string) {
	t.Helper()
	p, out = t.TempDir(), t.TempDir()
	write := func(path, body string, mode os.FileMode) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	for _, prog := range []string{"python3", "node", "perl", "ruby", "bash", "sh", "curl", "jq", "notify-send", "npx", "make", "srv-bin", "env"} {
		write(filepath.Join(out, "bin", prog), "\x7fELF", 0o755)
	}
	write(filepath.Join(out, "hook.py"), "print(1)\n", 0o644)
	write(filepath.Join(out, "srv.js"), "1\n", 0o644)
	write(filepath.Join(out, "h.sh"), "exit 0\n", 0o644)
	write(filepath.Join(out, "h.pl"), "1;\n", 0o644)
	write(filepath.Join(out, "h.rb"), "1\n", 0o644)
	write(filepath.Join(out, "notify"), "#!/usr/bin/env python3\nprint(1)\n", 0o755)
	write(filepath.Join(out, "tests"), "#!/usr/bin/env npx\n", 0o755)
	write(filepath.Join(out, "venvpy"), "#!"+p+"/.venv/bin/python3\n", 0o755)
	write(filepath.Join(p, ".venv/bin/python3"), "\x7fELF", 0o755)
	for _, f := range []string{"tools/srv.py", "tools/srv.js", "tools/srv.sh", "tools/srv.pl", "mod.py", "lib.sh"} {
		write(filepath.Join(p, f), "1\n", 0o644)
	}
	return p, out
}

// TestJudge runs the rule on the shapes it lets run unconfined and on
// those it confines: attack13's (a script in the project however it
// reaches its siblings, node --test, a venv first on PATH, python -c
// importing from the project) and a program it does not know.
func TestJudge(t *testing.T) {
	p, out := judgeWorld(t)
	path := "PATH=" + out + "/bin"
	for _, c := range []struct {
		name, cmd string
		env       []string
		dir       string // "" for the project
		free      bool   // want it unconfined
	}{
		{"python script outside", CommandLine("python3", out+"/hook.py"), nil, "", true},
		{"python options and a script", CommandLine("python3", "-u", "-X", "utf8", "-B", out+"/hook.py", "--x", "1"), nil, "", true},
		{"python -P -c", "python3 -P -c 'import json, sys; json.load(sys.stdin)'", nil, "", true},
		{"python -I -m", "python3 -I -m json.tool", nil, "", true},
		{"python -c with PYTHONSAFEPATH", "python3 -c 'import json'", []string{"PYTHONSAFEPATH=1"}, "", true},
		{"node script", CommandLine("node", "--no-warnings", out+"/srv.js"), nil, "", true},
		{"bash script", CommandLine("bash", "-e", out+"/h.sh"), nil, "", true},
		{"sh -c of plain programs", `sh -c 'echo hi | jq . && curl -s https://example.com/x'`, nil, "", true},
		{"perl script", CommandLine("perl", "-w", out+"/h.pl"), nil, "", true},
		{"ruby script", CommandLine("ruby", out+"/h.rb"), nil, "", true},
		{"notify-send", "notify-send 'Claude' done", nil, "", true},
		{"a #! script outside", CommandLine(out + "/notify"), nil, "", true},
		{"a relative script outside", "python3 hook.py", nil, out, true},
		{"$HOME script", `python3 "$HOME/hook.py"`, []string{"HOME=" + out}, "", true},
		{"an unknown program run outside", "srv-bin --stdio", nil, out, true},
		{"env wrapper", CommandLine("env", "A=1", "python3", out+"/hook.py"), nil, "", true},

		{"python script in a project folder", CommandLine("python3", p+"/tools/srv.py"), nil, "", false},
		{"node script in a project folder", CommandLine("node", p+"/tools/srv.js"), nil, "", false},
		{"bash script in a project folder", CommandLine("bash", p+"/tools/srv.sh"), nil, "", false},
		{"perl script in a project folder", CommandLine("perl", p+"/tools/srv.pl"), nil, "", false},
		{"$CLAUDE_PROJECT_DIR script", `"$CLAUDE_PROJECT_DIR"/tools/srv.sh`, nil, "", false},
		{"a relative script not written yet", "python3 later.py", nil, "", false},
		{"sh -c cd into the project", "sh -c 'cd " + p + "/tools && python3 srv.py'", nil, "", false},
		{"node --test", "node --test", nil, "", false},
		{"node -r", CommandLine("node", "-r", "pkg", out+"/srv.js"), nil, "", false},
		{"node -e", "node -e 'require(\"x\")'", nil, "", false},
		{"node from stdin", "node", nil, "", false},
		{"python -c importing from the project", "python3 -c 'import mod'", nil, "", false},
		{"python -m", "python3 -m mod", nil, "", false},
		{"python from stdin", "python3 -", nil, "", false},
		{"python -i", CommandLine("python3", "-i", out+"/hook.py"), nil, "", false},
		{"npx", "npx prettier --check .", nil, "", false},
		{"make", "make lint", nil, "", false},
		{"an unknown program in the project", "srv-bin --stdio", nil, "", false},
		{"a #! script running npx", CommandLine(out + "/tests"), nil, "", false},
		{"a #! interpreter in the project", CommandLine(out + "/venvpy"), nil, out, false},
		{"source without a path", "source lib.sh", nil, "", false},
		{"source in the project", ". ./lib.sh", nil, "", false},
		{"a venv first on PATH", CommandLine("python3", out+"/hook.py"), []string{"PATH=" + p + "/.venv/bin:" + out + "/bin"}, "", false},
		{"a relative PATH entry", CommandLine("python3", out+"/hook.py"), []string{"PATH=node_modules/.bin:" + out + "/bin"}, "", false},
		{"inherited PYTHONPATH", CommandLine("python3", out+"/hook.py"), []string{"PYTHONPATH=" + p}, "", false},
		{"NODE_OPTIONS requiring a package", CommandLine("node", out+"/srv.js"), []string{"NODE_OPTIONS=--require pkg"}, "", false},
		{"NODE_OPTIONS requiring a project file", CommandLine("node", out+"/srv.js"), []string{"NODE_OPTIONS=--require=" + p + "/x.js"}, "", false},
		{"BASH_ENV", CommandLine("bash", out+"/h.sh"), []string{"BASH_ENV=" + p + "/lib.sh"}, "", false},
		{"LD_PRELOAD", CommandLine("python3", out+"/hook.py"), []string{"LD_PRELOAD=" + p + "/x.so"}, "", false},
		{"PYTHONPATH set on the line", "PYTHONPATH=" + p + " python3 " + out + "/hook.py", nil, "", false},
		{"an argument naming the project", CommandLine("python3", out+"/hook.py", "--root", p), nil, "", false},
		{"a cd Cohort cannot tell", `cd "$X" && python3 hook.py`, nil, "", false},
		{"a word known at run time", `python3 ` + out + `/hook.py "$(cat x)"`, nil, "", false},
	} {
		dir := c.dir
		if dir == "" {
			dir = p
		}
		project := p
		if c.dir != "" {
			project = c.dir // a session whose project is outside the writable root
		}
		v := Judge(Program{Line: c.cmd, Env: append([]string{path}, c.env...), ProjectDir: project, Dir: dir, Writable: []string{p}})
		switch {
		case c.free && v.Refusal != "":
			t.Errorf("%s: %s: confined: %s", c.name, c.cmd, v.Refusal)
		case !c.free && v.Refusal == "":
			t.Errorf("%s: %s: runs unconfined", c.name, c.cmd)
		default:
			t.Logf("%s: %q", c.name, v.Refusal)
		}
	}
}
