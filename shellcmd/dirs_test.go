package shellcmd

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// dirsOf maps each command's source to the directories it may run in.
func dirsOf(an *Analysis) []string {
	var out []string
	for _, c := range an.Commands {
		out = append(out, fmt.Sprintf("%s %q", c.Source(), c.Dirs))
	}
	return out
}

// TestDirs checks where commands may run after cd, pushd and popd.
func TestDirs(t *testing.T) {
	tests := []struct {
		line string
		want []string
		cds  []string
	}{
		{
			line: "cd a && cat x; cd /abs; cat y",
			want: []string{`cd a ["/w"]`, `cat x ["/w" "/w/a"]`, `cd /abs ["/w" "/w/a"]`, `cat y ["/w" "/w/a" "/abs"]`},
			cds:  []string{"/w/a", "/abs", "/abs"},
		},
		{line: "cd; ls", want: []string{`cd ["/w"]`, `ls ["/w" "/h"]`}, cds: []string{"/h"}},
		{line: "cd ~/p && ls", want: []string{`cd ~/p ["/w"]`, `ls ["/w" "/h/p"]`}, cds: []string{"/h/p"}},
		{line: "cd -P -- ../x; ls", want: []string{`cd -P -- ../x ["/w"]`, `ls ["/w" "/x"]`}, cds: []string{"/x"}},
		{line: `cd "$d"; ls`, want: []string{`cd "$d" ["/w"]`, `ls ["/w" ""]`}, cds: []string{""}},
		{line: "cd -; ls", want: []string{`cd - ["/w"]`, `ls ["/w" ""]`}, cds: []string{""}},
		{line: "pushd a; popd; ls", want: []string{`pushd a ["/w"]`, `popd ["/w" "/w/a"]`, `ls ["/w" "/w/a" ""]`}, cds: []string{"/w/a", ""}},
		{line: "cd s*; ls", want: []string{`cd s* ["/w"]`, `ls ["/w" ""]`}, cds: []string{"/w/s*", ""}},
		{line: "CDPATH=/x cd a; ls", want: []string{`CDPATH=/x cd a ["/w"]`, `ls ["/w" "/w/a" ""]`}, cds: []string{"/w/a", ""}},
		{line: "bash -c 'cd a'; ls", want: []string{`cd a ["/w"]`, `ls ["/w" "/w/a"]`}, cds: []string{"/w/a"}},
		{line: "(cd a); ls", want: []string{`cd a ["/w"]`, `ls ["/w" "/w/a"]`}, cds: []string{"/w/a"}},
		{
			// A function runs where it is called.
			line: "f() { touch z; }; cd /m; f",
			want: []string{`touch z ["/w"]`, `cd /m ["/w"]`, `f ["/w" "/m"]`, `touch z ["/w" "/m"]`},
			cds:  []string{"/m"},
		},
		{
			// The second pass starts where the first ended.
			line: "for d in a b; do touch x; cd /m; done; ls",
			want: []string{`touch x ["/w" "/m"]`, `cd /m ["/w" "/m"]`, `ls ["/w" "/m"]`},
			cds:  []string{"/m"},
		},
		{
			// A relative cd in a loop keeps going: after two passes it is unknown.
			line: "while x; do cd a; done; ls",
			want: []string{`x ["/w" "/w/a" ""]`, `cd a ["/w" "/w/a" ""]`, `ls ["/w" "/w/a" "/w/a/a" ""]`},
			cds:  []string{"/w/a", "/w/a/a", ""},
		},
		{line: "while x; do y; done", want: []string{`x ["/w"]`, `y ["/w"]`}},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			an := Analyze(tt.line, Options{Dir: "/w", Home: "/h"})
			if diff := cmp.Diff(tt.want, dirsOf(an)); diff != "" {
				t.Errorf("dirs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.cds, an.Cds); diff != "" {
				t.Errorf("cds (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDirsStartUnknown(t *testing.T) {
	an := Analyze("ls; cd /a; cd b; ls", Options{})
	want := []string{`ls [""]`, `cd /a [""]`, `cd b ["" "/a"]`, `ls ["" "/a" "/a/b"]`}
	if diff := cmp.Diff(want, dirsOf(an)); diff != "" {
		t.Errorf("dirs (-want +got):\n%s", diff)
	}
}

// TestDirsBounded checks that many cds to different places do not
// multiply the directories tracked: past the limit one is unknown.
func TestDirsBounded(t *testing.T) {
	var parts []string
	for i := range 40 {
		parts = append(parts, fmt.Sprintf("cd d%d", i))
	}
	an := Analyze(strings.Join(parts, "; ")+"; ls", Options{Dir: "/w"})
	last := an.Commands[len(an.Commands)-1]
	if len(last.Dirs) > maxCwds+1 || last.Dirs[len(last.Dirs)-1] != "" {
		t.Errorf("ls may run in %d directories %q, want at most %d ending in an unknown one", len(last.Dirs), last.Dirs, maxCwds+1)
	}
}

// TestRedirects checks the files a line reads and writes, and where it
// opens them.
func TestRedirects(t *testing.T) {
	tests := []struct {
		line string
		want []string
	}{
		{"echo x > a >> b &> c <> d >| e; cat < f", []string{`w a ["/w"]`, `w b ["/w"]`, `w c ["/w"]`, `w d ["/w"]`, `w e ["/w"]`, `r f ["/w"]`}},
		{"ls 2>&1 >&2 <&0 >&- 3>&1", nil},
		{"ls >&out <&in", []string{`w out ["/w"]`, `r in ["/w"]`}},
		{`echo x > "$f" > {a,b} > ~/n`, []string{`w "$f" ["/w"]`, `w {a,b} ["/w"]`, `w /h/n ["/w"]`}},
		{"cat <<EOF\n$x\nEOF\ncat <<< word", nil},
		// Opened before the command runs: cd x > f writes ./f.
		{"cd x > f; echo > g", []string{`w f ["/w"]`, `w g ["/w" "/w/x"]`}},
		{"{ cd x; echo; } > f", []string{`w f ["/w"]`}},
		{"while read l; do cd x; done < f", []string{`r f ["/w"]`}},
		{"echo > *.log", []string{`w *.log ["/w"]`}},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			an := Analyze(tt.line, Options{Dir: "/w", Home: "/h"})
			var got []string
			for _, r := range an.Redirects {
				got = append(got, fmt.Sprintf("%s %s %q", map[bool]string{true: "w", false: "r"}[r.Write], r.Target, r.Dirs))
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("redirects (-want +got):\n%s", diff)
			}
		})
	}
	an := Analyze("echo > *.log", Options{Dir: "/w"})
	if !an.Redirects[0].Target.Glob {
		t.Error("a redirect to a pattern is not marked Glob")
	}
}

// TestAssigns checks the variables a line sets and how.
func TestAssigns(t *testing.T) {
	tests := []struct {
		line string
		want []string
	}{
		{"FOO=1 BAR=$x make", []string{`FOO=["1"] prefix`, `BAR=["$x"] prefix`}},
		{"x=1; y=(a b); z={a,b}", []string{`x=["1"]`, `y=[]`, `z=["{a,b}"]`}},
		{"x=~/bin", []string{`x=["/h/bin"]`}},
		{"export P=/x Q; local l=2; declare -x D=3", []string{`P=["/x"] export`, `Q=[] export`, `l=["2"] local`, `D=["3"] declare`}},
		{"env -u HOME A=1 make", []string{`A=["1"] env prefix`}},
		{"sudo -E B=2 make", []string{`B=["2"] sudo prefix`}},
		{"read -r a b; mapfile -t arr", []string{`a=["$…"] read`, `b=["$…"] read`, `arr=["$…"] mapfile`}},
		{"printf -v out %s x", []string{`out=["$…"] printf`}},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			an := Analyze(tt.line, Options{Dir: "/w", Home: "/h"})
			var got []string
			for _, as := range an.Assigns {
				vals := []string{}
				for _, v := range as.Values {
					vals = append(vals, v.String())
				}
				s := fmt.Sprintf("%s=%q", as.Name, vals)
				if as.Builtin != "" {
					s += " " + as.Builtin
				}
				if as.Prefix {
					s += " prefix"
				}
				got = append(got, s)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("assigns (-want +got):\n%s", diff)
			}
		})
	}
	an := Analyze("FOO=1 sh -c 'make; make'", Options{})
	for _, c := range an.Commands {
		if len(c.Assigns) != 1 || c.Assigns[0].Name != "FOO" {
			t.Errorf("%s: assigns %v, want FOO from the outer command", c.Source(), c.Assigns)
		}
	}
	if an := Analyze("printf -v $n x", Options{}); len(an.Notes) != 1 || an.Notes[0].Kind != Hidden {
		t.Errorf("printf -v with a dynamic name: notes %q, want one hidden", an.Notes)
	}
}

// TestCommandNotes checks that notes attach to the commands they concern.
func TestCommandNotes(t *testing.T) {
	an := Analyze("cd $x; ls; timeout --frob 5 rm y; bash -c 'eval z'", Options{Dir: "/w"})
	var got []string
	for _, c := range an.Commands {
		got = append(got, fmt.Sprintf("%s %d", wordsText(c.Program().Words), len(c.Notes)))
	}
	want := []string{"cd $x 1", "ls 0", "rm y 1", "z 1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestFunctionCall(t *testing.T) {
	an := Analyze("g() { ls; }; g a; sudo g", Options{})
	var got []string
	for _, c := range an.Commands {
		got = append(got, fmt.Sprintf("%s %v", wordsText(c.Program().Words), c.Function))
	}
	want := []string{"ls false", "g a true", "ls false", "g false"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestScriptArgs checks that, when asked, scripts given to a shell among
// the arguments of an unknown program are read too.
func TestScriptArgs(t *testing.T) {
	tests := []struct {
		line      string
		off, on   []string
		onUnknown bool
	}{
		{line: "flock /l sh -c 'rm x; cd /m'; ls", off: []string{"flock /l sh -c rm x; cd /m", "ls"}, on: []string{"rm x", "cd /m", "ls"}},
		{line: "ssh h su -c 'rm x'", off: []string{"ssh h su -c rm x"}, on: []string{"rm x"}},
		{line: "parallel eval 'rm x'", off: []string{"parallel eval rm x"}, on: []string{"rm x"}},
		{line: `docker exec c sh -c "$S"`, off: []string{`docker exec c sh -c "$S"`}, on: []string{`sh -c "$S"`}, onUnknown: true},
		{line: "echo sh x.sh", off: []string{"echo sh x.sh"}, on: []string{"echo sh x.sh"}},
		{line: "timeout 5 nix-shell -p x bash -c 'make'", off: []string{"nix-shell -p x bash -c make"}, on: []string{"make"}},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			off := Analyze(tt.line, Options{Dir: "/w"})
			on := Analyze(tt.line, Options{Dir: "/w", ScriptArgs: true})
			if diff := cmp.Diff(tt.off, programs(off)); diff != "" {
				t.Errorf("without ScriptArgs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.on, programs(on)); diff != "" {
				t.Errorf("with ScriptArgs (-want +got):\n%s", diff)
			}
			if !off.Understood() || on.Understood() == tt.onUnknown {
				t.Errorf("notes without %q, with %q", off.Notes, on.Notes)
			}
		})
	}
	on := Analyze("flock /l sh -c 'cd /m'; ls", Options{Dir: "/w", ScriptArgs: true})
	if d := on.Commands[len(on.Commands)-1].Dirs; !cmp.Equal(d, []string{"/w", "/m"}) {
		t.Errorf("a cd in a script argument is not followed: ls in %q", d)
	}
}
