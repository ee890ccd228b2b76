package worktree

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var slugCases = []struct {
	slug string
	ok   bool
}{
	{"ok/slug-1.2_3", true},
	{"agent-7", true},
	{"a", true},
	{"A.b_c-d/E", true},
	{strings.Repeat("x", 64), true},
	{strings.Repeat("x", 65), false},
	{"", false},
	{"../../x", false},
	{"a/../../b", false},
	{"..", false},
	{".", false},
	{"a/./b", false},
	{"/abs", false},
	{"a//b", false},
	{"a/", false},
	{"x.lock", false},
	{"a/b.lock/c", false},
	{"a..b", false},
	{".hidden", false},
	{"a/.b", false},
	{"-flag", false},
	{"a/-b", false},
	{"dot.", false},
	{"has space", false},
	{"semi;colon", false},
	{"back\\slash", false},
	{"tilde~1", false},
	{"caret^", false},
	{"colon:x", false},
	{"star*", false},
	{"at@{1}", false},
	{"new\nline", false},
	{"ünïcode", false},
}

func TestValidateSlug(t *testing.T) {
	t.Parallel()
	for _, tc := range slugCases {
		err := ValidateSlug(tc.slug)
		if (err == nil) != tc.ok {
			t.Errorf("ValidateSlug(%q) = %v, want ok=%v", tc.slug, err, tc.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalidSlug) {
			t.Errorf("ValidateSlug(%q) error %v does not wrap ErrInvalidSlug", tc.slug, err)
		}
	}
}

// TestValidSlugsAreValidBranches checks the accepted slugs against git's
// own rules for branch names.
func TestValidSlugsAreValidBranches(t *testing.T) {
	t.Parallel()
	env := hermeticEnv(t)
	for _, tc := range slugCases {
		if !tc.ok {
			continue
		}
		cmd := exec.CommandContext(t.Context(), "git", "check-ref-format", "--branch", BranchPrefix+tc.slug)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("git refuses branch %s%s: %v %s", BranchPrefix, tc.slug, err, out)
		}
	}
}

func FuzzValidateSlug(f *testing.F) {
	for _, tc := range slugCases {
		f.Add(tc.slug)
	}
	f.Fuzz(func(t *testing.T, slug string) {
		if ValidateSlug(slug) != nil {
			return
		}
		base := filepath.FromSlash("/repo/.cohort/worktrees")
		p := filepath.Join(base, filepath.FromSlash(slug))
		if !strings.HasPrefix(p, base+string(filepath.Separator)) {
			t.Fatalf("slug %q escapes to %s", slug, p)
		}
		if filepath.ToSlash(filepath.Clean(filepath.FromSlash(slug))) != slug {
			t.Fatalf("slug %q is not clean", slug)
		}
		if len(slug) > MaxSlugLen {
			t.Fatalf("slug %q is too long", slug)
		}
		if strings.Contains(slug, "..") || strings.HasSuffix(slug, ".lock") || strings.ContainsAny(slug, " ~^:?*[\\@") {
			t.Fatalf("slug %q breaks git's branch-name rules", slug)
		}
	})
}

func TestProjectSlug(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"/home/ana/src/cohort", "-home-ana-src-cohort"},
		{"/Users/Bob/My Project.v2", "-Users-Bob-My-Project-v2"},
		{`C:\work\repo_1`, "C--work-repo-1"},
		{"/tmp/café", "-tmp-caf-"},
		{"/tmp/🚀x", "-tmp---x"}, // one character, two UTF-16 code units
		{"", ""},
	}
	for _, tt := range tests {
		if got := ProjectSlug(tt.in); got != tt.want {
			t.Errorf("ProjectSlug(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
