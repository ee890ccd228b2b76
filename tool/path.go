package tool

import (
	"fmt"
	"os"
	"path/filepath"
)

// AbsPath returns p, the value of the input field named field, cleaned
// (filepath.Clean): the form a tool works with and Env.Files is keyed by.
// Like Claude Code's, the tools that take a file's path want it absolute;
// an empty or relative p is a Failure, and for a relative one the message
// shows the absolute path it would have meant in the agent's working
// directory, so the model can retry at once. Guessing instead would hide
// which file was touched.
func AbsPath(env *Env, field, p string) (string, error) {
	if p == "" {
		return "", Failf("%s is empty; pass the absolute path of the file", field)
	}
	if !filepath.IsAbs(p) {
		hint := ""
		if env != nil && env.Cwd != "" {
			hint = fmt.Sprintf(" (relative to the working directory that would be %q)", filepath.Join(env.Cwd, p))
		}
		return "", Failf("%s must be an absolute path; got %q%s", field, p, hint)
	}
	return filepath.Clean(p), nil
}

// ResolvePath returns p resolved against the agent's working directory
// (WorkDir) and cleaned; an empty p is the working directory itself. It is
// for optional path fields that default to where the agent is, such as
// Glob's and Grep's path.
func ResolvePath(env *Env, p string) (string, error) {
	if filepath.IsAbs(p) {
		return filepath.Clean(p), nil
	}
	wd, err := env.WorkDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(wd, p), nil
}

// WorkDir returns the directory the calling agent works in: its Cwd, or
// the process's working directory for an Env without one (e may be nil).
func (e *Env) WorkDir() (string, error) {
	if e != nil && e.Cwd != "" {
		return e.Cwd, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("no working directory: %w", err)
	}
	return wd, nil
}
