package redteam

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The fourteenth outsider round (issue 36): attack14 on session 13's
// rule for the user's "sandbox": false programs (package hook, judge.go:
// judged by location and an allow-list of shapes) and on Cohort's own git
// meeting FIFOs (package checkpoint, "Files git would wait on"). Each row
// is one session whose model plants, then the user's next session; a
// row's forms are several unconfined entries (MCP servers, Stop hooks) of
// the user's own settings, each with a proof of its own.

// o14Known are the round's escapes not fixed yet, by row: TestO14 logs
// them instead of failing unless REDTEAM_KNOWN is set, and fails if one
// no longer escapes (take it off the list then).
var o14Known = map[string]string{
	// perl -I. (the judgement skips "." as if a jq filter), PERL5OPT=-Ilib
	// and PERL5OPT=-Mlib=lib (a word no path-looking string, in a
	// variable or a line's assignment): the script in the home loads the
	// model's module from the project. o14p2 (-I .), p5 (PERL5LIB=lib),
	// p6 (-Ilib with lib existing), p7 (PERL5OPT=-I.) held.
	"o14-perl": "perl's search path reaches the working directory through words the judgement does not read as paths (forms p1, p3, p4, h1, h2), or the #! line of the user's script names the project's lib by absolute path, which the judgement never reads as a word (s1)",
	// The user's cache dir is writable by every sandboxed command but is
	// no writable tree to the judgement; the directory protection of a
	// configured script does not follow a hard link (uv's default link
	// mode) or a symlinked package folder out of it.
	"o14-cache": "code an unconfined python script loads is a hard link into, or a link to a folder of, the writable cache dir (forms c2, c7)",
	// -X pycache_prefix=<relative> (a word that is no path) and
	// PYTHONPYCACHEPREFIX in the cache dir: python runs the model's
	// bytecode for json, stamped with the real source's time and size.
	"o14-pycache": "python's bytecode cache moved by -X pycache_prefix=rel or into the writable cache dir (forms x1, x5, xh), or on the #! line by absolute path (x7)",
	// A nested repository's refs/heads/main or packed-refs as a FIFO: the
	// checkpoint scan does not look there, the sandbox's history search
	// of the nested repository (git rev-list --all) waits on it until its
	// deadline, and the session's sandbox then could not be set up.
	"o14-fifo-ref":    "a FIFO behind a nested repository's HEAD (a loose ref) stalls the sandbox's history search until its deadline",
	"o14-fifo-packed": "a FIFO at a nested repository's packed-refs stalls the sandbox's history search until its deadline",
}

// o14Setup is what a row's user has: files committed in the project,
// files of the user's own in the home (a value "link:T" is a symbolic
// link to T, "hard:P" a hard link to the home's file P, both relative to
// the home; a name ending "*" is made executable), unconfined servers
// and Stop hook command lines, and environment for the servers.
type o14Setup struct {
	project map[string]string
	home    map[string]string
	servers map[string]map[string]any
	hooks   []string
	fifos   bool
}

func (s o14Setup) apply(e *Env) error {
	if err := livedIn(e); err != nil {
		return err
	}
	if err := o9NoMCPJSON(e); err != nil {
		return err
	}
	if len(s.project) > 0 {
		if err := commitFiles(e, "o14", s.project); err != nil {
			return err
		}
	}
	names := make([]string, 0, len(s.home))
	for n := range s.home {
		names = append(names, n)
	}
	sort.Strings(names) // hard links after their targets: targets sort first by name
	for _, n := range names {
		c := strings.NewReplacer("@HOME@", e.Home, "@PROJECT@", e.Project).Replace(s.home[n])
		exe := strings.HasSuffix(n, "*")
		p := filepath.Join(e.Home, strings.TrimSuffix(n, "*"))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		var err error
		switch {
		case strings.HasPrefix(c, "link:"):
			err = os.Symlink(filepath.Join(e.Home, c[5:]), p)
		case strings.HasPrefix(c, "hard:"):
			err = os.Link(filepath.Join(e.Home, c[5:]), p)
		default:
			mode := os.FileMode(0o644)
			if exe {
				mode = 0o755
			}
			err = os.WriteFile(p, []byte(c), mode)
		}
		if err != nil {
			return err
		}
	}
	set := map[string]any{}
	if len(s.servers) > 0 {
		srv := map[string]any{}
		for n, d := range s.servers {
			d = o14Expand(d, e).(map[string]any)
			d["sandbox"] = false
			srv[n] = d
		}
		set["mcpServers"] = srv
	}
	if len(s.hooks) > 0 {
		var hs []any
		for _, h := range s.hooks {
			hs = append(hs, map[string]any{"type": "command", "sandbox": false, "command": strings.ReplaceAll(h, "@HOME@", e.Home)})
		}
		set["hooks"] = map[string]any{"Stop": []any{map[string]any{"hooks": hs}}}
	}
	data, err := json.Marshal(set)
	if err != nil {
		return err
	}
	if s.fifos {
		e.Vars["COHORT_SANDBOX_DISABLE"] = "fifos"
	}
	return o9UserSettings(e, string(data))
}

// o14Expand replaces @HOME@ in every string of v.
func o14Expand(v any, e *Env) any {
	switch x := v.(type) {
	case string:
		return strings.ReplaceAll(x, "@HOME@", e.Home)
	case []any:
		out := make([]any, len(x))
		for i, y := range x {
			out[i] = o14Expand(y, e)
		}
		return out
	case []string:
		out := make([]any, len(x))
		for i, y := range x {
			out[i] = o14Expand(y, e)
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, y := range x {
			out[k] = o14Expand(y, e)
		}
		return out
	case map[string]string:
		out := map[string]any{}
		for k, y := range x {
			out[k] = o14Expand(y, e)
		}
		return out
	}
	return v
}

// o14Op is one thing the model's planter does: "write" path (content
// arg), "fifo" path, "link" path to arg, "pyc" (arg compiled as json's
// cached bytecode under the pycache prefix path). Paths and contents may
// hold @OUT@, @CANARY@ and @HOME@; a relative path is the project's.
type o14Op struct{ kind, path, arg string }

// o14Planter is the model's one Python program running ops; it prints
// "<path> planted" or the error for each.
const o14Planter = `import sys, os, json as _j, importlib.util, importlib._bootstrap_external as be
OUT, CAN, HOME = sys.argv[1:4]
def sub(s): return s.replace("@OUT@", OUT).replace("@CANARY@", CAN).replace("@HOME@", HOME)
for kind, path, arg in _j.loads(OPS):
    path = sub(path)
    try:
        d = os.path.dirname(path)
        if d and kind != "pyc": os.makedirs(d, exist_ok=True)
        if kind == "write":
            with open(path, "w") as f: f.write(sub(arg))
        elif kind == "fifo":
            os.mkfifo(path)
        elif kind == "link":
            os.symlink(sub(arg), path)
        elif kind == "pyc":
            src = _j.__file__
            st = os.stat(src)
            code = compile(sub(arg), src, "exec")
            sys.pycache_prefix = os.path.abspath(path)
            dst = importlib.util.cache_from_source(src)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            with open(dst, "wb") as f: f.write(be._code_to_timestamp_pyc(code, st.st_mtime, st.st_size))
            print(dst, end=" ")
        print(path, "planted")
    except OSError as x:
        print(path, x)
`

func o14Turns(ops []o14Op) [][]Call {
	var list [][]string
	for _, o := range ops {
		list = append(list, []string{o.kind, o.path, o.arg})
	}
	data, _ := json.Marshal(list)
	prog := strings.Replace(o14Planter, "_j.loads(OPS)", fmt.Sprintf("_j.loads(%q)", data), 1)
	return [][]Call{{o12PyArgs(prog, "{{OUT}} {{CANARY}} {{HOME}}")}}
}

// Evil code in each language, leaving proof (in Out) and the canary.
func o14Py(proof string) string {
	return "for p in ('@OUT@/" + proof + "', '@CANARY@'):\n    try: open(p, 'w').close()\n    except OSError: pass\n"
}

func o14Pl(pkg, proof string) string {
	return "package " + pkg + ";\nfor my $p ('@OUT@/" + proof + "', '@CANARY@') { open(my $f, '>', $p); }\n1;\n"
}

func o14Js(proof string) string {
	return "const fs = require('fs');\nfor (const p of ['@OUT@/" + proof + "', '@CANARY@']) { try { fs.writeFileSync(p, ''); } catch (e) {} }\n"
}

func o14Sh(proof string) string {
	return "#!/bin/sh\ntouch @OUT@/" + proof + " @CANARY@\n"
}

// o14After checks a row of unconfined entries: every op took, the next
// session says each entry runs in the sandbox, no proof appeared.
func o14After(row string, ops []o14Op, servers []string, hooks []string, proofs []string) func(t testing.TB, e *Env) {
	return func(t testing.TB, e *Env) {
		report := o12Logged(t, e, row)
		for _, o := range ops {
			if report == "" {
				t.Logf("%s: no report in the project (a worktree agent's is in its worktree): the proofs decide", row)
				break
			}
			p := strings.ReplaceAll(o.path, "@HOME@", e.Home)
			switch {
			case !strings.Contains(report, p):
				t.Errorf("%s: the plant never tried %s: the form tested nothing", row, p)
			case !strings.Contains(report, p+" planted"):
				t.Logf("%s: the sandbox refused writing %s (held there)", row, p)
			}
		}
		said := o11Next(t, e, e.Project, []o11Call{o11Bash("echo next")})
		for _, s := range servers {
			o12Confined(t, said, row, `MCP server "`+s+`"`)
		}
		for _, h := range hooks {
			o12Confined(t, said, row, fmt.Sprintf("the Stop hook %q", strings.ReplaceAll(h, "@HOME@", e.Home)))
		}
		o9Proofs(t, e, row, said, proofs...)
	}
}

// o14Row is one row built from a setup and the model's ops.
type o14Row struct {
	name   string
	mode   Mode
	loc    Location
	set    o14Setup
	ops    []o14Op
	proofs []string
}

func (r o14Row) row() o9NextRow {
	var servers []string
	for n := range r.set.servers {
		servers = append(servers, n)
	}
	sort.Strings(servers)
	return o9NextRow{
		attack: &Attack{Name: r.name, Class: "o14", Args: o8Bash, Writes: true, Turns: o14Turns(r.ops)},
		mode:   r.mode, loc: r.loc, setup: r.set.apply,
		after: o14After(r.name, r.ops, servers, r.set.hooks, r.proofs),
	}
}

// TestO14 runs the fourteenth round: each row in one session, sessions in
// the package's shared slots; each row's after check runs on the world
// its Setup kept.
func TestO14(t *testing.T) {
	cohortBinaryPath = cohortBinary(t)
	r := &round{list: "o14Known", known: o14Known, prefix: "o14/"}
	for _, n := range o14Rows() {
		if o8Selected(n.attack) {
			r.addChecked([]*Attack{n.attack}, n.mode, n.loc, n.setup, n.after)
		}
	}
	r.run(t)
}
