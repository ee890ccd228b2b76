package permission

import (
	"strings"
	"testing"
)

// Issue 15, findings 2 and 6: the read-only table is per-command option
// allow-lists. An option not listed makes a line not read-only; an option
// that reads a file names a path the read rules see. These options write,
// run programs, or read files (or lists of files) past the read rules, and
// each must be refused.
var refusedOptions = map[string][]string{
	"date":      {"-s 2020-01-01", "--set=x", "-f ../../etc/passwd", "--file=/etc/passwd", "-r /etc/shadow"},
	"sort":      {"--files0-from=-", "-o out", "--output=out", "--compress-program=sh", "-T /tmp", "--random-source=/etc/shadow"},
	"file":      {"-C -m m", "-f list", "--files-from=list", "-p x"},
	"rg":        {"--pre=sh x", "--pre sh x", "--hostname-bin=sh x", "-z x", "--search-zip x", "--pre-glob=* x"},
	"tree":      {"-R -H . .", "-o out", "--fromfile list"},
	"wc":        {"--files0-from=list", "--files0-from list"},
	"du":        {"--files0-from=list", "-X /etc/shadow"},
	"sha256sum": {"-c sums", "--check sums"},
	"md5sum":    {"-c sums"},
	"git":       {"diff --output=x", "log --output=x", "diff --ext-diff", "show --textconv HEAD", "log --show-signature", "-c core.pager=sh log", "cat-file --textconv HEAD:x", "cat-file --filters HEAD:x", "grep -O x", "branch -D x", "tag -d x", "diff --no-index /etc/shadow x"},
	"find":      {". -delete", ". -exec rm {} ;", ". -fprint out", ". -files0-from list", ". -newer /etc/shadow"},
	"xxd":       {"-r in out", "a b"},
	"uniq":      {"a b"},
	"jq":        {"-n 'import \"x\" as y; .'", "--rawfile a /etc/shadow -n .", "-f /etc/shadow", "-L /etc ."},
	"diff":      {"-l a b", "--from-file=/etc/shadow a", "-X /etc/shadow a b"},
	"grep":      {"-f /etc/shadow x", "--file=/etc/shadow x", "--exclude-from=/etc/shadow x ."},
	"hostname":  {"-F file", "newname"},
	"tail":      {"--frobnicate x"},
	"head":      {"--frobnicate x"},
	"ls":        {"--frobnicate"},
	"cat":       {"--frobnicate x"},
}

func TestReadOnlyRefusesOptions(t *testing.T) {
	f := newFixture(t)
	c := f.checkerWith(ModeDefault, nil, nil, nil)
	for cmd, opts := range refusedOptions {
		for _, o := range opts {
			line := cmd + " " + o
			if IsReadOnlyCommand(line) {
				if d := c.Check(t.Context(), bash(line)); d.Behavior == Allow {
					t.Errorf("%q runs without a prompt (%s); the option must be refused or its path checked", line, d.Reason)
				}
			}
		}
	}
}

// Options that read a file name a path the read rules and the working
// directories apply to.
func TestReadOnlyOptionPathsChecked(t *testing.T) {
	f := newFixture(t)
	f.write("proj/secrets/key", "s3cret\n")
	f.write("proj/dates", "2020-01-01\n")
	c := f.checkerWith(ModeDefault, nil, []string{"Read(./secrets/**)"}, nil)
	for _, line := range []string{"date -f secrets/key", "date --file=secrets/key", "grep -f secrets/key x", "date -r secrets/key", "jq --slurpfile a secrets/key -n ."} {
		expect(t, c, bash(line), Deny)
	}
	expect(t, c, bash("date -f dates"), Allow)
	if d := c.Check(t.Context(), bash("date -f /etc/passwd")); d.Behavior == Allow {
		t.Errorf("date -f /etc/passwd reads outside the working directories without a prompt")
	}
}

// Common read-only uses keep working.
func TestReadOnlyAllowsCommonOptions(t *testing.T) {
	for _, line := range []string{
		"ls -la --color=auto src", "ls -1 --sort=time", "cat -n a.txt", "head -n 5 a", "head -5 a", "tail -f -n 20 log", "tail +3 a",
		"grep -rn --include='*.go' -e foo .", "grep -C3 foo a", "grep -5 foo a", "wc -l a b", "sort -u -k2,2 -t: a", "sort -rn a",
		"uniq -c a", "cut -d: -f1 a", "du -sh .", "df -h", "stat -c %s a", "file -b a", "find . -name '*.go' -type f -maxdepth 2",
		`find . \( -name a -o -name b \) -print0`, "rg -n --hidden -g '*.go' foo", "tree -L 2 -a", "jq -r .name a.json", "jq --arg x 1 -n '$x'",
		"date +%s", "date -u -d yesterday +%F", "git log --oneline -n 5", "git log -3 --stat", "git diff --stat HEAD~1",
		"git show --name-only HEAD", "git status -sb", "git branch -a", "git rev-parse --show-toplevel", "git -P log -1 --format=%H",
		"git blame -L 1,5 a", "git ls-files -z", "xxd -l 16 a", "od -An -tx1 a", "sha256sum a", "diff -u a b", "realpath -m x",
		"basename -s .go a.go", "seq -w 1 10", "tr -d x", "echo -n hi", "printf '%s\\n' x", "env", "printenv HOME", "uname -a", "id -u",
	} {
		if !IsReadOnlyCommand(line) {
			t.Errorf("IsReadOnlyCommand(%q) = false, want true", line)
		}
	}
}

func TestReadOnlyTableHasAllowLists(t *testing.T) {
	check := func(name string, s *roSpec) {
		if s.opts == nil && !s.anyOpts {
			t.Errorf("%s has no option allow-list", name)
		}
		for o := range s.opts {
			if !strings.HasPrefix(o, "-") && !s.findStyle {
				t.Errorf("%s: option %q does not start with -", name, o)
			}
		}
	}
	for name, spec := range readOnlyCommands() {
		if spec.sub == nil {
			check(name, spec)
		}
		for sub, s := range spec.sub {
			check(name+" "+sub, s)
		}
	}
}
