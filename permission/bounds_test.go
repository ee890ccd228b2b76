package permission

import "testing"

// TestModesSkipPromptsNotBounds is issue 36's escape 8 for the file tools:
// in bypassPermissions, Write and Edit wrote anywhere — outside the
// project, into .git/hooks and .cohort/settings.json. Now a write outside
// the working directories or on a protected path asks in every mode
// (print mode refuses it), and only an allow rule that names the path
// lets it through.
func TestModesSkipPromptsNotBounds(t *testing.T) {
	f := newFixture(t)
	write := func(p string) Request { return Request{Tool: "Write", Input: input("file_path", p, "content", "x")} }
	bounded := []Request{
		write(f.path("outside/new")), edit(f.path("outside/data")), write(f.home + "/.bashrc"),
		write(f.path("proj/.git/hooks/pre-commit")), write(f.path("proj/.git/config")),
		write(f.path("proj/.cohort/settings.json")), write(f.path("proj/.claude/agents/x.md")),
		write(f.path("proj/.mcp.json")), write(f.cohortHome + "/settings.json"),
	}
	for _, mode := range []Mode{ModeDefault, ModeAcceptEdits, ModeBypassPermissions} {
		c := f.checker(mode)
		for _, req := range bounded {
			if d := f.decide(c, req); d.Behavior != Ask {
				t.Errorf("%s mode: %s: %s (%s), want ask", mode, req.Input, d.Behavior, d.Reason)
			}
		}
		if d := f.decide(c, write(f.path("proj/src/new.go"))); mode != ModeDefault && d.Behavior != Allow {
			t.Errorf("%s mode: a write inside the project: %s (%s)", mode, d.Behavior, d.Reason)
		}
	}
	// A rule that names the path decides; one for the whole tool does not.
	named := f.checkerWith(ModeDefault, []string{"Write(./.claude/agents/x.md)"}, nil, nil)
	expect(t, named, write(f.path("proj/.claude/agents/x.md")), Allow)
	for _, allow := range [][]string{{"Write"}, {"Write(**)"}, {"Edit"}} {
		c := f.checkerWith(ModeBypassPermissions, allow, nil, nil)
		expect(t, c, write(f.path("proj/.claude/agents/x.md")), Ask)
		expect(t, c, write(f.path("proj/.git/hooks/pre-commit")), Ask)
	}
	// A hook script's directory is protected with it: a helper it sources
	// is as good as the script.
	c, err := New(Config{Env: f.env(), Mode: ModeBypassPermissions, Protected: []string{f.path("proj/scripts/hook.sh")}})
	if err != nil {
		t.Fatal(err)
	}
	expect(t, c, write(f.path("proj/scripts/lib.sh")), Ask)
	expect(t, c, write(f.path("proj/scripts/hook.sh")), Ask)
}
