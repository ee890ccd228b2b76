//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cohort-dev/cohort/internal/heldir"
)

// policyFor builds the policy of profile prof for commands run by an
// agent whose working directory is cwd.
func (s *Sandbox) policyFor(cwd string, prof Profile) *Policy {
	switch {
	case prof == Writing || s.cfg.Unconfined:
		return s.policy(cwd)
	case prof == granting:
		dir, files := grantedKey(cwd)
		p := s.policy(dir)
		p.WritableFiles = files
		return p
	case prof == helper:
		// Cohort's own programs: no TMPDIR (the model's FIFOs are there),
		// and they read nothing there or in /dev (package doc, "Cohort's
		// own programs").
		p := s.readOnlyPolicy()
		p.Writable, p.Specials = nil, nil
		p.Unreadable = s.unreadable()
		p.Readable, p.ReadAncestors = allBut("/", p.Unreadable)
		p.DataLimit = helperDataLimit
		if cwd == "" {
			return p
		}
		p.ReadOnlyFS = false
		p.Writable = strings.Split(cwd, "\x00")
		// Cohort's own git on a private store (the checkpoints) sees it.
		p.Secrets = slices.DeleteFunc(p.Secrets, func(sec string) bool {
			return slices.ContainsFunc(p.Writable, func(w string) bool { return within(w, sec) || within(sec, w) })
		})
		return p
	}
	return s.readOnlyPolicy()
}

// readOnlyPolicy is the read-only profile, the same for every agent:
// nothing writable but the private TMPDIR (and the device files, which
// the Landlock rules always allow), no network, no Unix sockets, and the
// paths Read deny rules cover hidden as in the writing profile.
func (s *Sandbox) readOnlyPolicy() *Policy {
	p := &Policy{ReadOnlyFS: true, DenyNetwork: true, Writable: []string{s.tmp}, Specials: []string{s.tmp}}
	for _, l := range s.cfg.Without {
		if l == "landlock" || l == "seccomp" || l == "mounts" || l == "fifos" {
			p.Without = append(p.Without, l)
		}
	}
	for _, d := range s.cfg.DenyRead {
		if r, err := filepath.EvalSymlinks(d); err == nil && !slices.Contains(p.Hidden, r) {
			p.Hidden = append(p.Hidden, r)
		}
	}
	s.addSecrets(p)
	return p
}

// addSecrets hides Cohort's private paths (Config.Secrets) in p.
func (s *Sandbox) addSecrets(p *Policy) {
	for _, d := range s.cfg.Secrets {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			addOnce(&p.Secrets, r)
		}
	}
}

// policy builds the writing policy of commands run by an agent whose
// working directory is cwd: its writable set, and inside it the protected
// paths the kernel keeps (protect_linux.go).
func (s *Sandbox) policy(cwd string) *Policy {
	if s.cfg.Unconfined {
		p := &Policy{Unconfined: true}
		if s.cfg.without("dumpable") {
			p.Without = []string{"dumpable"}
		}
		return p
	}
	p := &Policy{DenyNetwork: s.cfg.DenyNetwork, UnixSockets: len(s.cfg.AllowUnixSockets) > 0, Specials: []string{s.tmp}}
	for _, l := range s.cfg.Without {
		if l == "landlock" || l == "seccomp" || l == "mounts" || l == "fifos" {
			p.Without = append(p.Without, l)
		}
	}
	var work []string // working directories: their settings and git dirs are protected
	if d := heldir.Lookup(cwd); d != nil {
		// A held working directory is where it was checked, never where
		// its name leads now: the launcher confines to that directory or
		// to nothing.
		dev, ino := d.Identity()
		p.Pinned = append(p.Pinned, Pin{Path: d.Path(), Dev: dev, Ino: ino})
		addOnce(&work, d.Path())
	} else if r, ok := realDir(cwd); ok {
		addOnce(&work, r)
	}
	for _, d := range s.cfg.Dirs {
		if r, ok := realDir(d); ok {
			addOnce(&work, r)
		}
	}
	for _, w := range work {
		addOnce(&p.Writable, w)
	}
	for _, w := range append(slices.Clip(s.writableExtras), s.allowedDirs()...) {
		addOnce(&p.Writable, w)
	}
	pr := &protection{p: p}
	for _, d := range s.cfg.Disposable {
		if r, ok := realDir(d); ok {
			pr.disposable = append(pr.disposable, r)
		}
	}
	scripts := s.cfg.Protected
	if lay, linked := pr.linkedGitDir(cwd); linked {
		scripts = append(slices.Clip(scripts), inWorktree(scripts, lay)...)
	}
	for _, w := range work {
		pr.root(w)
	}
	pr.hookScripts(scripts)
	pr.userHomes(s.home(), s.cfg.CohortHome, s.cfg.TrustDir)
	pr.parents()
	for _, w := range p.Writable {
		for _, ro := range p.ReadOnly {
			if w != ro && within(w, ro) {
				addOnce(&p.ReWritable, w)
			}
		}
	}
	for _, d := range s.cfg.DenyRead {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			addOnce(&p.Hidden, r)
		}
	}
	s.addSecrets(p)
	if p.UnixSockets {
		p.HiddenSockets = s.socketPlaces()
	}
	return p
}

// addOnce appends path to list unless it is empty or there already.
func addOnce(list *[]string, path string) {
	if path != "" && !slices.Contains(*list, path) {
		*list = append(*list, path)
	}
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
	for _, d := range heldStore(cwd, p.Hidden) {
		addOnce(&p.Hidden, d)
	}
	// What a hidden directory holds cannot be written either (its empty
	// read-only cover is all commands see): a writable path below one
	// would name nothing for Landlock, and the command would not run.
	under := func(path string) bool {
		return slices.ContainsFunc(p.Hidden, func(h string) bool { return path == h || within(path, h) })
	}
	p.Writable = slices.DeleteFunc(p.Writable, under)
	p.ReWritable = slices.DeleteFunc(p.ReWritable, under)
	p.WritableFiles = slices.DeleteFunc(p.WritableFiles, under)
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
		// Sessions' message sockets, background sessions' control
		// sockets (which answer permission prompts) and the teammates'
		// tmux servers.
		for _, d := range []string{"sessions", "bg", "tmux"} {
			cands = append(cands, filepath.Join(s.cfg.CohortHome, d))
		}
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
