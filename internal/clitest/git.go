package clitest

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cohort-dev/cohort/llm/fakeapi"
)

// GitRepo turns the harness's project directory into a git repository
// with one commit holding files, and gives the CLI a hermetic git
// environment (no global or system config, an identity, HOME elsewhere).
func GitRepo(t *testing.T, h *Harness, files map[string]string) {
	t.Helper()
	HermeticGit(h)
	h.Git("init", "--quiet", "--initial-branch=main")
	for name, content := range files {
		h.Write(name, content)
	}
	h.Git("add", ".")
	h.Git("commit", "--quiet", "-m", "start")
}

// HermeticGit gives the CLI's git an identity, no global or system
// config, and no repository above the project's directory.
func HermeticGit(h *Harness) {
	for k, v := range map[string]string{
		"GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com",
		"GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.com",
		"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.DevNull,
		"GIT_CEILING_DIRECTORIES": filepath.Dir(h.Dir),
	} {
		h.Vars[k] = v
	}
}

// Git runs git in the project directory with the harness environment.
func (h *Harness) Git(args ...string) string {
	h.T.Helper()
	out, err := h.GitErr(args...)
	if err != nil {
		h.T.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// GitErr runs git in the project directory and returns its output and
// error.
func (h *Harness) GitErr(args ...string) (string, error) {
	cmd := exec.CommandContext(h.T.Context(), "git", args...)
	cmd.Dir, cmd.Env = h.Dir, h.Environ()
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

var systemCwd = regexp.MustCompile(`Working directory: (\S+)`)

// AgentCwd is the working directory a request's system prompt states.
func AgentCwd(r *fakeapi.Request) string {
	if m := systemCwd.FindStringSubmatch(r.SystemText()); m != nil {
		return m[1]
	}
	return ""
}

// CommitCmd commits everything in the agent's worktree with an identity
// given on the command line (Bash runs with the test process's
// environment, not the harness's).
func CommitCmd(msg string) string {
	return "git add -A && GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 git -c user.name=Agent -c user.email=agent@example.com -c commit.gpgsign=false -c core.hooksPath=/dev/null commit -q -m '" + msg + "'"
}
