package mcp

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/cohort-dev/cohort/internal/proc"
)

// TestSandboxOptOutHonouredOnlyFromTrustedFiles: "sandbox": false lets a
// stdio server run outside the sandbox only from user, local and project
// files; from --mcp-config, an agent definition or a host it is reported
// and the server stays confined; on an http server it is ignored.
func TestSandboxOptOutHonouredOnlyFromTrustedFiles(t *testing.T) {
	def := map[string]any{"command": "srv", "sandbox": false}
	for _, tc := range []struct {
		scope      string
		unconfined bool
		notice     string
	}{
		{ScopeUser, true, "runs outside the sandbox"},
		{ScopeLocal, true, "runs outside the sandbox"},
		{ScopeProject, true, "runs outside the sandbox"},
		{ScopeCLI, false, "this server comes from --mcp-config"},
		{ScopeAgent, false, "this server comes from an agent definition and runs in the sandbox"},
		{ScopeDynamic, false, "this server comes from the program hosting the session"},
	} {
		spec, err := Decode("s", def, tc.scope, "f:1", nil)
		if err != nil {
			t.Fatal(err)
		}
		if spec.Unconfined() != tc.unconfined {
			t.Errorf("%s: Unconfined = %v; want %v", tc.scope, spec.Unconfined(), tc.unconfined)
		}
		if n := spec.SandboxNotice(true); !strings.Contains(n, tc.notice) || !strings.Contains(n, "f:1") {
			t.Errorf("%s: notice %q; want it to name f:1 and say %q", tc.scope, n, tc.notice)
		}
	}
	// A project file obeyed only as a person approved its content (it lies
	// where agents' commands write): the program it names may be an
	// agent's, so the opt-out is not honoured.
	approved, _ := Decode("s", def, ScopeProject, "f:1", nil)
	approved.Approved = true
	if approved.Unconfined() || !strings.Contains(approved.SandboxNotice(true), "lies where agents' commands can write") {
		t.Errorf("an approved file's server: unconfined %v, notice %q", approved.Unconfined(), approved.SandboxNotice(true))
	}
	on, _ := Decode("s", map[string]any{"command": "srv", "sandbox": true}, ScopeUser, "f:1", nil)
	plain, _ := Decode("s", map[string]any{"command": "srv"}, ScopeUser, "f:1", nil)
	web, _ := Decode("s", map[string]any{"url": "http://x", "sandbox": false}, ScopeUser, "f:1", nil)
	if on.Unconfined() || plain.Unconfined() || web.Unconfined() || on.SandboxNotice(true) != "" || plain.SandboxNotice(true) != "" {
		t.Errorf("sandbox true, absent or http: unconfined %v %v %v, notices %q %q", on.Unconfined(), plain.Unconfined(), web.Unconfined(), on.SandboxNotice(true), plain.SandboxNotice(true))
	}
	if n := web.SandboxNotice(true); !strings.Contains(n, "stdio servers only") {
		t.Errorf("http notice %q", n)
	}
}

// TestFingerprintCoversSandboxOptOut: adding "sandbox": false to an
// approved project server changes what was approved (it asks again);
// a definition without the key hashes as before the key existed, so
// approvals recorded then hold.
func TestFingerprintCoversSandboxOptOut(t *testing.T) {
	parse := func(doc string) Spec {
		specs, errs := Parse(".mcp.json", ScopeProject, []byte(doc), nil)
		if len(errs) > 0 || len(specs) != 1 {
			t.Fatalf("%s: %v", doc, errs)
		}
		return specs[0]
	}
	plain := parse(`{"mcpServers": {"s": {"command": "python3", "args": ["-m", "tools.srv"]}}}`)
	off := parse(`{"mcpServers": {"s": {"command": "python3", "args": ["-m", "tools.srv"], "sandbox": false}}}`)
	on := parse(`{"mcpServers": {"s": {"command": "python3", "args": ["-m", "tools.srv"], "sandbox": true}}}`)
	// The hash approvals recorded before the key existed hold for this
	// definition (the fields type, command, args, env, url, headers).
	const before = "sha256:45ba2ca8714f72cef01d756e3a0d26588c279d9a86e8a1b3528981b2aaaf2312"
	if plain.Fingerprint == off.Fingerprint || on.Fingerprint != plain.Fingerprint {
		t.Errorf("fingerprints plain %s, off %s, on %s: want off to differ, on to equal plain", plain.Fingerprint, off.Fingerprint, on.Fingerprint)
	}
	if plain.Fingerprint != before {
		t.Errorf("plain fingerprint %s; want %s, as before the sandbox key", plain.Fingerprint, before)
	}
	a := approval{enabled: map[string]bool{}, disabled: map[string]bool{}, approved: map[string]string{"s": plain.Fingerprint}}
	if disabled, why := a.check(off); !disabled || !strings.Contains(why, "definition changed") {
		t.Errorf("opt-out added after approval: disabled %v (%s); want it asked again", disabled, why)
	}
}

// TestLaunchStartsEveryProcess: Options.Launch is asked for the server's
// first process and for its restart, with the server's definition, its
// directory and environment; an error from it fails the server, which
// never starts outside the sandbox instead.
func TestLaunchStartsEveryProcess(t *testing.T) {
	var mu sync.Mutex
	var calls []string
	launch := func(_ context.Context, s Spec, dir string, env []string) (proc.Launcher, []string, error) {
		mu.Lock()
		defer mu.Unlock()
		calls = append(calls, s.Name+" in "+dir)
		return nil, []string{"COHORT_TEST_LAUNCHED=1"}, nil
	}
	dir := t.TempDir()
	s, _ := start(t, stdioSpec(), Options{Launch: launch, Dir: dir})
	call(t, s, "mcp__test__crash", `{}`)
	if res := call(t, s, "mcp__test__echo", `{"text":"x"}`); res.IsError {
		t.Fatalf("after the restart: %+v", res)
	}
	mu.Lock()
	got := strings.Join(calls, "; ")
	mu.Unlock()
	if want := "test in " + dir + "; test in " + dir; got != want {
		t.Errorf("Launch calls %q; want %q (start and restart)", got, want)
	}

	refuse := func(context.Context, Spec, string, []string) (proc.Launcher, []string, error) {
		return nil, nil, errors.New("policy failed")
	}
	bad, _ := start(t, stdioSpec(), Options{Launch: refuse})
	if st := bad.Status(); st.State != StateFailed || !strings.Contains(st.Error, "in the sandbox: policy failed; it is not started outside it") {
		t.Errorf("refused launch: %+v", st)
	}
}
