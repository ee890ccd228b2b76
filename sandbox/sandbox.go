package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Profile is how far a command is trusted to write. The permission
// decision behind a Bash call picks it: ReadOnly for a command that runs
// only because the analysis judged it read-only, Writing for one a rule,
// a mode, a hook or a person approved. The zero value is ReadOnly, so a
// caller that says nothing gets the narrower profile.
type Profile uint8

const (
	// ReadOnly: every file system is read-only but the private TMPDIR and
	// the device files (/dev/null, ...), and there is no network and no
	// Unix socket: a wrong read-only verdict can neither write anything
	// nor send what it read.
	ReadOnly Profile = iota
	// Writing: the agent's writable set, protected paths excepted.
	Writing
	// helper: Cohort's own programs (Sandbox.Helper); the "directory" is
	// the NUL-separated list of what they may write.
	helper
	// granting: Writing and some files (Sandbox.LauncherGranting); the
	// "directory" is the cwd and the files, NUL-separated.
	granting
)

func (p Profile) String() string {
	if p == Writing || p == granting {
		return "writing"
	}
	return "read-only"
}

// Config configures a session's sandbox. Paths are absolute.
type Config struct {
	// SessionID names the private temporary directory.
	SessionID string
	// Dirs are more working directories every agent may write
	// (additionalDirectories, --add-dir), besides its own cwd.
	Dirs []string
	// AllowWrite are the sandbox.allowWrite roots; Problems lists those
	// that do not exist, which are left out.
	AllowWrite []string
	// AllowUnixSockets are the sandbox.allowUnixSockets entries.
	AllowUnixSockets []string
	// DenyNetwork is sandbox.network "deny".
	DenyNetwork bool
	// Protected are the scripts configured hooks run: the directory of
	// each (with what the script sources there) stays read-only inside
	// writable directories. The sandbox computes the rest of its protected
	// paths (git dirs, settings, .mcp.json) from the file system itself,
	// not from the permission layer's list.
	Protected []string
	// Disposable are working directories whose repository exists only for
	// the session and is thrown away after it (a remote job's clone): no
	// one runs git there later but Cohort, whose git runs none of the
	// repository's programs, so its git dir stays writable (hooks and
	// config aside) and agents can commit there.
	Disposable []string
	// DenyRead are the paths Read deny rules cover when the sandbox is
	// set up (permission.Checker.ReadDenials); they are hidden.
	DenyRead []string
	// DenyReadUncovered says what hiding DenyRead leaves readable (a
	// pattern's later matches, paths that do not exist yet); every Report
	// lists it as not enforced.
	DenyReadUncovered []string
	// DenyReadIn, when set, gives the paths Read deny rules cover for an
	// agent working in cwd (a worktree made after the session started
	// holds its own copy of what DenyRead names in the main checkout);
	// they are hidden in that cwd's policy too. It is called once per
	// policy, when the policy is set up (and again after DenyReadWatch
	// changed).
	DenyReadIn func(cwd string) []string
	// DenyReadWatch is a directory whose entries change what DenyReadIn
	// gives (the agents' worktrees, each a copy of the project): every
	// policy is set up again once an entry appears or goes.
	DenyReadWatch string
	// Secrets are Cohort's own private files and directories (the remote
	// agents' signing key, teammates' configurations, which carry the
	// model key): hidden from commands in every profile, whatever the
	// permission rules say. A path that does not exist yet is not hidden,
	// so the caller makes them first.
	Secrets []string
	// Home is the user's home; CacheDir defaults to $XDG_CACHE_HOME or
	// Home/.cache; CohortHome holds the session sockets.
	Home, CacheDir, CohortHome string
	// TrustDir is the user's record of where agents could write
	// (internal/configtrust: $XDG_STATE_HOME/cohort/trust), kept outside
	// every COHORT_HOME: read-only for commands wherever it lies, as the
	// homes are (a path that does not exist is not protected, so the
	// caller makes it first).
	TrustDir string
	// TempRoot is where the private TMPDIR is made: by default the
	// session's temporary directory $COHORT_HOME/tmp/{SessionID} when it
	// exists (swept with it if the session is killed), else os.TempDir().
	TempRoot string
	// Without lists layers to leave out: "landlock", "namespaces",
	// "seccomp", "mounts", "fifos" (commands may make FIFOs and devices
	// in every writable directory), and "dumpable" (Cohort stays dumpable where
	// nothing else keeps commands out of it; see the package doc) — for
	// tests, and COHORT_SANDBOX_DISABLE.
	Without []string
	// Executable is the binary started as the launcher (os.Executable()).
	Executable string
	// Unconfined makes a launcher that confines nothing: its commands run
	// with Cohort's own rights, outside any namespace, with Cohort's
	// TMPDIR; only the other fields' Executable is used. It is for the
	// commands that run outside the sandbox (the sandbox is off, a call
	// with dangerouslyDisableSandbox, sandbox.excludedCommands), so that
	// they too die with the session when Cohort is killed: the launcher is
	// their child subreaper and kills everything left under it when its
	// connection to Cohort closes or Cohort's thread dies.
	Unconfined bool
}

func (c *Config) without(layer string) bool {
	for _, l := range c.Without {
		if l == layer {
			return true
		}
	}
	return false
}

// within reports whether p is dir or inside it (both clean and absolute).
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// realDir resolves a directory's symlinks; ok is false when it does not
// exist or is not a directory.
func realDir(p string) (string, bool) {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", false
	}
	fi, err := os.Stat(r)
	return r, err == nil && fi.IsDir()
}

// Describe renders a report for people: what is enforced, and what not.
func (r *Report) Describe() string {
	var b strings.Builder
	for _, e := range r.Enforced {
		fmt.Fprintf(&b, "  enforced: %s\n", e)
	}
	for _, e := range r.NotEnforced {
		fmt.Fprintf(&b, "  NOT enforced: %s\n", e)
	}
	return b.String()
}
