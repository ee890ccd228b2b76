package permission

import "testing"

// Issue 15, finding 1: commands hidden in the values of variables that
// Bash evaluates as arithmetic or uses indirectly. Each of these lines ran
// touch (or rm) with no prompt: none is read-only, and past a deny rule for
// rm they ask (dontAsk: deny) even in bypassPermissions, since what they
// run cannot be seen.
var hiddenInArithmetic = []string{
	`x='a[$(touch p)]'; echo $((x))`,
	`x='a[$(touch p)]'; echo $[x]`,
	`x='a[$(touch p)]'; a=(1); echo ${a[x]}`,
	`x='a[$(touch p)]'; a[x]=1`,
	`x='a[$(touch p)]'; a=(1); printf -v y %s ${a[x]}`,
	`x='a[$(touch p)]'; y=abc; echo ${y:x}`,
	`x='a[$(touch p)]'; y=abc; echo ${y:0:x}`,
	`x='a[$(touch p)]'; echo ${!x}`,
	`for x in "a[\$(touch p)]"; do echo $((x)); done`,
	`x='a[$(touch p)]'; [[ x -eq 1 ]]`,
	`[[ -v 'a[$(touch p)]' ]]`,
	`test -v 'a[$(touch p)]'`,
	`read 'a[$(touch p)]' <<< v`,
	`printf -v 'a[$(touch p)]' %s v`,
	`declare -i n='a[$(touch p)]'`,
	`declare -n r='a[$(touch p)]'; echo $r`,
	`x='$(touch p)'; echo ${x@P}`,
	`echo $(( $(echo 'a[$(touch p)]') ))`,
}

func TestArithmeticHiddenCommandsNotReadOnly(t *testing.T) {
	for _, line := range hiddenInArithmetic {
		if IsReadOnlyCommand(line) {
			t.Errorf("IsReadOnlyCommand(%q) = true; the line runs a command hidden in a variable", line)
		}
	}
	for _, line := range []string{"echo $((1 + 2))", "echo ${a[0]} ${#b}", "a=(1 2); echo ${a[@]}"} {
		if !IsReadOnlyCommand(line) {
			t.Errorf("IsReadOnlyCommand(%q) = false; literal arithmetic only reads", line)
		}
	}
}

func TestArithmeticHiddenRmPastDenyRule(t *testing.T) {
	f := newFixture(t)
	for _, mode := range []Mode{ModeBypassPermissions, ModeDontAsk, ModeDefault} {
		c := f.checkerWith(mode, nil, denyRm, nil)
		for _, tmpl := range []string{`x='a[$(rm -f p)]'; echo $((x))`, `x='a[$(rm -f p)]'; echo ${!x}`} {
			want := Ask
			if mode == ModeDontAsk {
				want = Deny
			}
			t.Run(string(mode)+"/"+tmpl, func(t *testing.T) { expect(t, c, bash(tmpl), want) })
		}
	}
}

// dangerouslyDisableSandbox asks first, even where the command would be
// allowed; dontAsk refuses. Issue 36 (invariant 6): without
// sandbox.allowUnsandboxedCommands it asks in bypassPermissions too, and
// fails closed (no hook answers it); with false the flag is ignored; with
// true it is Claude Code's: bypassPermissions runs it.
func TestDangerouslyDisableSandboxAsks(t *testing.T) {
	f := newFixture(t)
	req := Request{Tool: "Bash", Input: []byte(`{"command": "ls", "dangerouslyDisableSandbox": true}`)}
	with := func(mode Mode, u Unsandboxed, allow, deny []string) *Checker {
		c := f.checkerWith(mode, allow, deny, nil)
		c.sh.unsandboxed = u
		return c
	}
	for _, u := range []Unsandboxed{UnsandboxedAsk, UnsandboxedAllowed} {
		expect(t, with(ModeDefault, u, nil, nil), req, Ask)
		expect(t, with(ModeAcceptEdits, u, []string{"Bash(ls:*)"}, nil), req, Ask)
		expect(t, with(ModeDontAsk, u, nil, nil), req, Deny)
		expect(t, with(ModeBypassPermissions, u, nil, []string{"Bash(ls:*)"}), req, Deny)
	}
	expect(t, with(ModeBypassPermissions, UnsandboxedAllowed, nil, nil), req, Allow)
	if d := with(ModeBypassPermissions, UnsandboxedAsk, nil, nil).Check(t.Context(), req); d.Behavior != Ask || !d.FailClosed {
		t.Errorf("bypassPermissions without allowUnsandboxedCommands: %s (fail closed %v), want a fail-closed ask", d.Behavior, d.FailClosed)
	}
	expect(t, with(ModeDefault, UnsandboxedIgnored, nil, nil), req, Allow)
	expect(t, with(ModeBypassPermissions, UnsandboxedIgnored, nil, nil), req, Allow)
	expect(t, with(ModeDefault, UnsandboxedIgnored, nil, nil), bash("touch x"), Ask)
	expect(t, f.checkerWith(ModeDefault, nil, nil, nil), bash("ls"), Allow)
}

func TestCommandsMatch(t *testing.T) {
	ex := []string{"docker:*", "make test"}
	for line, want := range map[string]bool{
		"docker ps":                     true,
		"docker ps && make test":        true,
		"docker ps && rm -rf ~":         false,
		"make test; echo $(rm x)":       false,
		"x='a[$(rm p)]'; docker $((x))": false,
		"dockerx ps":                    false,
		// attack5 (o5-excl-redirect): the shell opens a redirect's file
		// outside the sandbox with the excluded command.
		"docker ps > /home/u/.bashrc": false,
		"docker ps 2> out.txt":        false,
		"docker ps >> x; make test":   false,
		"docker ps &> .git/hooks/x":   false,
		"docker ps 1<>x":              false,
		"docker ps >| x":              false,
		"docker ps | tee x":           false,
		"docker ps > /dev/null 2>&1":  true,
		"docker ps 2>/dev/null":       true,
		"docker ps >&2":               true,
	} {
		if got := CommandsMatch(line, ex); got != want {
			t.Errorf("CommandsMatch(%q) = %v, want %v", line, got, want)
		}
	}
}

// Found by FuzzReadOnlyDifferential: the variable name attached to -v.
func TestPrintfAttachedVName(t *testing.T) {
	for _, line := range []string{`printf -v'A[x A000000]' 0`, `printf -v'a[$(touch p)]' %s x`, `wait -p'a[x]' 1`, `read -a'a[$(touch p)]' <<< v`, `printf $opt x`} {
		if IsReadOnlyCommand(line) {
			t.Errorf("IsReadOnlyCommand(%q) = true; the name attached to the option is evaluated", line)
		}
	}
}
