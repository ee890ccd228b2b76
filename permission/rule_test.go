package permission

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseRule(t *testing.T) {
	tests := []struct {
		in        string
		tool      string
		spec      string
		wantErr   string
		canonical string
	}{
		{in: "Bash", tool: "Bash"},
		{in: "  Read  ", tool: "Read", canonical: "Read"},
		{in: "Bash(*)", tool: "Bash", canonical: "Bash"},
		{in: "Bash(git diff:*)", tool: "Bash", spec: "git diff:*"},
		{in: "Bash(npm run test:*)", tool: "Bash", spec: "npm run test:*"},
		{in: "Bash(ls | wc -l)", tool: "Bash", spec: "ls | wc -l"},
		{in: "Read(./src/**)", tool: "Read", spec: "./src/**"},
		{in: "Edit(//etc/**)", tool: "Edit", spec: "//etc/**"},
		{in: "Write(~/notes/)", tool: "Write", spec: "~/notes/"},
		{in: "WebFetch(domain:Example.COM)", tool: "WebFetch", spec: "domain:Example.COM"},
		{in: "WebFetch(domain:*.example.com)", tool: "WebFetch", spec: "domain:*.example.com"},
		{in: "mcp__github", tool: "mcp__github"},
		{in: "mcp__github__create_issue", tool: "mcp__github__create_issue"},
		{in: "mcp__github__get_*", tool: "mcp__github__get_*"},
		{in: "mcp__my-server__tool", tool: "mcp__my-server__tool"},
		{in: "Agent(Explore)", tool: "Agent", spec: "Explore"},
		{in: "Task(Plan)", tool: "Agent", spec: "Plan", canonical: "Agent(Plan)"},
		{in: "Skill(review)", tool: "Skill", spec: "review"},

		{in: "", wantErr: "empty rule"},
		{in: "Bash(git diff:*", wantErr: `rule "Bash(git diff:*": missing closing parenthesis`},
		{in: "Bash)", wantErr: "closing parenthesis without an opening one"},
		{in: "(ls)", wantErr: "missing tool name"},
		{in: "Bash()", wantErr: "empty parentheses; write Bash alone"},
		{in: "Ba sh", wantErr: `invalid character ' '`},
		{in: "1Bash", wantErr: "starts with a letter"},
		{in: "Bash(:*)", wantErr: "missing command before :*"},
		{in: "Bash(git:* diff)", wantErr: `":*" is only allowed at the end`},
		{in: "Bash(echo 'unterminated)", wantErr: "not a valid shell command"},
		{in: "Bash(*:*)", wantErr: `"*" alone is not a command`},
		{in: "Read(!secret)", wantErr: "negated patterns"},
		{in: "Read(~bob/x)", wantErr: "~user paths are not supported"},
		{in: "Read(src/[)", wantErr: "invalid glob pattern"},
		{in: "WebFetch(example.com)", wantErr: "WebFetch(domain:example.com)"},
		{in: "WebFetch(domain:)", wantErr: "missing domain"},
		{in: "WebFetch(domain:ex ample.com)", wantErr: "invalid character"},
		{in: "WebFetch(domain:a.*.com)", wantErr: "invalid character '*'"},
		{in: "mcp__", wantErr: "missing MCP server name"},
		{in: "mcp__github(x)", wantErr: "MCP rules take no parentheses"},
		{in: "mcp__git*", wantErr: "invalid character '*'"},
		{in: "Agent(bad name)", wantErr: "must match"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			r, err := ParseRule(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), "rule ") {
					t.Fatalf("error %q does not name the rule", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Tool != tt.tool || r.Specifier != tt.spec {
				t.Fatalf("got %q(%q), want %q(%q)", r.Tool, r.Specifier, tt.tool, tt.spec)
			}
			want := tt.canonical
			if want == "" {
				want = tt.in
			}
			if r.String() != want {
				t.Fatalf("String() = %q, want %q", r.String(), want)
			}
		})
	}
}

func TestRuleErrorNamesSource(t *testing.T) {
	err := &RuleError{Rule: "Bash(x", Source: "/p/.cohort/settings.json", Line: 3, Col: 7, Msg: "missing closing parenthesis"}
	if got, want := err.Error(), `/p/.cohort/settings.json:3:7: rule "Bash(x": missing closing parenthesis`; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestSplitRules(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Read,Edit", []string{"Read", "Edit"}},
		{"Read Edit", []string{"Read", "Edit"}},
		{"Bash(git diff:*) Read", []string{"Bash(git diff:*)", "Read"}},
		{"Bash(npm run test:*), Bash(git log:*)", []string{"Bash(npm run test:*)", "Bash(git log:*)"}},
		{" , Bash(echo a,b)  ,, WebFetch(domain:x.com)\t", []string{"Bash(echo a,b)", "WebFetch(domain:x.com)"}},
		{"Bash(echo (nested) x) Read", []string{"Bash(echo (nested) x)", "Read"}},
		{"Bash(unbalanced x, y", []string{"Bash(unbalanced x, y"}},
		{"", nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, SplitRules(tt.in)); diff != "" {
			t.Errorf("SplitRules(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestParseMode(t *testing.T) {
	for _, m := range Modes {
		got, err := ParseMode(string(m))
		if err != nil || got != m {
			t.Errorf("ParseMode(%q) = %q, %v", m, got, err)
		}
	}
	for _, bad := range []string{"", "Default", "bypass", "bubble", "auto"} {
		_, err := ParseMode(bad)
		if err == nil || !strings.Contains(err.Error(), "valid modes: default, acceptEdits, plan, dontAsk, bypassPermissions") {
			t.Errorf("ParseMode(%q) err = %v", bad, err)
		}
	}
	if !ModeBubble.Valid() || Mode("x").Valid() {
		t.Error("Valid")
	}
}

func FuzzParseRule(f *testing.F) {
	for _, s := range []string{"Bash", "Bash(git diff:*)", "Read(./src/**)", "Edit(//x/)", "WebFetch(domain:*.a.b)",
		"mcp__s__t", "Agent(x)", "Bash(ls | wc)", "Bash(echo \"$x\")", "Read(~/a/**/b)", "X(()", "Bash(a *)", "Bash('*' x)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRule(s)
		if err != nil {
			if !strings.Contains(err.Error(), "rule ") {
				t.Fatalf("error %q does not name the rule", err)
			}
			return
		}
		again, err := ParseRule(r.String())
		if err != nil {
			t.Fatalf("canonical %q of %q does not parse: %v", r.String(), s, err)
		}
		if again.String() != r.String() {
			t.Fatalf("round trip %q -> %q", r.String(), again.String())
		}
		if r.bash != nil {
			r.bash.matchWords([]string{"git", "diff", dynWord}, true)
			r.bash.matchWords([]string{"a"}, false)
		}
		if r.path != nil {
			r.path.matchUnder("/p", "/p/src/a.go")
		}
	})
}
