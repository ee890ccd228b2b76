// Package npmtest installs the pinned npm packages that the real-client
// tests drive (the Claude Agent SDK, Claude Code, the MCP reference
// server), once per machine, into a cache the tests share:
//
//	dir := npmtest.Install(t, "@anthropic-ai/claude-agent-sdk@0.3.337")
//	// dir/node_modules/@anthropic-ai/claude-agent-sdk
//
// The cache is $COHORT_NPM_CACHE, else $XDG_CACHE_HOME/cohort/npm, else
// ~/.cache/cohort/npm; each set of packages gets its own directory, named
// after the sorted specs, and a file lock, so test binaries running at once
// install it once. A finished install is marked by a stamp file written
// last, so an install cut short is redone, never half-used.
//
// Where npm (or node) is not on PATH the test is skipped with a loud
// message saying what did not run: the README's test command must pass on
// a machine without Node. Everywhere else a failed install fails the test,
// since a skip there would count a test that never ran as passing.
package npmtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cohort-dev/cohort/internal/filelock"
)

// installTimeout bounds one npm install (the Claude Code and Agent SDK
// packages are a few hundred megabytes).
const installTimeout = 10 * time.Minute

// Node returns node's path, or skips t loudly when Node is absent.
func Node(t testing.TB) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		skipLoudly(t, "node")
	}
	return node
}

// Install makes sure the packages (npm specs with exact versions,
// "name@1.2.3") are installed and returns the directory that holds their
// node_modules. It skips t loudly when npm is absent and fails it when the
// install fails.
func Install(t testing.TB, specs ...string) string {
	t.Helper()
	Node(t)
	npm, err := exec.LookPath("npm")
	if err != nil {
		skipLoudly(t, "npm")
	}
	dir, err := install(npm, specs)
	if err != nil {
		t.Fatalf("npmtest: %v", err)
	}
	return dir
}

func skipLoudly(t testing.TB, what string) {
	t.Helper()
	msg := fmt.Sprintf("SKIPPED: %s is not on PATH, so %s, which drives a real npm client, did not run. Install Node.js and npm to run it.", what, t.Name())
	fmt.Fprintln(os.Stderr, "npmtest: "+msg)
	t.Skip(msg)
}

// cacheRoot is where the installs live.
func cacheRoot() (string, error) {
	if d := os.Getenv("COHORT_NPM_CACHE"); d != "" {
		return d, nil
	}
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("no cache directory: set XDG_CACHE_HOME or COHORT_NPM_CACHE (%w)", err)
		}
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "cohort", "npm"), nil
}

func install(npm string, specs []string) (string, error) {
	for _, s := range specs {
		at := strings.LastIndex(s, "@")
		if at <= 0 || at == len(s)-1 {
			return "", fmt.Errorf("package %q has no pinned version: write name@x.y.z", s)
		}
	}
	sorted := slices.Sorted(slices.Values(specs))
	sum := sha256.Sum256([]byte(strings.Join(sorted, "\n")))
	root, err := cacheRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, hex.EncodeToString(sum[:8]))
	stamp := filepath.Join(dir, ".cohort-installed")
	if _, err := os.Stat(stamp); err == nil {
		return dir, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), installTimeout)
	defer cancel()
	lk, err := filelock.Lock(ctx, filepath.Join(dir, ".lock"), filelock.Options{Create: true})
	if err != nil {
		return "", fmt.Errorf("lock %s: %w", dir, err)
	}
	defer lk.Unlock()
	if _, err := os.Stat(stamp); err == nil {
		return dir, nil // another test binary installed it while we waited
	}
	pkg := `{"name":"cohort-npmtest","private":true,"description":"` + strings.Join(sorted, " ") + `"}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(pkg), 0o644); err != nil {
		return "", err
	}
	args := append([]string{"install", "--no-audit", "--no-fund", "--no-save", "--loglevel=error"}, sorted...)
	cmd := exec.CommandContext(ctx, npm, args...)
	cmd.Dir = dir
	cmd.WaitDelay = 10 * time.Second
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm install %s in %s: %v\n%s", strings.Join(sorted, " "), dir, err, out)
	}
	if err := os.WriteFile(stamp, []byte(strings.Join(sorted, "\n")+"\n"), 0o644); err != nil {
		return "", err
	}
	return dir, nil
}
