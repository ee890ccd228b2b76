package permission

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// FuzzBashCheck feeds arbitrary command lines to the analysis and the
// checker: it must never panic, and a line the shell parser rejects (or
// that holds something the analysis could not see into) is never allowed.
func FuzzBashCheck(f *testing.F) {
	for _, s := range []string{
		"git diff; rm -rf /", "echo $(rm x)", "bash -c 'ls'", "ls | xargs rm", "cd secrets && cat key",
		"FOO=1 rm x", "eval 'x'", "cat <<EOF\n$(id)\nEOF", "echo 'unterminated", "a=(1 2); echo ${a[@]}",
		"for ((i=0;i<3;i++)); do echo $i; done", "find . -exec rm {} +", "sudo -u x -- rm y", "ls > /dev/null 2>&1",
		"f() { f; }; f", "$(", "`", "((", "case", "echo {a,b}{c,d}", "[[ -f x ]]", "coproc ls", "time -p ls",
	} {
		f.Add(s)
	}
	fx := newFixture(f)
	c := fx.checkerWith(ModeDefault, []string{"Bash(echo:*)", "Bash(git diff:*)", "Bash(ls:*)"},
		[]string{"Bash(rm:*)", "Read(./secrets/**)"}, nil)
	f.Fuzz(func(t *testing.T, line string) {
		// Tool input is JSON, which cannot carry invalid UTF-8.
		line = strings.ToValidUTF8(line, "\uFFFD")
		_, parseErr := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(line), "")
		an := analyze(line, fx.cwd, fx.home)
		if parseErr != nil && len(an.opaque) == 0 {
			t.Fatalf("parse error %v but the analysis is not opaque", parseErr)
		}
		ro := IsReadOnlyCommand(line)
		d := c.Check(t.Context(), bash(line))
		if (parseErr != nil || len(an.opaque) > 0) && (d.Behavior == Allow || ro) {
			t.Fatalf("%q: allowed (%s) or read-only (%v) although it could not be analysed (%v)", line, d.Reason, ro, an.opaque)
		}
		if d.Behavior == Allow && len(an.unsafe) > 0 {
			t.Fatalf("%q: allowed although unsafe: %v", line, an.unsafe)
		}
		if d.Behavior == Allow {
			for _, cmd := range an.commands {
				if name := cmd.inner().name(); name == "rm" {
					t.Fatalf("%q: allowed a command named rm", line)
				}
			}
		}
	})
}
