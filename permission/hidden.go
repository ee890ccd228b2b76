package permission

import (
	"path/filepath"
	"slices"
	"strings"
)

// HideFromReads makes every read below dirs denied to the tools that
// consult DeniedRead (the file tools, Glob, LS, Grep's results), in this
// checker and every checker sharing its rules: the session's git
// directory, once the sandbox hides it from commands because its history
// holds a denied file.
func (c *Checker) HideFromReads(dirs ...string) { c.hide(&c.sh.hidden, dirs) }

// HideSecrets makes every read below dirs denied to the tools that
// consult DeniedRead, whatever the rules allow — even with no deny rule at
// all: Cohort's private directories (the signing key, teammates' waiting
// configurations, the checkpoint store). The sandbox hides them from
// commands; the file tools run in Cohort itself and need this to do the
// same (an allowed Read of $COHORT_HOME/tmux returned a model key).
func (c *Checker) HideSecrets(dirs ...string) { c.hide(&c.sh.secrets, dirs) }

// hide adds dirs to list (c.sh's, under its lock), each once.
func (c *Checker) hide(list *[]string, dirs []string) {
	c.sh.mu.Lock()
	defer c.sh.mu.Unlock()
	for _, d := range dirs {
		d, ok := hiddenKey(d)
		if ok && !slices.Contains(*list, d) {
			*list = append(*list, d)
		}
	}
}

// ShowToReads undoes HideFromReads for dirs (given as they were to it):
// the session's git directory, hidden while the search of its history
// runs, once the search finds no denied file there.
func (c *Checker) ShowToReads(dirs ...string) {
	c.sh.mu.Lock()
	defer c.sh.mu.Unlock()
	for _, d := range dirs {
		d, ok := hiddenKey(d)
		if !ok {
			continue
		}
		c.sh.hidden = slices.DeleteFunc(slices.Clone(c.sh.hidden), func(h string) bool { return h == d }) // a copy: hiddenRead reads the old one unlocked
	}
}

// hiddenKey is how a HideFromReads directory is kept: absolute, clean,
// its links resolved when it exists; ok is false for a relative path.
func hiddenKey(d string) (string, bool) {
	if !filepath.IsAbs(d) {
		return "", false
	}
	d = filepath.Clean(d)
	if r, err := resolvePath(d); err == nil {
		d = r
	}
	return d, true
}

// hiddenRead reports whether path (as given, and resolved) is below a
// HideFromReads directory.
func (c *Checker) hiddenRead(cwd, path string) bool {
	c.sh.mu.Lock()
	hidden := c.sh.hidden
	c.sh.mu.Unlock()
	return below(cwd, path, hidden)
}

// secretRead reports whether path (as given, and resolved) is below a
// HideSecrets directory.
func (c *Checker) secretRead(cwd, path string) bool {
	c.sh.mu.Lock()
	secrets := c.sh.secrets
	c.sh.mu.Unlock()
	return below(cwd, path, secrets)
}

// below reports whether path, relative to cwd, is one of dirs or below
// one, as given or with its links resolved.
func below(cwd, path string, hidden []string) bool {
	if len(hidden) == 0 {
		return false
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(cwd, path)
	}
	forms := []string{filepath.Clean(path)}
	if r, err := resolvePath(path); err == nil {
		forms = append(forms, r)
	}
	for _, f := range forms {
		for _, h := range hidden {
			if f == h || strings.HasPrefix(f, h+string(filepath.Separator)) {
				return true
			}
		}
	}
	return false
}

// DeniesReads reports whether a deny rule covering Read is in force (one
// that did not parse included: it denies every read).
func (c *Checker) DeniesReads() bool {
	for _, r := range c.sh.snapshot() {
		if r.Behavior == Deny && r.coversTool("Read") {
			return true
		}
	}
	return false
}
