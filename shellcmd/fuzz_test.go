package shellcmd

import (
	"slices"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// FuzzAnalyze feeds arbitrary lines to the analysis: it must not panic or
// hang, a line the shell parser rejects is never understood, and what it
// returns keeps its promises (every command has a program and a
// directory, directories stay bounded, words are dynamic or not).
func FuzzAnalyze(f *testing.F) {
	for _, s := range []string{
		"git diff; rm -rf /", "echo $(rm x)", "bash -c 'ls'", "ls | xargs rm", "cd secrets && cat key",
		"FOO=1 rm x", "eval 'x'", "cat <<EOF\n$(id)\nEOF", "echo 'unterminated", "a=(1 2); echo ${a[@]}",
		"for ((i=0;i<3;i++)); do echo $i; done", "find . -exec rm {} +", "sudo -u x -- rm y", "ls > /dev/null 2>&1",
		"f() { f; }; f", "$(", "`", "((", "case", "echo {a,b}{c,d}", "[[ -f x ]]", "coproc ls", "time -p ls",
		"while x; do cd a; done", "flock f sh -c 'cd /m'", "printf -v PATH x", "read -r a b < f",
		"env -u X A=1 nice -n 2 timeout 5 bash -c 'cd .. && make'", "$'r\\c@m' x", "cd {1..100000}",
		"alias a='b'; trap 'c' EXIT; watch 'd; e'", "su -c 'x' u; su", "busybox sh -c 'y'",
	} {
		f.Add(s)
	}
	parser := syntax.NewParser(syntax.Variant(syntax.LangBash))
	f.Fuzz(func(t *testing.T, line string) {
		_, parseErr := parser.Parse(strings.NewReader(line), "")
		for _, opts := range []Options{{Dir: "/w", Home: "/h"}, {ScriptArgs: true}} {
			an := Analyze(line, opts)
			if parseErr != nil && an.Understood() {
				t.Fatalf("%q: parse error %v but the analysis says it understood the line", line, parseErr)
			}
			checkAnalysis(t, line, an)
		}
	})
}

func checkAnalysis(t *testing.T, line string, an *Analysis) {
	t.Helper()
	if an.Line != line {
		t.Fatalf("Line = %q, want %q", an.Line, line)
	}
	for i, n := range an.Notes {
		if slices.Contains(an.Notes[:i], n) || n.Reason == "" || n.Kind < Unknown || n.Kind > Caution {
			t.Fatalf("%q: bad or repeated note %v in %v", line, n, an.Notes)
		}
	}
	for _, c := range an.Commands {
		if len(c.Layers) == 0 || len(c.Dirs) == 0 || len(c.Dirs) > maxCwds+1 {
			t.Fatalf("%q: command %q has %d layers and dirs %q", line, c.Source(), len(c.Layers), c.Dirs)
		}
		for _, l := range c.Layers {
			if len(l.Words) == 0 {
				t.Fatalf("%q: command %q has an empty layer", line, c.Source())
			}
			for _, w := range l.Words {
				if w.Dynamic && (w.Value != "" || w.Glob) {
					t.Fatalf("%q: dynamic word %+v has a value", line, w)
				}
			}
		}
	}
	for _, r := range an.Redirects {
		if len(r.Dirs) == 0 {
			t.Fatalf("%q: redirect to %s has no directory", line, r.Target)
		}
	}
}
