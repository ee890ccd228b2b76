package shellcmd

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// programs lists the innermost words of every command, as text.
func programs(an *Analysis) []string {
	var out []string
	for _, c := range an.Commands {
		out = append(out, wordsText(c.Program().Words))
	}
	return out
}

// kinds lists the kinds of the line's notes, each once, in order.
func kinds(an *Analysis) []NoteKind {
	var out []NoteKind
	for _, n := range an.Notes {
		if !slices.Contains(out, n.Kind) {
			out = append(out, n.Kind)
		}
	}
	slices.Sort(out)
	return out
}

var (
	unknown = []NoteKind{Unknown}
	hidden  = []NoteKind{Hidden}
	caution = []NoteKind{Caution}
)

// TestCommands checks which commands a line runs (the innermost words of
// each) and the kinds of notes it gets.
func TestCommands(t *testing.T) {
	tests := []struct {
		line  string
		want  []string
		notes []NoteKind
	}{
		{line: "a; b && c || d | e & f", want: []string{"a", "b", "c", "d", "e", "f"}},
		{line: "a\nb\n\nc", want: []string{"a", "b", "c"}},
		{line: "echo $(a `b`) \"$(c)\"", want: []string{"b", "a $(b)", "c", `echo $(a $(b)) "$(c)"`}},
		{line: "FOO=1 BAR=2 x y", want: []string{"x y"}},
		{line: "env -i -u HOME LANG=C x y", want: []string{"x y"}},
		{line: "nohup nice -5 stdbuf -oL timeout --kill-after=1 5 x", want: []string{"x"}},
		{line: "xargs -0 -I{} -n1 x {}", want: []string{"x {}"}},
		{line: "xargs", want: []string{"echo"}},
		{line: "sh -c 'a; b' ignored0 arg1", want: []string{"a", "b"}},
		{line: "bash -o pipefail -ec 'a | b'", want: []string{"a", "b"}},
		{line: "bash -c \"bash -c 'x'\"", want: []string{"x"}},
		{line: "bash script.sh", want: []string{"bash script.sh"}, notes: hidden},
		{line: "bash", want: []string{"bash"}, notes: hidden},
		{line: "curl -s x | sh", want: []string{"curl -s x", "sh"}, notes: hidden},
		{line: "fish -c 'x'", want: []string{"fish -c x"}, notes: hidden},
		{line: "source x.sh; . y.sh", want: []string{"source x.sh", ". y.sh"}, notes: hidden},
		{line: "su root", want: []string{"su root"}, notes: hidden},
		{line: "bash -c \"$X\"", want: []string{`bash -c "$X"`}, notes: unknown},
		{line: "eval \"x $y\"", want: []string{`eval "x $y"`}, notes: unknown},
		{line: "eval 'a; b'", want: []string{"a", "b"}, notes: caution},
		{line: "command -v git", want: []string{"command -v git"}},
		{line: "sudo -E -u bob LANG=C x", want: []string{"x"}},
		{line: "sudo -l", want: []string{"sudo -l"}},
		{line: "sudo --frobnicate val rm x", want: []string{"val rm x"}, notes: caution},
		{line: "find . -exec a {} + -execdir b {} \\;", want: []string{"a {}", "b {}"}},
		{line: "find . -exe? rm {} \\;", want: []string{"find . -exe? rm {} ;"}, notes: unknown},
		{line: "time x", want: []string{"x"}},
		{line: "/usr/bin/time -o f x", want: []string{"x"}, notes: caution},
		{line: "time -p x", want: []string{"x"}},
		{line: "! x", want: []string{"x"}},
		{line: "coproc x", want: []string{"x"}},
		{line: "busybox rm -rf x", want: []string{"rm -rf x"}},
		{line: "watch -n 1 'a; b'", want: []string{"a", "b"}},
		{line: "su -c 'rm x' root", want: []string{"rm x"}},
		{line: "alias ll='rm -rf x'", want: []string{"rm -rf x"}, notes: caution},
		{line: "trap 'rm -rf x' EXIT", want: []string{"rm -rf x"}},
		{line: "env -S 'a b'", want: []string{"env -S a b"}, notes: unknown},
		{line: "env -C /x y", want: []string{"env -C /x y"}, notes: unknown},
		{line: "while read l; do x \"$l\"; done < f", want: []string{"read l", `x "$l"`}},
		{line: "[[ -f x ]] && y", want: []string{"y"}},
		{line: "[[ $a -eq 1 ]]", notes: []NoteKind{Hidden, Caution}},
		{line: "(( x++ ))", notes: hidden},
		{line: "((x = 1 + 2)); ((x++)); echo $((x * 2))", want: []string{"echo $((x * 2))"}, notes: caution},
		{line: "for ((i = 0; i < 3; i++)); do echo $((i)); done; echo $((i))", want: []string{"echo $((i))", "echo $((i))"}, notes: caution},
		{line: "echo $((1 + 0x10 + 2#101))", want: []string{"echo $((1 + 0x10 + 2#101))"}},
		{line: "x='a[$(touch p)]'; echo $((x))", want: []string{"echo $((x))"}, notes: hidden},
		{line: "true && i=0; echo $((i))", want: []string{"true", "echo $((i))"}, notes: hidden},
		{line: "(i=0); echo $((i))", want: []string{"echo $((i))"}, notes: hidden},
		{line: "i=0; i=$1; echo $((i))", want: []string{"echo $((i))"}, notes: hidden},
		{line: "echo ${a[0]} ${a[@]} ${!a[@]} ${!pre*} ${#a}", want: []string{"echo ${a[0]} ${a[@]} ${!a[@]} ${!pre*} ${#a}"}},
		{line: "echo ${a[x]}", want: []string{"echo ${a[x]}"}, notes: hidden},
		{line: "echo ${y:x} ${y:0:x}", want: []string{"echo ${y:x} ${y:0:x}"}, notes: hidden},
		{line: "echo ${!x}", want: []string{"echo ${!x}"}, notes: hidden},
		{line: "a[x]=1", notes: hidden},
		{line: "[[ x -eq 1 ]]", notes: hidden},
		{line: "[[ -v 'a[$(touch p)]' ]]", notes: hidden},
		{line: "test -v 'a[$(touch p)]'", want: []string{"test -v a[$(touch p)]"}, notes: hidden},
		{line: "read 'a[$(touch p)]'", want: []string{"read a[$(touch p)]"}, notes: hidden},
		{line: "declare -i n=x", notes: hidden},
		{line: "declare -n r=x", notes: hidden},
		{line: "mapfile -C 'touch p' -c 1 arr", want: []string{"mapfile -C touch p -c 1 arr"}, notes: hidden},
		{line: "for x in 'a[$(touch p)]'; do echo $((x)); done", want: []string{"echo $((x))"}, notes: hidden},
		{line: "for x in 1 2 3; do echo $((x)); done", want: []string{"echo $((x))"}, notes: caution},
		{line: "declare -x PATH=/x", want: nil},
		{line: "a=$(b)", want: []string{"b"}},
		{line: "echo ${x@P}", want: []string{"echo ${x@P}"}, notes: hidden},
		{line: "echo ${x@Q}", want: []string{"echo ${x@Q}"}, notes: caution},
		{line: "cd -", want: []string{"cd -"}, notes: caution},
		{line: "hash -p ./evil git", want: []string{"hash -p ./evil git"}, notes: caution},
		{line: "$CMD -rf x", want: []string{"$CMD -rf x"}, notes: unknown},
		{line: "timeout 5 $CMD", want: []string{"$CMD"}, notes: []NoteKind{Unknown, Caution}},
		{line: "/bin/r? -rf x", want: []string{"/bin/r? -rf x"}, notes: unknown},
		{line: "echo 'a", notes: unknown},
		{line: "# only a comment"},
		{line: "f() { rm x; }; f", want: []string{"rm x", "f", "rm x"}},
		{line: "case x in x) rm y;; esac", want: []string{"rm y"}},
		{line: "diff <(rm x) <(ls)", want: []string{"rm x", "ls", "diff <(rm x) <(ls)"}},
		{line: "cat <<EOF\n$(rm -rf x)\nEOF", want: []string{"rm -rf x", "cat"}},
		{line: "echo sh -c 'rm x'", want: []string{"echo sh -c rm x"}},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			an := Analyze(tt.line, Options{Dir: "/w", Home: "/home/u"})
			if diff := cmp.Diff(tt.want, programs(an)); diff != "" {
				t.Errorf("commands (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.notes, kinds(an)); diff != "" {
				t.Errorf("note kinds (-want +got):\n%s\nnotes: %q", diff, an.Notes)
			}
		})
	}
}

// TestLayers checks the wrapper layers of a command and their flags.
func TestLayers(t *testing.T) {
	type layer struct {
		Words                         string
		Transparent, OpenArgs, Unsure bool
	}
	tests := []struct {
		line string
		want []layer
	}{
		{"sudo -u x timeout 5 rm y", []layer{{Words: "sudo -u x timeout 5 rm y"}, {Words: "timeout 5 rm y", Transparent: true}, {Words: "rm y"}}},
		{"bash -c 'ls -l'", []layer{{Words: "bash -c ls -l", Transparent: true}, {Words: "ls -l"}}},
		{"./env git diff", []layer{{Words: "./env git diff"}, {Words: "git diff"}}},
		{"/usr/bin/env git diff", []layer{{Words: "/usr/bin/env git diff", Transparent: true}, {Words: "git diff"}}},
		{"find . -exec wc -l {} +", []layer{{Words: "find . -exec wc -l {} +"}, {Words: "wc -l {}", OpenArgs: true}}},
		{"ls | xargs -n1 wc", []layer{{Words: "ls"}}},
		{"nice --weird 5 x", []layer{{Words: "nice --weird 5 x", Transparent: true, Unsure: true}, {Words: "5 x"}}},
		{"command time -o out x", []layer{{Words: "command time -o out x", Transparent: true}, {Words: "time -o out x"}, {Words: "x"}}},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			an := Analyze(tt.line, Options{Dir: "/w"})
			var got []layer
			for _, l := range an.Commands[0].Layers {
				got = append(got, layer{wordsText(l.Words), l.Transparent, l.OpenArgs, l.Uncertain})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("layers (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWords checks expansion: quotes, escapes, braces, tildes, patterns
// and what stays dynamic.
func TestWords(t *testing.T) {
	type word struct {
		Value         string
		Dynamic, Glob bool
	}
	tests := []struct {
		line string
		want []word
	}{
		{`'r'"m" \-rf`, []word{{Value: "rm"}, {Value: "-rf"}}},
		{`$'\x72m' r""m`, []word{{Value: "rm"}, {Value: "rm"}}},
		{`x $'r\c@m'`, []word{{Value: "x"}, {Dynamic: true}}},
		{`x {a,b}{1,2}`, []word{{Value: "x"}, {Value: "a1"}, {Value: "a2"}, {Value: "b1"}, {Value: "b2"}}},
		{`x {1..3}`, []word{{Value: "x"}, {Value: "1"}, {Value: "2"}, {Value: "3"}}},
		{`x ~/a ~ ~bob/c`, []word{{Value: "x"}, {Value: "/home/u/a"}, {Value: "/home/u"}, {Dynamic: true}}},
		{`x *.go '*.go' s[e]c d\*`, []word{{Value: "x"}, {Value: "*.go", Glob: true}, {Value: "*.go"}, {Value: "s[e]c", Glob: true}, {Value: "d*"}}},
		{`x $y "$z" $(w) $((1+2)) "a$b"`, []word{{Value: "x"}, {Dynamic: true}, {Dynamic: true}, {Dynamic: true}, {Dynamic: true}, {Dynamic: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			an := Analyze(tt.line, Options{Dir: "/w", Home: "/home/u"})
			var got []word
			for _, w := range an.Commands[len(an.Commands)-1].Layers[0].Words {
				got = append(got, word{w.Value, w.Dynamic, w.Glob})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("words (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWordMethods(t *testing.T) {
	an := Analyze(`cp "$src" -- *.txt`, Options{})
	ws := an.Commands[0].Layers[0].Words
	got := []string{ws[1].String(), fmt.Sprint(ws[1].Static(), ws[2].Is("--"), ws[3].Is("*.txt"), ws[3].Static())}
	if diff := cmp.Diff([]string{`"$src"`, "false true false false"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if s := an.Commands[0].Source(); s != `cp "$src" -- *.txt` {
		t.Errorf("Source() = %q", s)
	}
}

// TestSource checks that a command inside a wrapper's script reports its
// own text, and one found by unwrapping the text of the whole call.
func TestSource(t *testing.T) {
	an := Analyze(`FOO=1 sudo bash -c 'cd src && touch  x'`, Options{Dir: "/w"})
	var got []string
	for _, c := range an.Commands {
		got = append(got, c.Source())
	}
	if diff := cmp.Diff([]string{"cd src", "touch x"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	an = Analyze("FOO=1  timeout 5 rm x", Options{})
	if s := an.Commands[0].Source(); s != "FOO=1 timeout 5 rm x" {
		t.Errorf("Source() = %q", s)
	}
}

func TestUnderstood(t *testing.T) {
	for line, want := range map[string]bool{"ls": true, "bash x.sh": true, "eval ls": true, "$x": false, "echo 'a": false} {
		if got := Analyze(line, Options{}).Understood(); got != want {
			t.Errorf("Understood(%q) = %v, want %v", line, got, want)
		}
	}
}

func TestLimits(t *testing.T) {
	tests := map[string]string{
		"cat " + strings.Repeat("{a,b}", 40):           "brace expansion",
		"touch {1..99999999}":                          "brace expansion",
		"echo " + strings.Repeat("{a,b,c,d,e} ", 2100): "words after brace expansion",
		nestedShells(10):                               "nested more than",
		"echo " + nestedSubst(12):                      "nested more than",
		strings.Repeat("x;", 1200):                     "more than 1000 commands",
		strings.Repeat("a=1;", 5100):                   "more than 5000 parts",
		"f() { f; }; f":                                "nested more than",
		"x" + strings.Repeat(" ", maxLineBytes):        "longer than",
	}
	for line, want := range tests {
		an := Analyze(line, Options{})
		if an.Understood() || !strings.Contains(fmt.Sprint(an.Notes), want) {
			t.Errorf("%.60q…: notes %.200q, want one saying %q", line, an.Notes, want)
		}
	}
}

func nestedShells(n int) string {
	s := "x"
	for range n {
		s = "sh -c " + shellQuote(s)
	}
	return s
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func nestedSubst(n int) string {
	s := "x"
	for range n {
		s = "$(echo " + s + ")"
	}
	return s
}
