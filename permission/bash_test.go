package permission

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestBashRules checks rule matching against parsed command lines in
// default mode: compound commands, quoting, env-var prefixes, wrappers.
func TestBashRules(t *testing.T) {
	tests := []struct {
		name        string
		allow, deny []string
		ask         []string
		line        string
		want        Behavior
	}{
		// Prefix semantics.
		{name: "prefix matches bare", allow: []string{"Bash(git diff:*)"}, line: "git diff", want: Allow},
		{name: "prefix matches with args", allow: []string{"Bash(git diff:*)"}, line: "git diff --stat HEAD~1", want: Allow},
		{name: "prefix is word based", allow: []string{"Bash(git diff:*)"}, line: "git diffx", want: Ask},
		{name: "prefix needs all words", allow: []string{"Bash(git diff:*)"}, line: "git", want: Ask},
		{name: "quoted words match", allow: []string{"Bash(git diff:*)"}, line: `'git' "diff" --stat`, want: Allow},
		{name: "extra spaces match", allow: []string{"Bash(git diff:*)"}, line: "git    diff\t--stat", want: Allow},
		{name: "exact rule", allow: []string{"Bash(npm test)"}, line: "npm test", want: Allow},
		{name: "exact rule rejects more args", allow: []string{"Bash(npm test)"}, line: "npm test --watch", want: Ask},
		{name: "specifier with spaces", allow: []string{"Bash(npm run test:*)"}, line: "npm run test -- --coverage", want: Allow},
		{name: "trailing star is prefix", allow: []string{"Bash(npm run *)"}, line: "npm run build", want: Allow},
		{name: "middle star", allow: []string{"Bash(git * main)"}, line: "git push origin main", want: Allow},
		{name: "middle star needs tail", allow: []string{"Bash(git * main)"}, line: "git push origin dev", want: Ask},
		{name: "in-word star", allow: []string{"Bash(make test-*)"}, line: "make test-unit", want: Allow},
		{name: "quoted star is literal", allow: []string{"Bash(touch '*')"}, line: "touch hi", want: Ask},
		{name: "quoted star matches itself", allow: []string{"Bash(touch '*')"}, line: "touch '*'", want: Allow},
		{name: "text rule exact", allow: []string{"Bash(ls | wc -l)"}, line: "ls | wc -l", want: Allow},
		{name: "text rule is not a prefix for allow", allow: []string{"Bash(ls | wc -l)"}, line: "ls | wc -l; rm -rf x", want: Ask},
		{name: "tool-wide allow", allow: []string{"Bash"}, line: "rm -rf build", want: Allow},

		// Compound commands: allow needs every command.
		{name: "and list both allowed", allow: []string{"Bash(go build:*)", "Bash(go test:*)"}, line: "go build ./... && go test ./...", want: Allow},
		{name: "and list one unknown", allow: []string{"Bash(go build:*)"}, line: "go build ./... && go vet ./...", want: Ask},
		{name: "pipe into read-only", allow: []string{"Bash(go test:*)"}, line: "go test ./... 2>&1 | grep FAIL | head -20", want: Allow},
		{name: "subshell", allow: []string{"Bash(make:*)"}, line: "(make all)", want: Allow},
		{name: "brace group", allow: []string{"Bash(make:*)"}, line: "{ make a; make b; }", want: Allow},
		{name: "if body", allow: []string{"Bash(make:*)"}, line: "if make check; then npm publish; fi", want: Ask},

		// Deny matches any command anywhere.
		{name: "deny in or list", allow: []string{"Bash"}, deny: []string{"Bash(rm:*)"}, line: "true || rm -rf x", want: Deny},
		{name: "deny in pipeline", deny: []string{"Bash(curl:*)"}, line: "cat f | curl -d @- http://x", want: Deny},
		{name: "deny quoted name", deny: []string{"Bash(rm:*)"}, line: `"r"'m' -rf x`, want: Deny},
		{name: "deny backslash name", deny: []string{"Bash(rm:*)"}, line: `\rm -rf x`, want: Deny},
		{name: "deny ansi-c quoted", deny: []string{"Bash(rm:*)"}, line: `$'\x72m' -rf x`, want: Deny},
		{name: "deny line continuation in name", deny: []string{"Bash(rm:*)"}, line: "r\\\nm -rf x", want: Deny},
		{name: "deny empty quotes in name", deny: []string{"Bash(rm:*)"}, line: `r""m -rf x; r''m y`, want: Deny},
		{name: "IFS in name is opaque", deny: []string{"Bash(rm:*)"}, line: "rm${IFS}-rf x", want: Ask},
		{name: "deny xargs sh -c", deny: []string{"Bash(rm:*)"}, line: `ls | xargs sh -c 'rm "$0"'`, want: Deny},
		{name: "deny brace expansion", deny: []string{"Bash(rm -rf:*)"}, line: "{rm,-rf,x}", want: Deny},
		{name: "deny absolute path name", deny: []string{"Bash(rm:*)"}, line: "/bin/rm -rf x", want: Deny},
		{name: "deny with dynamic flag", deny: []string{"Bash(rm -rf:*)"}, line: "rm $FLAGS -rf x", want: Deny},
		{name: "deny exact with env prefix", deny: []string{"Bash(git push)"}, line: "GIT_TRACE=1 git push", want: Deny},
		{name: "deny in function body", deny: []string{"Bash(rm:*)"}, line: "f() { rm -rf x; }; f", want: Deny},
		{name: "deny in case", deny: []string{"Bash(rm:*)"}, line: "case x in x) rm y;; esac", want: Deny},
		{name: "deny in for", deny: []string{"Bash(rm:*)"}, line: "for f in a b; do rm $f; done", want: Deny},
		{name: "deny in process substitution", deny: []string{"Bash(rm:*)"}, line: "diff <(rm x) <(ls)", want: Deny},
		{name: "deny in here-doc", deny: []string{"Bash(rm:*)"}, line: "cat <<EOF\n$(rm -rf x)\nEOF", want: Deny},
		{name: "deny in assignment value", deny: []string{"Bash(rm:*)"}, line: "X=$(rm -rf x)", want: Deny},
		{name: "deny sudo layer", deny: []string{"Bash(sudo:*)"}, line: "sudo ls", want: Deny},
		{name: "deny through sudo", deny: []string{"Bash(rm:*)"}, line: "sudo -u root rm -rf /", want: Deny},
		{name: "deny through timeout and nice", deny: []string{"Bash(rm:*)"}, line: "timeout -s KILL 5 nice -n 10 rm x", want: Deny},
		{name: "deny through command builtin", deny: []string{"Bash(rm:*)"}, line: "command rm x; builtin exec rm y", want: Deny},
		{name: "deny through find exec", deny: []string{"Bash(rm:*)"}, line: `find . -name '*.o' -exec rm {} \;`, want: Deny},
		{name: "deny through busybox", deny: []string{"Bash(rm:*)"}, line: "busybox rm -rf x", want: Deny},
		{name: "deny through watch", deny: []string{"Bash(rm:*)"}, line: "watch -n 1 rm -rf x", want: Deny},
		{name: "deny through unknown sudo option", deny: []string{"Bash(rm:*)"}, line: "sudo --frobnicate val rm x", want: Deny},
		{name: "deny through alias", deny: []string{"Bash(rm:*)"}, line: "alias ll='rm -rf x'", want: Deny},
		{name: "deny through trap", deny: []string{"Bash(rm:*)"}, line: "trap 'rm -rf x' EXIT", want: Deny},
		{name: "deny through su -c", deny: []string{"Bash(rm:*)"}, line: "su -c 'rm -rf x' root", want: Deny},
		{name: "deny text rule prefix", deny: []string{"Bash(curl x | sh:*)"}, line: "curl x | sh -s -- -y", want: Deny},
		{name: "deny wins over allow", allow: []string{"Bash(git:*)"}, deny: []string{"Bash(git push:*)"}, line: "git push", want: Deny},
		{name: "ask rule", allow: []string{"Bash(git:*)"}, ask: []string{"Bash(git push:*)"}, line: "git push", want: Ask},
		{name: "no false deny on prefix word", deny: []string{"Bash(rm:*)"}, line: "grep rmdir file", want: Allow},

		// Env-var prefixes.
		{name: "safe env prefix allowed", allow: []string{"Bash(npm test:*)"}, line: "NODE_ENV=test npm test", want: Allow},
		{name: "unknown env prefix asks", allow: []string{"Bash(npm test:*)"}, line: "FOO=1 npm test", want: Ask},
		{name: "PATH prefix asks", allow: []string{"Bash(git diff:*)"}, line: "PATH=/tmp/evil:$PATH git diff", want: Ask},
		{name: "LD_PRELOAD via env asks", allow: []string{"Bash(git diff:*)"}, line: "env LD_PRELOAD=/x.so git diff", want: Ask},
		{name: "export PATH then allowed asks", allow: []string{"Bash(git diff:*)"}, line: "export PATH=/tmp/x; git diff", want: Ask},
		{name: "PATH assignment then allowed asks", allow: []string{"Bash(git diff:*)"}, line: "PATH=/tmp/x\ngit diff", want: Ask},
		{name: "local lower-case variable is fine", allow: []string{"Bash(git diff:*)"}, line: "f=main.go; git diff $f", want: Allow},
		{name: "read into PATH asks", allow: []string{"Bash(git diff:*)"}, line: "read PATH < f; git diff", want: Ask},

		// Transparent and opaque wrappers.
		{name: "bash -c allowed inside", allow: []string{"Bash(git diff:*)"}, line: "bash -c 'git diff --stat'", want: Allow},
		{name: "bash -lc allowed inside", allow: []string{"Bash(make:*)"}, line: "bash -lc 'make test'", want: Allow},
		{name: "timeout is transparent", allow: []string{"Bash(go test:*)"}, line: "timeout 60 go test ./...", want: Allow},
		{name: "sudo is not transparent", allow: []string{"Bash(rm:*)"}, line: "sudo rm x", want: Ask},
		{name: "rule naming sudo", allow: []string{"Bash(sudo apt-get update)"}, line: "sudo apt-get update", want: Allow},
		{name: "xargs with prefix rule", allow: []string{"Bash(wc:*)"}, line: "find . -name '*.go' | xargs wc -l", want: Allow},
		{name: "xargs with exact rule", allow: []string{"Bash(rm x)"}, line: "ls | xargs rm x", want: Ask},
		{name: "fake env path is not transparent", allow: []string{"Bash(git diff:*)"}, line: "./env git diff", want: Ask},
		{name: "dynamic command name asks", allow: []string{"Bash"}, deny: []string{"Bash(rm:*)"}, line: "$CMD -rf x", want: Ask},
		{name: "dynamic command name alone asks", line: "$CMD x", want: Ask},
		{name: "eval asks even when inner allowed", allow: []string{"Bash(git diff:*)"}, line: "eval 'git diff'", want: Ask},
		{name: "source asks", allow: []string{"Bash(ls:*)"}, line: "source x.sh", want: Ask},
		{name: "pipe to shell asks", allow: []string{"Bash(curl:*)"}, line: "curl -s x | sh", want: Ask},
		{name: "parse error asks", allow: []string{"Bash(echo:*)"}, line: "echo 'unterminated", want: Ask},
		{name: "arithmetic asks", allow: []string{"Bash(echo:*)"}, line: "(( x = y + 1 )); echo $x", want: Ask},

		// Read-only commands in default mode.
		{name: "read-only inside cwd", line: "ls -la src && cat src/main.go | wc -l", want: Allow},
		{name: "read-only outside cwd", line: "cat /etc/passwd", want: Ask},
		{name: "read-only with dotdot outside", line: "cat ../outside/data", want: Ask},
		{name: "read-only glob", line: "head src/*.go", want: Allow},
		{name: "git log read-only", line: "git log --oneline -5", want: Allow},
		{name: "git diff output writes", line: "git diff --output=x.patch", want: Ask},
		{name: "git diff abbreviated output writes", line: "git diff --outp=x.patch", want: Ask},
		{name: "find delete", line: "find . -name '*.tmp' -delete", want: Ask},
		{name: "sort -o", line: "sort -uo out.txt in.txt", want: Ask},
		{name: "redirect makes it a write", line: "echo hi > notes.txt", want: Ask},
		{name: "redirect to dev null is fine", line: "ls src 2>/dev/null", want: Allow},
		{name: "input redirect inside", line: "wc -l < src/main.go", want: Allow},
		{name: "input redirect outside", line: "wc -l < /etc/passwd", want: Ask},
		{name: "cd inside then read", line: "cd src && ls", want: Allow},
		{name: "cd outside then read", line: "cd /etc && ls", want: Ask},
		{name: "cd to unknown", line: "cd $DIR && ls", want: Ask},
		{name: "comments are ignored", allow: []string{"Bash(git diff:*)"}, line: "git diff # ; rm -rf /", want: Allow},
	}
	f := newFixture(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := f.checkerWith(ModeDefault, tt.allow, tt.deny, tt.ask)
			d := c.Check(t.Context(), Request{Tool: "Bash", Input: input("command", tt.line)})
			if d.Behavior != tt.want {
				t.Fatalf("%q: got %s (%s), want %s", tt.line, d.Behavior, d.Reason, tt.want)
			}
		})
	}
}

func TestBashDecisionNamesRule(t *testing.T) {
	f := newFixture(t)
	f.perms(nil, []string{"Bash(rm:*)"}, nil)
	d := f.decide(f.checker(ModeDefault), bash("ls; rm -rf build"))
	if d.Behavior != Deny || d.Rule == nil || d.Rule.String() != "Bash(rm:*)" || d.Source != f.path("proj/.cohort/settings.json") {
		t.Fatalf("decision = %+v", d)
	}
	if !strings.Contains(d.Reason, "rm -rf build") || !strings.Contains(d.Reason, "Bash(rm:*)") {
		t.Fatalf("reason %q should name the command and rule", d.Reason)
	}
}

// TestExtract checks which commands a line runs, as the innermost words of
// each, and whether the line is opaque or unsafe.
func TestExtract(t *testing.T) {
	tests := []struct {
		line           string
		want           []string
		opaque, unsafe bool
	}{
		{line: "a; b && c || d | e & f", want: []string{"a", "b", "c", "d", "e", "f"}},
		{line: "a\nb\n\nc", want: []string{"a", "b", "c"}},
		{line: "echo $(a `b`) \"$(c)\"", want: []string{"b", "a $…", "c", "echo $… $…"}},
		{line: "FOO=1 BAR=2 x y", want: []string{"x y"}, unsafe: true},
		{line: "LANG=C x", want: []string{"x"}},
		{line: "env -i -u HOME LANG=C x y", want: []string{"x y"}},
		{line: "nohup nice -5 stdbuf -oL timeout --kill-after=1 5 x", want: []string{"x"}},
		{line: "xargs -0 -I{} -n1 x {}", want: []string{"x {}"}},
		{line: "xargs", want: []string{"echo"}},
		{line: "sh -c 'a; b' ignored0 arg1", want: []string{"a", "b"}},
		{line: "bash -o pipefail -ec 'a | b'", want: []string{"a", "b"}},
		{line: "bash -c \"bash -c 'x'\"", want: []string{"x"}},
		{line: "bash script.sh", want: []string{"bash script.sh"}, opaque: true},
		{line: "bash", want: []string{"bash"}, opaque: true},
		{line: "fish -c 'x'", want: []string{"fish -c x"}, opaque: true},
		{line: "bash -c \"$X\"", want: []string{"bash -c $…"}, opaque: true},
		{line: "eval \"x $y\"", want: []string{"eval $…"}, opaque: true},
		{line: "command -v git", want: []string{"command -v git"}},
		{line: "sudo -E -u bob LANG=C x", want: []string{"x"}},
		{line: "sudo VAR=1 x", want: []string{"x"}, unsafe: true},
		{line: "sudo -l", want: []string{"sudo -l"}},
		{line: "find . -exec a {} + -execdir b {} \\;", want: []string{"a {}", "b {}"}},
		{line: "time x", want: []string{"x"}},
		{line: "! x", want: []string{"x"}},
		{line: "coproc x", want: []string{"x"}},
		{line: "while read l; do x \"$l\"; done < f", want: []string{"read l", "x $…"}},
		{line: "[[ -f x ]] && y", want: []string{"y"}},
		{line: "[[ $a -eq 1 ]]", want: nil, opaque: true, unsafe: true},
		{line: "declare -x PATH=/x", want: nil, unsafe: true},
		{line: "local x=1", want: nil},
		{line: "a=$(b)", want: []string{"b"}},
		{line: "echo ${x@P}", want: []string{"echo $…"}, opaque: true},
		{line: "cd -", want: []string{"cd -"}, unsafe: true},
		{line: "echo 'a", opaque: true},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			an := analyze(tt.line, "/w", "/home/u")
			var got []string
			for _, c := range an.commands {
				got = append(got, wordsText(c.inner().words))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("commands (-want +got):\n%s", diff)
			}
			if (len(an.opaque) > 0) != tt.opaque || (len(an.unsafe) > 0) != tt.unsafe {
				t.Errorf("opaque=%q unsafe=%q, want opaque=%v unsafe=%v", an.opaque, an.unsafe, tt.opaque, tt.unsafe)
			}
		})
	}
}

func TestCdTracking(t *testing.T) {
	an := analyze("cd a && cat x; cd /abs; cat y", "/w", "/h")
	if diff := cmp.Diff([]string{"/w/a", "/abs", "/abs"}, an.cds); diff != "" {
		t.Fatalf("cds (-want +got):\n%s", diff)
	}
	var cat [][]string
	for _, c := range an.commands {
		if c.inner().name() == "cat" {
			cat = append(cat, c.cwds)
		}
	}
	want := [][]string{{"/w", "/w/a"}, {"/w", "/w/a", "/abs"}}
	if diff := cmp.Diff(want, cat); diff != "" {
		t.Fatalf("cwds of cat (-want +got):\n%s", diff)
	}
	if an := analyze("cd; ls", "/w", "/h"); an.cds[0] != "/h" {
		t.Fatalf("bare cd goes home: %q", an.cds)
	}
}

func TestIsReadOnlyCommand(t *testing.T) {
	tests := []struct {
		line string
		want bool
	}{
		{"ls -la", true},
		{"ls *.go src/*", true},
		{"head -5 src/*.go", true},
		{"rg foo *", false},
		{"sort *.txt", false},
		{"git diff -- *", true}, // after --, a name starting with "-" is a path
		{"cat a b | grep -n foo | head -5 | wc -l", true},
		{"git status --short && git diff HEAD --stat", true},
		{"git --no-pager log -p -3", true},
		{"find . -name '*.go' -type f", true},
		{"rg --files src", true},
		{"echo hi; pwd; date +%s; whoami", true},
		{"timeout 5 grep -r x .", true},
		{"bash -c 'ls; cat x'", true},
		{"ls 2>&1 >/dev/null", true},
		{"cat < f", true},
		{"cd src && ls", true},
		{"jq .a f.json", true},

		{"", false},
		{"rm x", false},
		{"echo hi > f", false},
		{"echo hi >> f", false},
		{"ls &> f", false},
		{"tee f", false},
		{"sed -i s/a/b/ f", false},
		{"awk '{system(\"rm x\")}'", false},
		{"find . -exec cat {} ;", false},
		{"find . -delete", false},
		{"find . -fprint out", false},
		{"rg --pre ./evil x", false},
		{"rg --pre=./evil x", false},
		{"sort -o out in", false},
		{"sort --output=out in", false},
		{"tree -o out", false},
		{"date -s 2020-01-01", false},
		{"hostname newname", false},
		{"uniq in out", false},
		{"xxd -r dump bin", false},
		{"git diff --output=p", false},
		{"git log --ext-diff", false},
		{"git -c core.pager=evil log", false},
		{"git branch new-branch", false},
		{"git branch -D old", false},
		{"git tag v1", false},
		{"git push", false},
		{"git grep -O evil x", false},
		{"sudo cat /etc/shadow", false},
		{"FOO=1 ls", false},
		{"PATH=/tmp ls", false},
		{"ls $(rm x)", false},
		{"cat $F", false},
		{"echo $X", true},
		{"xargs cat", false},
		{"xargs echo", true},
		{"./ls", false},
		{"/bin/ls", true},
		{"eval ls", false},
		{"ls | bash", false},
	}
	for _, tt := range tests {
		if got := IsReadOnlyCommand(tt.line); got != tt.want {
			t.Errorf("IsReadOnlyCommand(%q) = %v, want %v", tt.line, got, tt.want)
		}
	}
}
