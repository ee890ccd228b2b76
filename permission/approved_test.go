package permission

import (
	"fmt"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/settings"
)

// A settings file obeyed only by a person's approval of its content lies
// where agents write: its additionalDirectories and its bypassPermissions
// mode are reported and not applied, and its allow rules skip prompts
// only inside the working directories the person's own sources define,
// never on a protected path, and never count as a person's word on a path
// (Rule.ByApproval). The same entries in the person's own file apply.
// attack12's o12-approved-adddir and o12-approved-allowout.
func TestApprovedFileCannotWidenWrites(t *testing.T) {
	f := newFixture(t)
	f.mkdir("proj/sub/.cohort", "proj/tools")
	f.write("proj/tools/hook.sh", "#!/bin/sh\n")
	out := f.path("outside")
	body := fmt.Sprintf(`{"permissions": {"additionalDirectories": [%q], "defaultMode": "bypassPermissions",
 "allow": ["Write(//%s/**)", "Edit(~/**)", "Edit(/src/**)", "Edit(/.cohort/**)", "Edit(/tools/hook.sh)", "Read(//%s/**)"]}}`,
		out, strings.TrimPrefix(out, "/"), strings.TrimPrefix(out, "/"))
	load := func(approved bool) *Checker {
		s := &settings.Settings{}
		src := s.Add(settings.ScopeProject, f.path("proj/sub/.cohort/settings.json"), f.cwd, []byte(body))
		src.Approved = approved
		c, err := New(Config{Env: f.env(), Settings: s, Protected: []string{f.path("proj/tools/hook.sh")}})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	write := func(p string) Request { return Request{Tool: "Write", Input: input("file_path", p, "content", "x")} }

	c := load(true)
	if c.Mode() != ModeDefault {
		t.Errorf("mode %s: an approved file's bypassPermissions must not apply", c.Mode())
	}
	for _, d := range c.WorkingDirs() {
		if d == out {
			t.Errorf("working directories %q hold the approved file's %s", c.WorkingDirs(), out)
		}
	}
	for _, req := range []Request{write(out + "/x"), edit(f.home + "/.bashrc"), read(out + "/data"),
		edit(f.path("proj/.cohort/settings.json")), edit(f.path("proj/tools/hook.sh"))} {
		if d := f.decide(c, req); d.Behavior == Allow {
			t.Errorf("%s %s allowed (%s) by an approved file's rule: outside the person's working directories or protected", req.Tool, req.Input, d.Reason)
		}
	}
	d := f.decide(c, edit(f.path("proj/src/main.go")))
	if d.Behavior != Allow || d.Rule == nil || !d.Rule.ByApproval {
		t.Errorf("an approved file's rule inside the working directories: %s (%s), rule %+v; want allowed by it, marked ByApproval", d.Behavior, d.Reason, d.Rule)
	}
	probs := fmt.Sprint(c.Problems())
	for _, want := range []string{`permissions.additionalDirectories "` + out + `" is not applied`, `permissions.defaultMode "bypassPermissions" is not applied`,
		`permissions.allow "Write(//` + strings.TrimPrefix(out, "/") + `/**)" applies only inside the working directories`, `permissions.allow "Edit(~/**)" applies only`} {
		if !strings.Contains(probs, want) {
			t.Errorf("problems lack %q:\n%s", want, probs)
		}
	}
	if strings.Contains(probs, "Edit(/src/**)") {
		t.Errorf("a rule inside its project was reported:\n%s", probs)
	}

	// The same file as the person's own: every entry applies.
	own := load(false)
	if own.Mode() != ModeBypassPermissions {
		t.Errorf("the person's bypassPermissions: mode %s", own.Mode())
	}
	if d := f.decide(own, write(out+"/x")); d.Behavior != Allow || d.Rule == nil || d.Rule.ByApproval {
		t.Errorf("the person's own Write(//out/**): %s (%s); want allowed by a person's rule", d.Behavior, d.Reason)
	}
	if len(own.Problems()) != 0 {
		t.Errorf("the person's own file reported: %v", own.Problems())
	}
}

// A hook script at the top of a working directory protects itself, not
// the whole directory (as the sandbox does); one in a folder of its own
// protects the folder.
func TestHookScriptAtTheTopProtectsItselfOnly(t *testing.T) {
	f := newFixture(t)
	f.mkdir("proj/hooks")
	top, inDir := f.path("proj/check.sh"), f.path("proj/hooks/lint.sh")
	f.write("proj/check.sh", "#!/bin/sh\n")
	f.write("proj/hooks/lint.sh", "#!/bin/sh\n")
	c, err := New(Config{Env: f.env(), Mode: ModeAcceptEdits, Protected: []string{top, inDir}})
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]Behavior{
		f.path("proj/src/main.go"): Allow, f.path("proj/README.md"): Allow,
		top: Ask, inDir: Ask, f.path("proj/hooks/lib.sh"): Ask,
	} {
		if d := f.decide(c, edit(path)); d.Behavior != want {
			t.Errorf("Edit %s: %s (%s), want %s", path, d.Behavior, d.Reason, want)
		}
	}
	if c.Protected(f.path("proj/src/main.go")) || !c.Protected(top) {
		t.Errorf("Protected: main.go %v, the script %v; want false, true", c.Protected(f.path("proj/src/main.go")), c.Protected(top))
	}
}
