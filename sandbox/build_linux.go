//go:build linux

package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// policy builds the policy of commands run by an agent whose working
// directory is cwd.
func (s *Sandbox) policy(cwd string) *Policy {
	if s.cfg.Unconfined {
		return &Policy{Unconfined: true}
	}
	p := &Policy{DenyNetwork: s.cfg.DenyNetwork, UnixSockets: len(s.cfg.AllowUnixSockets) > 0}
	for _, l := range s.cfg.Without {
		if l == "landlock" || l == "seccomp" || l == "mounts" {
			p.Without = append(p.Without, l)
		}
	}
	var work []string // working directories: settings dirs inside are protected
	add := func(list *[]string, path string) {
		if path != "" && !slices.Contains(*list, path) {
			*list = append(*list, path)
		}
	}
	if r, ok := realDir(cwd); ok {
		add(&work, r)
	}
	for _, d := range s.cfg.Dirs {
		if r, ok := realDir(d); ok {
			add(&work, r)
		}
	}
	for _, w := range work {
		add(&p.Writable, w)
	}
	for _, w := range s.writableExtras {
		add(&p.Writable, w)
	}
	s.gitDirs(cwd, p)
	for _, w := range work {
		for _, name := range []string{".cohort", ".claude"} {
			d := filepath.Join(w, name)
			// A settings directory that does not exist yet is made, empty
			// (git does not see empty directories), so it can be
			// protected: else a command could create settings that run
			// hooks outside the sandbox in the next session.
			if _, err := os.Lstat(d); os.IsNotExist(err) {
				_ = os.Mkdir(d, 0o755)
			}
			if r, ok := realDir(d); ok && within(r, w) {
				add(&p.ReadOnly, r)
			}
		}
	}
	for _, f := range s.cfg.Protected {
		if r, err := filepath.EvalSymlinks(f); err == nil && s.inWritable(p, r) {
			add(&p.ReadOnly, r)
		}
	}
	for _, w := range p.Writable {
		for _, ro := range p.ReadOnly {
			if w != ro && within(w, ro) {
				add(&p.ReWritable, w)
			}
		}
	}
	for _, d := range s.cfg.DenyRead {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			add(&p.Hidden, r)
		}
	}
	if p.UnixSockets {
		p.HiddenSockets = s.socketPlaces()
	}
	return p
}

// hideIn adds to p what Read deny rules cover under cwd besides
// Config.DenyRead (Config.DenyReadIn): for the policy that runs commands,
// not for the listings Writable makes.
func (s *Sandbox) hideIn(p *Policy, cwd string) {
	if s.cfg.DenyReadIn == nil || p.Unconfined {
		return
	}
	for _, d := range s.cfg.DenyReadIn(cwd) {
		if r, err := filepath.EvalSymlinks(d); err == nil && !slices.Contains(p.Hidden, r) {
			p.Hidden = append(p.Hidden, r)
		}
	}
}

func (s *Sandbox) inWritable(p *Policy, path string) bool {
	for _, w := range p.Writable {
		if within(path, w) {
			return true
		}
	}
	return false
}

// gitDirs lets commands commit in cwd's repository: the git dir is
// writable where git writes on a commit, and its hooks and config are
// protected where they would otherwise be writable.
func (s *Sandbox) gitDirs(cwd string, p *Policy) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", "rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir")
	cmd.Dir = cwd
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
	out, err := cmd.Output()
	if err != nil {
		return // not a repository, or no git
	}
	lines := strings.Fields(string(out))
	if len(lines) != 2 {
		return
	}
	gitDir, okG := realDir(lines[0])
	common, okC := realDir(lines[1])
	if !okG || !okC {
		return
	}
	add := func(list *[]string, path string) {
		if _, err := os.Lstat(path); err == nil && !slices.Contains(*list, path) {
			*list = append(*list, path)
		}
	}
	if !s.inWritable(p, gitDir) {
		add(&p.Writable, gitDir) // the main repository's .git, or worktrees/<slug>
		if gitDir != common {
			for _, d := range []string{"objects", "refs", "logs"} {
				add(&p.Writable, filepath.Join(common, d))
			}
		}
	}
	// Files that run or steer code outside the sandbox, wherever a rule
	// above made them writable.
	for _, f := range []string{filepath.Join(common, "hooks"), filepath.Join(common, "config"),
		filepath.Join(gitDir, "config.worktree"), filepath.Join(common, "config.worktree")} {
		if s.inWritable(p, f) {
			add(&p.ReadOnly, f)
		}
	}
}

// socketPlaces are the directories and sockets hidden when Unix sockets
// are allowed: tmux servers, Cohort sessions, the user's runtime directory
// and docker; those holding an allowed socket are left visible.
func (s *Sandbox) socketPlaces() []string {
	uid := os.Getuid()
	tmux := os.Getenv("TMUX_TMPDIR")
	if tmux == "" {
		tmux = "/tmp"
	}
	cands := []string{filepath.Join(tmux, "tmux-"+itoa(uid)), filepath.Join("/tmp", "tmux-"+itoa(uid)),
		filepath.Join("/run/user", itoa(uid)), "/var/run/docker.sock", "/run/docker.sock"}
	if s.cfg.CohortHome != "" {
		cands = append(cands, filepath.Join(s.cfg.CohortHome, "sessions"))
	}
	if t := os.Getenv("TMUX"); t != "" {
		cands = append(cands, filepath.Dir(strings.SplitN(t, ",", 2)[0]))
	}
	var out []string
	for _, c := range cands {
		r, err := filepath.EvalSymlinks(c)
		if err != nil || slices.Contains(out, r) {
			continue
		}
		keep := true
		for _, a := range s.cfg.AllowUnixSockets {
			if ar, err := filepath.EvalSymlinks(a); err == nil && within(ar, r) {
				keep = false
			}
		}
		if keep {
			out = append(out, r)
		}
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }
