package worktree

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseStatus(t *testing.T) {
	t.Parallel()
	const h = " N... 100644 100644 100644 1111 2222 "
	tests := []struct {
		name string
		out  string
		want status
	}{
		{"empty", "", status{}},
		{"clean branch", "# branch.oid abc\x00# branch.head cohort/x\x00", status{head: "abc", branch: "cohort/x"}},
		{"detached, no commits", "# branch.oid (initial)\x00# branch.head (detached)\x00", status{}},
		{"kinds",
			"# branch.oid abc\x00# branch.head main\x00# branch.upstream origin/main\x00" +
				"1 .M" + h + "a.go\x001 M." + h + "with space.go\x00" +
				"u UU N... 100644 100644 100644 100644 1 2 3 conflict.go\x00" +
				"? new.txt\x00? dir/\x00! ignored.o\x00",
			status{head: "abc", branch: "main", modified: []string{"a.go", "with space.go", "conflict.go"}, untracked: []string{"new.txt", "dir/"}}},
		{"rename and copy",
			"2 R." + h + "R100 new name.go\x00old name.go\x002 C." + h + "C75 copy.go\x00orig.go\x00? x\x00",
			status{modified: []string{"new name.go", "old name.go", "copy.go"}, untracked: []string{"x"}}},
		{"newline in a name", "? new\nline\x00", status{untracked: []string{"new\nline"}}},
		{"garbage", "1 short\x00?\x00u x\x00zzz\x002\x00", status{}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, parseStatus(tt.out), cmp.AllowUnexported(status{})); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}
}

func FuzzParseStatus(f *testing.F) {
	f.Add("# branch.oid abc\x00# branch.head main\x001 .M N... 100644 100644 100644 1 2 a.go\x00? b\x00")
	f.Add("2 R. N... 100644 100644 100644 1 2 R100 n\x00o\x00")
	f.Add("2 R. N... 100644 100644 100644 1 2 R100 n")
	f.Add("\x00\x00")
	f.Fuzz(func(t *testing.T, out string) {
		st := parseStatus(out)
		if n := len(st.modified) + len(st.untracked); n > strings.Count(out, "\x00")+1 {
			t.Fatalf("%d paths from %d records", n, strings.Count(out, "\x00")+1)
		}
		for _, p := range append(st.modified, st.untracked...) {
			if p == "" {
				t.Fatal("empty path")
			}
		}
	})
}

func TestParseVersion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want version
		ok   bool
	}{
		{"git version 2.39.5\n", version{2, 39, 5}, true},
		{"git version 2.39.3 (Apple Git-146)", version{2, 39, 3}, true},
		{"git version 2.45.1.windows.1", version{2, 45, 1}, true},
		{"git version 2.46.0-rc1", version{2, 46, 0}, true},
		{"git version 2.33", version{2, 33, 0}, true},
		{"git version x.y", version{}, false},
		{"hub version 2.14.2", version{}, false},
		{"", version{}, false},
	}
	for _, tt := range tests {
		got, ok := parseVersion(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseVersion(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
	if !(version{2, 32, 9}).less(minGit) || (version{2, 33, 0}).less(minGit) || !(version{1, 99, 0}).less(minGit) {
		t.Error("version ordering is wrong")
	}
}

func TestLockReason(t *testing.T) {
	t.Parallel()
	r := lockReason{PID: 42, Session: "sess 1", Agent: "a=b", Host: "", Base: "abc123"}
	s := r.String()
	if s != "cohort pid=42 session=sess_1 agent=a_b host=- base=abc123" {
		t.Errorf("reason = %q", s)
	}
	got, ok := parseLockReason(s)
	want := lockReason{PID: 42, Session: "sess_1", Agent: "a_b", Host: "-", Base: "abc123"}
	if !ok || got != want {
		t.Errorf("parse = %+v, %v; want %+v", got, ok, want)
	}
	for _, foreign := range []string{"", "on a usb disk", "cohort", "cohort pid=x", "cohort pid=-3", "initializing"} {
		if _, ok := parseLockReason(foreign); ok {
			t.Errorf("parseLockReason(%q) claimed a lock Cohort did not take", foreign)
		}
	}
}

func TestChangesString(t *testing.T) {
	t.Parallel()
	if got := (Changes{}).String(); got != "no changes" {
		t.Errorf("empty = %q", got)
	}
	var many []string
	for i := range 12 {
		many = append(many, fmt.Sprintf("f%d", i))
	}
	got := Changes{Modified: []string{"a.go"}, Untracked: many, NewCommits: []string{"abc fix"}}.String()
	want := "modified files (1):\n  a.go\nuntracked files (12):\n  f0\n  f1\n  f2\n  f3\n  f4\n  f5\n  f6\n  f7\n  f8\n  f9\n  … and 2 more\ncommits not on the base (1):\n  abc fix"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
