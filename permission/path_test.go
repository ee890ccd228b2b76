package permission

import (
	"path/filepath"
	"testing"
)

func TestPathPatternMatch(t *testing.T) {
	tests := []struct {
		spec, base, path string
		want             bool
	}{
		{"./src/**", "/p", "/p/src/a/b.go", true},
		{"./src/**", "/p", "/p/srcx/a.go", false},
		{"src/**", "/p", "/p/src/a.go", true},
		{"src", "/p", "/p/src/a.go", true},           // a directory entry covers its contents
		{"src", "/p", "/p/lib/src/a.go", true},       // no slash: any depth
		{"src/a.go", "/p", "/p/lib/src/a.go", false}, // with a slash: anchored
		{"*.env", "/p", "/p/.env", true},             // * may be empty, as in .gitignore
		{".env", "/p", "/p/deep/dir/.env", true},
		{"*.env", "/p", "/p/deep/prod.env", true},
		{"./.env", "/p", "/p/sub/.env", false},
		{"./.env*", "/p", "/p/.env.local", true},
		{"**/*.pem", "/p", "/p/a/b/c.pem", true},
		{"**/*.pem", "/p", "/p/c.pem", true},
		{"./src/*.go", "/p", "/p/src/a/b.go", false}, // * stays in one directory
		{"./", "/p", "/p/anything", true},
		{".", "/p", "/p", true},
		{"../shared/**", "/p/app", "/p/shared/x", true},
		{"./build/", "/p", "/p/build/out.o", true}, // inside a directory
		{"./secrets/**", "/p", "/p/secrets", true}, // doublestar: ** also matches the directory itself
		{"./secrets", "/p", "/p/secrets", true},
		{"//etc/**", "/", "/etc/passwd", true},
		{"//etc", "/", "/etc/ssh/sshd_config", true},
		{"//", "/", "/anything", true},
		{"~/.ssh/**", "/home/u", "/home/u/.ssh/id_rsa", true},
		{"~", "/home/u", "/home/u/x", true},
		{"/docs/*.md", "/p", "/p/docs/a.md", true},
		{"/docs/*.md", "/p", "/p/sub/docs/a.md", false},
		{"./{a,b}/**", "/p", "/p/b/x", true},
		{"./a[b]c", "/weird[dir]", "/weird[dir]/abc", true}, // glob characters in the base are literal
		{"x", "/weird*", "/weirdly/x", false},
	}
	for _, tt := range tests {
		p, err := compilePath(tt.spec)
		if err != nil {
			t.Fatalf("%s: %v", tt.spec, err)
		}
		if got := p.matchUnder(tt.base, tt.path); got != tt.want {
			t.Errorf("%q under %s matches %s = %v, want %v", tt.spec, tt.base, tt.path, got, tt.want)
		}
	}
}

func TestPathPatternDirOnly(t *testing.T) {
	f := newFixture(t)
	f.write("proj/build", "a file, not a directory")
	f.mkdir("proj/out")
	p, _ := compilePath("./build/")
	if p.matchUnder(f.cwd, filepath.Join(f.cwd, "build")) {
		t.Error("build/ matched a regular file")
	}
	q, _ := compilePath("./out/")
	if !q.matchUnder(f.cwd, filepath.Join(f.cwd, "out")) || !q.matchUnder(f.cwd, filepath.Join(f.cwd, "out", "x")) {
		t.Error("out/ did not match the directory and its contents")
	}
}

func TestResolvePath(t *testing.T) {
	f := newFixture(t)
	f.mkdir("a/b", "target/dir")
	f.write("target/dir/file", "x")
	f.symlink(f.path("target/dir"), "a/link")   // absolute link
	f.symlink("../target", "a/rel")             // relative link
	f.symlink(f.path("a/loop2"), "a/loop1")     // a loop
	f.symlink(f.path("a/loop1"), "a/loop2")     //
	f.symlink(f.path("target/dir"), "a/b/deep") // link below a real dir
	tests := []struct {
		in, want string
		err      bool
	}{
		{in: f.path("a/link/file"), want: f.path("target/dir/file")},
		{in: f.path("a/rel/dir/file"), want: f.path("target/dir/file")},
		{in: f.base + "/a/link/../x", want: f.path("target/x")}, // ".." after a link leaves the link's target
		{in: f.base + "/a/b/../b/deep/new/file", want: f.path("target/dir/new/file")},
		{in: f.base + "/a/missing/../../x", want: f.path("x")},
		{in: f.base + "/a/./b//c", want: f.path("a/b/c")},
		{in: f.path("a/loop1/x"), err: true},
		{in: "relative", err: true},
	}
	for _, tt := range tests {
		got, err := resolvePath(tt.in)
		if (err != nil) != tt.err || (!tt.err && got != tt.want) {
			t.Errorf("resolvePath(%s) = %s, %v; want %s, err %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

// TestFileRules exercises Read/Edit rules through the checker.
func TestFileRules(t *testing.T) {
	f := newFixture(t)
	f.mkdir("proj/.cohort/agents", "proj/deep/dir")
	tests := []struct {
		name             string
		mode             Mode
		allow, deny, ask []string
		req              Request
		want             Behavior
	}{
		{name: "read inside", req: read("src/main.go"), want: Allow},
		{name: "read absolute inside", req: read(f.path("proj/src/main.go")), want: Allow},
		{name: "read outside asks", req: read(f.path("outside/data")), want: Ask},
		{name: "read outside with rule", allow: []string{"Read(//" + f.path("outside") + "/**)"}, req: read(f.path("outside/data")), want: Allow},
		{name: "read outside with home rule", allow: []string{"Read(~/notes/**)"}, req: read(f.path("home/notes/a")), want: Allow},
		{name: "edit rule allows reading", allow: []string{"Edit(//" + f.path("outside") + "/**)"}, req: read(f.path("outside/data")), want: Allow},
		{name: "read deny", deny: []string{"Read(./secrets/**)"}, req: read("secrets/key"), want: Deny},
		{name: "read deny applies to grep", deny: []string{"Read(./secrets/**)"}, req: Request{Tool: "Grep", Input: input("pattern", "x", "path", "secrets"), ReadOnly: true}, want: Deny},
		{name: "read deny applies to glob pattern", deny: []string{"Read(./secrets/**)"}, req: Request{Tool: "Glob", Input: input("pattern", "secrets/*"), ReadOnly: true}, want: Deny},
		{name: "glob pattern escaping cwd asks", req: Request{Tool: "Glob", Input: input("pattern", "../outside/*"), ReadOnly: true}, want: Ask},
		{name: "grep default path is cwd", req: Request{Tool: "Grep", Input: input("pattern", "x"), ReadOnly: true}, want: Allow},
		{name: "settings-root pattern", deny: []string{"Read(/secrets/**)"}, req: read("secrets/key"), want: Deny},
		{name: "floating deny", deny: []string{"Read(*.pem)"}, req: read("deep/dir/x.pem"), want: Deny},
		{name: "edit asks in default", req: edit("src/main.go"), want: Ask},
		{name: "edit allowed by rule", allow: []string{"Edit(./src/**)"}, req: edit("src/main.go"), want: Allow},
		{name: "edit rule covers write", allow: []string{"Edit(./src/**)"}, req: Request{Tool: "Write", Input: input("file_path", "src/new.go", "content", "x")}, want: Allow},
		{name: "write rule covers edit", deny: []string{"Write(./src/**)"}, req: edit("src/main.go"), want: Deny},
		{name: "edit deny covers notebook", deny: []string{"Edit(*.ipynb)"}, req: Request{Tool: "NotebookEdit", Input: input("notebook_path", "deep/n.ipynb")}, want: Deny},
		{name: "edit rule outside its dir", allow: []string{"Edit(./src/**)"}, req: edit("README.md"), want: Ask},
		{name: "read rule does not allow edit", allow: []string{"Read"}, req: edit("src/main.go"), want: Ask},
		{name: "acceptEdits inside", mode: ModeAcceptEdits, req: edit("src/main.go"), want: Allow},
		{name: "acceptEdits outside", mode: ModeAcceptEdits, req: edit(f.path("outside/data")), want: Ask},
		{name: "acceptEdits protected settings", mode: ModeAcceptEdits, req: edit(".cohort/settings.json"), want: Ask},
		{name: "acceptEdits protected agents", mode: ModeAcceptEdits, req: edit(".cohort/agents/x.md"), want: Ask},
		{name: "acceptEdits protected git", mode: ModeAcceptEdits, req: edit(".git/hooks/pre-commit"), want: Ask},
		{name: "acceptEdits protected claude", mode: ModeAcceptEdits, req: edit(".claude/settings.local.json"), want: Ask},
		{name: "explicit rule beats protection", mode: ModeAcceptEdits, allow: []string{"Edit(./.cohort/agents/**)"}, req: edit(".cohort/agents/x.md"), want: Allow},
		{name: "acceptEdits deny wins", mode: ModeAcceptEdits, deny: []string{"Edit(./src/**)"}, req: edit("src/main.go"), want: Deny},
		{name: "plan denies edit", mode: ModePlan, req: edit("src/main.go"), want: Deny},
		{name: "plan denies edit even with rule", mode: ModePlan, allow: []string{"Edit"}, req: edit("src/main.go"), want: Deny},
		{name: "plan allows read", mode: ModePlan, req: read("src/main.go"), want: Allow},
		// Issue 36: bypassPermissions skips prompts, not the bounds.
		{name: "bypass edits inside", mode: ModeBypassPermissions, req: edit("src/main.go"), want: Allow},
		{name: "bypass asks outside the working dirs", mode: ModeBypassPermissions, req: edit(f.path("outside/data")), want: Ask},
		{name: "bypass with a rule for the outside path", mode: ModeBypassPermissions, allow: []string{"Edit(//" + f.path("outside") + "/**)"}, req: edit(f.path("outside/data")), want: Allow},
		{name: "bypass deny wins", mode: ModeBypassPermissions, deny: []string{"Edit"}, req: edit("src/main.go"), want: Deny},
		{name: "bypass ask rule wins", mode: ModeBypassPermissions, ask: []string{"Edit(./src/**)"}, req: edit("src/main.go"), want: Ask},
		{name: "dontAsk denies instead of asking", mode: ModeDontAsk, req: edit("src/main.go"), want: Deny},
		{name: "dontAsk allows read", mode: ModeDontAsk, req: read("src/main.go"), want: Allow},
		{name: "dontAsk with allow rule", mode: ModeDontAsk, allow: []string{"Edit(./src/**)"}, req: edit("src/main.go"), want: Allow},
		{name: "missing file_path", req: Request{Tool: "Read", Input: input()}, want: Deny},
		{name: "custom tool with paths reads", req: Request{Tool: "Lint", ReadOnly: true, Paths: []string{"src"}}, want: Allow},
		{name: "custom tool with paths writes", deny: []string{"Edit(./src/**)"}, req: Request{Tool: "Fmt", Paths: []string{"src/main.go"}}, want: Deny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mode := tt.mode
			if mode == "" {
				mode = ModeDefault
			}
			c := f.checkerWith(mode, tt.allow, tt.deny, tt.ask)
			d := c.Check(t.Context(), tt.req)
			if d.Behavior != tt.want {
				t.Fatalf("got %s (%s), want %s", d.Behavior, d.Reason, tt.want)
			}
		})
	}
}
