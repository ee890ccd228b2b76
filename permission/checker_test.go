package permission

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/settings"
	"github.com/google/go-cmp/cmp"
)

func TestOtherTools(t *testing.T) {
	f := newFixture(t)
	fetch := func(u string) Request {
		return Request{Tool: "WebFetch", Input: input("url", u, "prompt", "p"), ReadOnly: true}
	}
	agent := func(typ string) Request {
		return Request{Tool: "Agent", Input: input("description", "d", "prompt", "p", "subagent_type", typ)}
	}
	mcp := func(name string, ro bool) Request {
		return Request{Tool: name, Input: json.RawMessage(`{}`), ReadOnly: ro}
	}
	tests := []struct {
		name             string
		mode             Mode
		allow, deny, ask []string
		req              Request
		want             Behavior
	}{
		{name: "webfetch asks by default", req: fetch("https://example.com/x"), want: Ask},
		{name: "webfetch domain rule", allow: []string{"WebFetch(domain:example.com)"}, req: fetch("https://Example.com:8443/x"), want: Allow},
		{name: "webfetch domain is exact", allow: []string{"WebFetch(domain:example.com)"}, req: fetch("https://api.example.com/x"), want: Ask},
		{name: "webfetch lookalike", allow: []string{"WebFetch(domain:example.com)"}, req: fetch("https://example.com.evil.net/"), want: Ask},
		{name: "webfetch userinfo trick", allow: []string{"WebFetch(domain:example.com)"}, req: fetch("https://example.com@evil.net/"), want: Ask},
		{name: "webfetch wildcard subdomain", allow: []string{"WebFetch(domain:*.example.com)"}, req: fetch("https://a.b.example.com/"), want: Allow},
		{name: "webfetch wildcard not apex", allow: []string{"WebFetch(domain:*.example.com)"}, req: fetch("https://example.com/"), want: Ask},
		{name: "webfetch deny", deny: []string{"WebFetch(domain:evil.net)"}, mode: ModeBypassPermissions, req: fetch("http://evil.net"), want: Deny},
		{name: "webfetch bad url under deny rule", deny: []string{"WebFetch(domain:evil.net)"}, mode: ModeBypassPermissions, req: fetch("::::"), want: Deny},
		{name: "webfetch bypass", mode: ModeBypassPermissions, req: fetch("https://x.org"), want: Allow},
		{name: "agent needs no approval", req: agent("Explore"), want: Allow},
		{name: "agent in plan mode", mode: ModePlan, req: agent("Plan"), want: Allow},
		{name: "agent deny by name", deny: []string{"Agent(general-purpose)"}, req: agent(""), want: Deny},
		{name: "agent deny via Task alias", deny: []string{"Task(Explore)"}, req: agent("Explore"), want: Deny},
		{name: "agent deny other name", deny: []string{"Agent(Explore)"}, req: agent("Plan"), want: Allow},
		{name: "mcp asks even if read-only", req: mcp("mcp__github__get_issue", true), want: Ask},
		{name: "mcp server rule", allow: []string{"mcp__github"}, req: mcp("mcp__github__get_issue", false), want: Allow},
		{name: "mcp server rule other server", allow: []string{"mcp__github"}, req: mcp("mcp__githubx__get", false), want: Ask},
		{name: "mcp tool rule", allow: []string{"mcp__github__get_issue"}, req: mcp("mcp__github__get_issues", false), want: Ask},
		{name: "mcp prefix rule", allow: []string{"mcp__github__get_*"}, req: mcp("mcp__github__get_issues", false), want: Allow},
		{name: "mcp deny server", deny: []string{"mcp__fs"}, mode: ModeBypassPermissions, req: mcp("mcp__fs__write", false), want: Deny},
		{name: "mcp plan write", mode: ModePlan, req: mcp("mcp__fs__write", false), want: Deny},
		{name: "read-only tool", req: Request{Tool: "TaskList", ReadOnly: true}, want: Allow},
		{name: "other tool asks", req: Request{Tool: "Skill"}, want: Ask},
		{name: "other tool plan", mode: ModePlan, req: Request{Tool: "Skill"}, want: Deny},
		{name: "coordination tool", req: Request{Tool: "SendMessage"}, want: Allow},
		{name: "coordination tool plan", mode: ModePlan, req: Request{Tool: "SendMessage"}, want: Allow},
		{name: "task stop", req: Request{Tool: "TaskStop"}, want: Allow},
		{name: "task stop plan", mode: ModePlan, req: Request{Tool: "TaskStop"}, want: Allow},
		{name: "coordination deny rule", deny: []string{"SendMessage"}, req: Request{Tool: "SendMessage"}, want: Deny},
		{name: "other tool subject rule", allow: []string{"Skill(review)"}, req: Request{Tool: "Skill", Subject: "review"}, want: Allow},
		{name: "other tool subject mismatch", allow: []string{"Skill(review)"}, req: Request{Tool: "Skill", Subject: "deploy"}, want: Ask},
		{name: "other tool deny without subject fails closed", deny: []string{"Skill(deploy)"}, mode: ModeBypassPermissions, req: Request{Tool: "Skill"}, want: Deny},
		{name: "exit plan mode asks", mode: ModePlan, req: Request{Tool: "ExitPlanMode"}, want: Ask},
		{name: "enter plan mode", req: Request{Tool: "EnterPlanMode"}, want: Allow},
		{name: "plan mode todo", mode: ModePlan, req: Request{Tool: "TodoWrite"}, want: Ask},
		{name: "dontAsk other", mode: ModeDontAsk, req: Request{Tool: "Skill"}, want: Deny},
		{name: "bypass other", mode: ModeBypassPermissions, req: Request{Tool: "Skill"}, want: Allow},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mode := tt.mode
			if mode == "" {
				mode = ModeDefault
			}
			d := f.checkerWith(mode, tt.allow, tt.deny, tt.ask).Check(t.Context(), tt.req)
			if d.Behavior != tt.want {
				t.Fatalf("got %s (%s), want %s", d.Behavior, d.Reason, tt.want)
			}
		})
	}
}

func TestPlanModeBash(t *testing.T) {
	f := newFixture(t)
	c := f.checkerWith(ModePlan, []string{"Bash(npm test:*)"}, nil, nil)
	expect(t, c, bash("git log -3"), Allow)
	expect(t, c, bash("cat /etc/hosts"), Ask)
	d := c.Check(t.Context(), bash("npm test"))
	if d.Behavior != Deny || !strings.Contains(d.Reason, "plan mode") || !strings.Contains(d.Reason, "ExitPlanMode") {
		t.Fatalf("decision = %+v", d)
	}
}

func TestDontAskReason(t *testing.T) {
	f := newFixture(t)
	d := f.checkerWith(ModeDontAsk, nil, nil, nil).Check(t.Context(), bash("make"))
	if d.Behavior != Deny || !strings.Contains(d.Reason, "dontAsk") {
		t.Fatalf("decision = %+v", d)
	}
}

func TestBubbleMarksAsks(t *testing.T) {
	f := newFixture(t)
	c := f.checkerWith(ModeDefault, nil, nil, nil).ForChild(ModeBubble)
	if d := c.Check(t.Context(), bash("make")); d.Behavior != Ask || !d.Bubble {
		t.Fatalf("decision = %+v", d)
	}
	if d := c.Check(t.Context(), read("src/main.go")); d.Behavior != Allow || d.Bubble {
		t.Fatalf("decision = %+v", d)
	}
}

func TestForChild(t *testing.T) {
	tests := []struct {
		parent, def, want Mode
	}{
		{ModeDefault, "", ModeDefault},
		{ModeDefault, ModePlan, ModePlan},
		{ModeDefault, ModeBypassPermissions, ModeBypassPermissions},
		{ModePlan, ModeAcceptEdits, ModeAcceptEdits},
		{ModeDontAsk, "", ModeDontAsk},
		{ModeAcceptEdits, ModePlan, ModeAcceptEdits},
		{ModeBypassPermissions, ModePlan, ModeBypassPermissions},
		{ModeBypassPermissions, "", ModeBypassPermissions},
		{ModeDefault, ModeBubble, ModeBubble},
		{ModeDefault, Mode("nonsense"), ModeDefault},
	}
	f := newFixture(t)
	for _, tt := range tests {
		c := f.checkerWith(tt.parent, nil, nil, nil)
		if got := c.ForChild(tt.def).Mode(); got != tt.want {
			t.Errorf("parent %s, definition %q: child %s, want %s", tt.parent, tt.def, got, tt.want)
		}
	}
}

func TestChildSharesRules(t *testing.T) {
	f := newFixture(t)
	parent := f.checkerWith(ModeBypassPermissions, nil, denyRm, nil)
	child := parent.ForChild(ModePlan).ForChild("")
	expect(t, child, bash("rm x"), Deny)
	if err := child.AddRules(t.Context(), Deny, []string{"Bash(curl:*)"}, DestSession); err != nil {
		t.Fatal(err)
	}
	expect(t, parent, bash("curl x"), Deny)
	// Mode changes do not leak between parent and child.
	if err := child.SetMode(ModePlan); err != nil {
		t.Fatal(err)
	}
	if parent.Mode() != ModeBypassPermissions {
		t.Fatal("child's SetMode changed the parent")
	}
}

func TestBypassDisabledBySettings(t *testing.T) {
	f := newFixture(t)
	s := &settings.Settings{}
	s.Add(settings.ScopeUser, "u.json", f.home, []byte(`{"permissions":{"disableBypassPermissionsMode":"disable"}}`))
	_, err := New(Config{Env: f.env(), Settings: s, Mode: ModeBypassPermissions})
	if err == nil || !strings.Contains(err.Error(), "disableBypassPermissionsMode") {
		t.Fatalf("err = %v", err)
	}
	c, err := New(Config{Env: f.env(), Settings: s})
	if err != nil {
		t.Fatal(err)
	}
	if c.ForChild(ModeBypassPermissions).Mode() != ModeDefault {
		t.Fatal("definition escalated to bypass although it is disabled")
	}
	if err := c.SetMode(ModeBypassPermissions); err == nil {
		t.Fatal("SetMode(bypass) allowed although disabled")
	}
}

func TestModeFromSettingsAndCLI(t *testing.T) {
	f := newFixture(t)
	s := &settings.Settings{}
	s.Add(settings.ScopeUser, "u.json", f.home, []byte(`{"permissions":{"defaultMode":"acceptEdits"}}`))
	s.Add(settings.ScopeLocal, "l.json", f.cwd, []byte(`{"permissions":{"defaultMode":"plan"}}`))
	c, err := New(Config{Env: f.env(), Settings: s})
	if err != nil || c.Mode() != ModePlan {
		t.Fatalf("mode = %v, %v; want the highest source's plan", c.Mode(), err)
	}
	c, err = New(Config{Env: f.env(), Settings: s, Mode: ModeDontAsk})
	if err != nil || c.Mode() != ModeDontAsk {
		t.Fatalf("CLI mode = %v, %v", c.Mode(), err)
	}
	if _, err := New(Config{Env: f.env(), Mode: "yolo"}); err == nil || !strings.Contains(err.Error(), "valid modes") {
		t.Fatalf("bad CLI mode err = %v", err)
	}
	bad := &settings.Settings{}
	bad.Add(settings.ScopeUser, "u.json", f.home, []byte(`{"permissions":{"defaultMode":"bypassPermissions"}}`))
	bad.Add(settings.ScopeLocal, "l.json", f.cwd, []byte("{\"permissions\":\n {\"defaultMode\":\"yolo\"}}"))
	c, err = New(Config{Env: f.env(), Settings: bad})
	if err != nil || c.Mode() != ModeDefault {
		t.Fatalf("invalid higher mode must fall back to default, not to the lower bypass: %v %v", c.Mode(), err)
	}
	if p := c.Problems(); len(p) != 1 || !strings.Contains(p[0].Error(), "l.json:2:17") {
		t.Fatalf("problems = %v", p)
	}
}

// TestModesClaudeCodeFilesName: "auto" (Claude Code's classifier mode,
// named by real settings files) and the common misspelling "allowEdits"
// load as default mode with a warning naming file and line, never as a
// mode that asks less.
func TestModesClaudeCodeFilesName(t *testing.T) {
	tests := []struct{ mode, says string }{
		{"auto", `"auto" is Claude Code's classifier-approved mode, which Cohort does not have; using default`},
		{"allowEdits", `did you mean "acceptEdits"? (using default)`},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			f := newFixture(t)
			s := &settings.Settings{}
			s.Add(settings.ScopeUser, "u.json", f.home, []byte(`{"permissions":{"defaultMode":"bypassPermissions"}}`))
			s.Add(settings.ScopeProject, "p.json", f.cwd, []byte("{\"permissions\": {\n  \"defaultMode\": \""+tt.mode+"\"}}"))
			c, err := New(Config{Env: f.env(), Settings: s})
			if err != nil || c.Mode() != ModeDefault {
				t.Fatalf("mode = %v, %v; want default", c.Mode(), err)
			}
			p := c.Problems()
			if len(p) != 1 || !strings.HasPrefix(p[0].Error(), "p.json:2:18: permissions.defaultMode: ") || !strings.Contains(p[0].Error(), tt.says) {
				t.Fatalf("problems = %v", p)
			}
			expect(t, c, bash("touch x"), Ask)
		})
	}
}

// TestRuleWithoutAToolName is a rule from a real settings file whose tool
// name cannot be read (":(Skill*)" in a deny list of fifty): it is
// reported and ignored, as Claude Code ignores it, instead of denying every
// call; the file's valid rules still apply.
func TestRuleWithoutAToolName(t *testing.T) {
	f := newFixture(t)
	f.write("proj/.cohort/settings.json", `{"permissions": {
  "deny": ["Bash(rm -rf:*)",
    ":(Skill*)"]
}}`)
	c := f.checker(ModeBypassPermissions)
	p := c.Problems()
	if len(p) != 1 || !strings.Contains(p[0].Error(), "settings.json:3:5: rule \":(Skill*)\"") || !strings.Contains(p[0].Error(), "ignored") {
		t.Fatalf("problems = %v", p)
	}
	expect(t, c, bash("ls"), Allow)
	expect(t, c, read("src/main.go"), Allow)
	expect(t, c, bash("rm -rf build"), Deny)
}

func TestCLIRules(t *testing.T) {
	f := newFixture(t)
	c, err := New(Config{Env: f.env(), Allow: SplitRules("Bash(npm run test:*) Read"), Deny: SplitRules("Bash(git push:*)")})
	if err != nil {
		t.Fatal(err)
	}
	expect(t, c, bash("npm run test -- -u"), Allow)
	d := c.Check(t.Context(), bash("git push --force"))
	if d.Behavior != Deny || d.Source != "--disallowedTools" {
		t.Fatalf("decision = %+v", d)
	}
	_, err = New(Config{Env: f.env(), Allow: []string{"Bash(x"}, Deny: []string{"Edit(!y)"}})
	if err == nil || !strings.Contains(err.Error(), `--allowedTools: rule "Bash(x": missing closing parenthesis`) ||
		!strings.Contains(err.Error(), `--disallowedTools: rule "Edit(!y)"`) {
		t.Fatalf("err = %v", err)
	}
}

// TestSettingsFailClosed loads real files: a broken file, invalid rules of
// each kind, and checks that nothing is allowed because of a parse error.
func TestSettingsFailClosed(t *testing.T) {
	t.Run("invalid rules", func(t *testing.T) {
		f := newFixture(t)
		f.write("proj/.cohort/settings.json", `{"permissions": {
  "allow": ["Bash(npm:*", "Read"],
  "deny": ["Bash(rm:*)", "WebFetch(evil.net)", "(garbage"],
  "ask": ["Edit(!x)"]
}}`)
		c := f.checker(ModeBypassPermissions)
		var msgs []string
		for _, p := range c.Problems() {
			msgs = append(msgs, p.Error())
		}
		file := f.path("proj/.cohort/settings.json")
		want := []string{
			file + `:3:26: rule "WebFetch(evil.net)": WebFetch rules look like WebFetch(domain:example.com) (until it is fixed, Cohort denies every call of WebFetch)`,
			file + `:3:48: rule "(garbage": missing closing parenthesis (the rule names no tool that can be read, so it is ignored, as Claude Code ignores it)`,
			file + `:4:11: rule "Edit(!x)": negated patterns (!) are not supported; write a deny rule instead (until it is fixed, Cohort asks for every call of Edit)`,
			file + `:2:13: rule "Bash(npm:*": missing closing parenthesis (the rule is ignored)`,
		}
		if diff := cmp.Diff(want, msgs); diff != "" {
			t.Fatalf("problems (-want +got):\n%s", diff)
		}
		expect(t, c, Request{Tool: "WebFetch", Input: input("url", "https://ok.org")}, Deny)
		expect(t, c, read("src/main.go"), Allow) // "(garbage" names no tool: ignored, Read stays allowed
	})
	t.Run("broken file allows nothing", func(t *testing.T) {
		f := newFixture(t)
		f.write("proj/.cohort/settings.local.json", `{"permissions": {"deny": ["Read(./secrets/**)"],}}`)
		f.write("proj/.cohort/settings.json", `{"permissions": {"allow": ["Bash(ls:*)"], "deny": ["Bash(rm:*)"]}}`)
		s := settings.Load(f.env())
		if len(s.Problems) != 1 {
			t.Fatalf("settings problems = %v", s.Problems)
		}
		c, err := New(Config{Env: f.env(), Settings: s, Mode: ModeBypassPermissions})
		if err != nil {
			t.Fatal(err)
		}
		expect(t, c, bash("rm x"), Deny) // the good file's deny rules still apply
		d := c.Check(t.Context(), read("secrets/key"))
		if d.Behavior != Ask || !strings.Contains(d.Reason, "settings.local.json") {
			t.Fatalf("decision = %+v", d)
		}
		expect(t, c, bash("ls"), Ask)
		expect(t, f.checker(ModeDontAsk), read("src/main.go"), Deny)
	})
	t.Run("deny list of the wrong shape", func(t *testing.T) {
		f := newFixture(t)
		f.write("proj/.cohort/settings.json", `{"permissions": {"deny": "Bash(rm:*)"}}`)
		expect(t, f.checker(ModeBypassPermissions), bash("rm x"), Ask)
	})
}

func TestAdditionalDirectories(t *testing.T) {
	f := newFixture(t)
	f.mkdir("shared/lib", "home/notes")
	f.write("proj/.cohort/settings.json", `{"permissions": {"additionalDirectories": ["../shared", "~/notes"]}}`)
	c, err := New(Config{Env: f.env(), Settings: settings.Load(f.env()), AdditionalDirs: []string{f.path("outside")}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{f.cwd, f.path("shared"), f.path("home/notes"), f.path("outside")}
	if diff := cmp.Diff(want, c.WorkingDirs()); diff != "" {
		t.Fatalf("dirs (-want +got):\n%s", diff)
	}
	expect(t, c, read(f.path("shared/lib/x")), Allow)
	expect(t, c, read(f.path("outside/data")), Allow)
	expect(t, c, bash("ls ../shared ~/notes"), Allow)
}

func TestAgentCwd(t *testing.T) {
	f := newFixture(t)
	wt := f.path("proj/.cohort/worktrees/a")
	f.mkdir("proj/.cohort/worktrees/a/src")
	c := f.checkerWith(ModeAcceptEdits, []string{"Edit(./docs/**)"}, []string{"Read(./secrets/**)"}, nil)
	req := edit("src/x.go")
	req.Cwd = wt
	expect(t, c, req, Allow) // the worktree is inside the working directory
	r := read(filepath.Join(f.cwd, "secrets/key"))
	r.Cwd = wt
	expect(t, c, r, Deny) // deny rules also resolve against the session's cwd
}

func TestCancelledContextDenies(t *testing.T) {
	f := newFixture(t)
	ctx, cancel := contextWithCancel(t)
	cancel()
	if d := f.checkerWith(ModeBypassPermissions, nil, nil, nil).Check(ctx, read("x")); d.Behavior != Deny {
		t.Fatalf("decision = %+v", d)
	}
}

func TestNewRejectsRelativeDirs(t *testing.T) {
	if _, err := New(Config{Env: settings.Env{Home: "h", Cwd: "c"}}); err == nil {
		t.Fatal("relative directories accepted")
	}
	var re *RuleError
	_, err := ParseRule("Bash(")
	if !errors.As(err, &re) {
		t.Fatalf("ParseRule error is %T", err)
	}
}

func TestDeniedRead(t *testing.T) {
	f := newFixture(t)
	f.symlink(f.path("proj/secrets"), "proj/alias")
	c := f.checkerWith(ModeDefault, nil, []string{"Read(./secrets/**)", "Read(*.pem)"}, nil)
	for path, want := range map[string]bool{
		"secrets/key": true, "alias/key": true, "src/main.go": false, "src/x.pem": true, f.path("outside/data"): false,
	} {
		if got := c.DeniedRead("", path); got != want {
			t.Errorf("DeniedRead(%s) = %v, want %v", path, got, want)
		}
	}
	if got := c.DeniedRead(filepath.Join(f.cwd, "src"), "../secrets/key"); !got {
		t.Error("relative to another cwd")
	}
}

func TestRelativeRequestCwdDenied(t *testing.T) {
	f := newFixture(t)
	r := read("x")
	r.Cwd = "relative/dir"
	expect(t, f.checkerWith(ModeBypassPermissions, nil, nil, nil), r, Deny)
}

func TestConcurrentUse(t *testing.T) {
	f := newFixture(t)
	c := f.checkerWith(ModeDefault, []string{"Bash(git diff:*)"}, denyRm, nil)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			child := c.ForChild("")
			for j := range 20 {
				child.Check(t.Context(), bash("git diff && rm x"))
				child.Check(t.Context(), read("src/main.go"))
				if j%5 == 0 {
					_ = c.AddRules(t.Context(), Allow, []string{"Bash(tool" + strconv.Itoa(i) + ":*)"}, DestSession)
					_ = child.SetMode(ModeAcceptEdits)
				}
			}
		})
	}
	wg.Wait()
	expect(t, c, bash("tool3 x"), Allow)
}

func BenchmarkCheckBash(b *testing.B) {
	f := newFixture(b)
	c := f.checkerWith(ModeDefault, []string{"Bash(git diff:*)", "Bash(go test:*)"}, []string{"Bash(rm:*)", "Read(./secrets/**)"}, nil)
	req := bash("cd src && go test ./... 2>&1 | grep -v ok | head -50; git diff --stat")
	for b.Loop() {
		c.Check(b.Context(), req)
	}
}

func BenchmarkCheckRead(b *testing.B) {
	f := newFixture(b)
	c := f.checkerWith(ModeDefault, nil, []string{"Read(./secrets/**)", "Read(*.pem)"}, nil)
	req := read("src/main.go")
	for b.Loop() {
		c.Check(b.Context(), req)
	}
}

func TestFailClosedMarksAsks(t *testing.T) {
	f := newFixture(t)
	c := f.checkerWith(ModeBypassPermissions, nil, denyRm, nil)
	if d := c.Check(t.Context(), bash("$CMD x")); d.Behavior != Ask || !d.FailClosed {
		t.Fatalf("opaque under deny rules: %+v", d)
	}
	if d := f.checkerWith(ModeDefault, nil, nil, nil).Check(t.Context(), bash("make")); d.Behavior != Ask || d.FailClosed {
		t.Fatalf("ordinary ask: %+v", d)
	}
	f.write("proj/.cohort/settings.json", "{")
	if d := f.checker(ModeDefault).Check(t.Context(), read("src/main.go")); d.Behavior != Ask || !d.FailClosed {
		t.Fatalf("broken settings: %+v", d)
	}
}

// TestCeilingCapsEveryLaterMode: a worker's ceiling (acceptEdits) lowers
// the present mode and every mode set afterwards — SetMode, a permission
// update's setMode, a child's definition — and a later ceiling cannot
// raise it. Plan mode, below it, is kept.
func TestCeilingCapsEveryLaterMode(t *testing.T) {
	f := newFixture(t)
	c, err := New(Config{Env: f.env(), Mode: ModeBypassPermissions})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.SetCeiling(ModeAcceptEdits); err != nil {
		t.Fatal(err)
	}
	if c.Mode() != ModeAcceptEdits {
		t.Fatalf("mode under an acceptEdits ceiling: %s", c.Mode())
	}
	if err := c.SetMode(ModeBypassPermissions); err != nil || c.Mode() != ModeAcceptEdits {
		t.Fatalf("SetMode(bypass) under the ceiling: %s (%v)", c.Mode(), err)
	}
	if err := c.Apply(context.Background(), RuleUpdate{Type: UpdateSetMode, Mode: ModeBypassPermissions, Destination: DestSession}); err != nil || c.Mode() != ModeAcceptEdits {
		t.Fatalf("a setMode update under the ceiling: %s (%v)", c.Mode(), err)
	}
	if err := c.SetMode(ModeDefault); err != nil || c.ForChild(ModeBypassPermissions).Mode() != ModeAcceptEdits {
		t.Fatalf("a child's definition under the ceiling: %s", c.ForChild(ModeBypassPermissions).Mode())
	}
	if err := c.SetCeiling(ModeBypassPermissions); err != nil {
		t.Fatal(err)
	}
	if err := c.SetMode(ModeBypassPermissions); err != nil || c.Mode() != ModeAcceptEdits {
		t.Fatalf("a second, higher ceiling raised the first: %s (%v)", c.Mode(), err)
	}
	if err := c.SetMode(ModePlan); err != nil || c.Mode() != ModePlan {
		t.Fatalf("plan mode under the ceiling: %s (%v)", c.Mode(), err)
	}
}
