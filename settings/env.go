package settings

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cohort-dev/cohort/internal/configtrust"
)

// Env holds the facts from the process environment that decide which files
// are read. Tests build one by hand so nothing depends on the developer's
// real home directory.
type Env struct {
	// Home is the user's home directory; "~" in paths and ~/.claude resolve
	// against it.
	Home string
	// CohortHome is $COHORT_HOME (default Home/.cohort).
	CohortHome string
	// Cwd is the absolute directory the session started in.
	Cwd string
	// ClaudeCompat makes Load read ~/.claude and .claude files too.
	ClaudeCompat bool
	// Scopes, when not nil, are the only file scopes Load reads (user,
	// project, local: --setting-sources); the command line's documents are
	// added whatever it says.
	Scopes []Scope
	// Trust, when set, is the record of where agents' commands could
	// write: a settings file there is obeyed only as approved (see
	// "Files an agent could have written" in the package doc).
	Trust *configtrust.Book
}

// NewEnv builds an Env from environment lookups (HOME, COHORT_HOME,
// COHORT_CLAUDE_COMPAT) and the working directory cwd. getenv is usually
// os.Getenv.
func NewEnv(getenv func(string) string, cwd string) (Env, error) {
	if !filepath.IsAbs(cwd) {
		return Env{}, fmt.Errorf("settings: working directory %q is not absolute", cwd)
	}
	home := getenv("HOME")
	if home == "" {
		return Env{}, errors.New("settings: HOME is not set; set it to your home directory")
	}
	if !filepath.IsAbs(home) {
		return Env{}, fmt.Errorf("settings: HOME=%q is not an absolute path", home)
	}
	ch := getenv("COHORT_HOME")
	if ch == "" {
		ch = filepath.Join(home, ".cohort")
	} else if !filepath.IsAbs(ch) {
		return Env{}, fmt.Errorf("settings: COHORT_HOME=%q is not an absolute path", ch)
	}
	return Env{
		Home:         filepath.Clean(home),
		CohortHome:   filepath.Clean(ch),
		Cwd:          filepath.Clean(cwd),
		ClaudeCompat: compatOn(getenv("COHORT_CLAUDE_COMPAT")),
	}, nil
}

// FromOS builds an Env from the real process environment.
func FromOS() (Env, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return Env{}, fmt.Errorf("settings: working directory: %w", err)
	}
	return NewEnv(os.Getenv, cwd)
}

func compatOn(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "0", "false", "off", "no":
		return false
	}
	return true
}

// ProjectRoot returns the nearest ancestor of Cwd (Cwd included) that holds
// a .git entry (a directory, or the file a git worktree has), or Cwd when
// there is none. A .git in Home counts only when Cwd is Home: a dotfiles
// repository is not the project of every directory below it.
func (e Env) ProjectRoot() string {
	dir := e.Cwd
	for {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			if dir == e.Home && e.Cwd != e.Home {
				// A dotfiles repository in the home directory is not the
				// project of every directory below it.
				return e.Cwd
			}
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return e.Cwd
		}
		dir = parent
	}
}

// projectDirs returns the directories project files are read from, lowest
// precedence first.
func (e Env) projectDirs() []string {
	root := e.ProjectRoot()
	if root == e.Cwd {
		return []string{root}
	}
	return []string{root, e.Cwd}
}
